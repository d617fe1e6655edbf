// The run store: migrations from an empty file and from each earlier version (a store at
// version 1 with rows keeps them), refusal of a newer store, runs of several jobs in one file,
// log lines in order, abandoning runs left running, and retention by days.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, test } from "node:test";
import { userVersion } from "#src/lib/sqlite.ts";
import { MIGRATIONS, migrate, StoreVersionError } from "#src/state/migrations.ts";
import { type RunRecord, RunStore } from "#src/state/run-store.ts";
import { StateDirError } from "#src/state/state-dir-error.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-run-store-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = () => join(dir, `store${n++}`, "floe.db");

function run(job: string, startedAt: number, overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: `${job}-${startedAt}`,
    job,
    trigger: "schedule",
    startedAt,
    endedAt: startedAt + 10,
    durationMs: 10,
    outcome: "complete",
    messages: 5,
    bytes: 500,
    deadLetters: 0,
    tables: [],
    error: null,
    pid: 1,
    host: "h",
    ...overrides,
  };
}

test("a new store is created in WAL mode at the latest schema version", () => {
  const path = freshPath();
  const store = RunStore.open(path);
  store.close();
  const db = new DatabaseSync(path);
  assert.equal(userVersion(db), MIGRATIONS.length);
  assert.equal((db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode, "wal");
  db.close();
  // Opening again migrates nothing and keeps the version.
  RunStore.open(path).close();
});

test("migrations apply in order from any earlier version, each once, keeping the rows", () => {
  const path = freshPath();
  RunStore.open(path).close();
  const db = new DatabaseSync(path);
  // A later migration on top of version 1, as a future release adds one.
  const next = [...MIGRATIONS, "ALTER TABLE runs ADD COLUMN note TEXT DEFAULT 'none'"];
  db.prepare(
    "INSERT INTO runs (run_id, job, trigger, started_at, outcome, pid, host) VALUES ('r', 'j', 'sync', 1, 'complete', 1, 'h')",
  ).run();
  assert.equal(migrate(db, path, next), MIGRATIONS.length);
  assert.equal(userVersion(db), next.length);
  assert.deepEqual({ ...(db.prepare("SELECT run_id, note FROM runs").get() as object) }, { run_id: "r", note: "none" });
  assert.equal(migrate(db, path, next), next.length, "nothing left to apply");
  // A migration that fails leaves the version it started from.
  assert.throws(() => migrate(db, path, [...next, "CREATE TABLE runs (x)"]), /already exists/);
  assert.equal(userVersion(db), next.length);
  db.close();
});

test("a store of a newer floe is refused, naming its version", () => {
  const path = freshPath();
  RunStore.open(path).close();
  const db = new DatabaseSync(path);
  db.exec(`PRAGMA user_version = ${MIGRATIONS.length + 3}`);
  db.close();
  assert.throws(
    () => RunStore.open(path),
    (error: Error) =>
      error instanceof StoreVersionError && error.message.includes(`schema version ${MIGRATIONS.length + 3}, newer`),
  );
});

test("runs of several jobs in one store: by job, newest first, with the last success and the error", () => {
  const store = RunStore.open(freshPath());
  store.saveRun(run("a", 100));
  store.saveRun(
    run("a", 200, {
      outcome: "failed",
      error: { kind: "connection", retryable: true, name: "KafkaConnectionError", message: "no broker" },
    }),
  );
  store.saveRun(run("b", 150, { outcome: "partial" }));
  assert.deepEqual(store.jobs(), ["a", "b"]);
  assert.deepEqual(
    store.runs("a").map((r) => r.runId),
    ["a-200", "a-100"],
  );
  assert.equal(store.runs("a", { limit: 1 })[0]!.runId, "a-200");
  assert.deepEqual(
    store.runs("a", { before: 200 }).map((r) => r.runId),
    ["a-100"],
  );
  assert.deepEqual(
    store.runs("a", { outcome: "failed" }).map((r) => r.runId),
    ["a-200"],
  );
  assert.deepEqual(store.lastRun("a")!.error, {
    kind: "connection",
    retryable: true,
    name: "KafkaConnectionError",
    message: "no broker",
  });
  assert.equal(store.lastSuccess("a")!.runId, "a-100");
  assert.equal(store.firstRun("a")!.runId, "a-100");
  assert.equal(store.lastSuccess("b")!.runId, "b-150", "a partial run landed what it read");
  // Saving again updates the record.
  store.saveRun(run("b", 150, { outcome: "complete", messages: 9 }));
  assert.equal(store.run("b-150")!.messages, 9);
  assert.equal(store.run("nope"), undefined);
  store.close();
});

test("log lines: in order per run, filtered by level and position", () => {
  const store = RunStore.open(freshPath());
  store.saveRun(run("a", 1));
  store.saveRun(run("a", 2));
  store.appendLog("a-1", 10, 30, "started", { x: 1 });
  store.appendLog("a-2", 11, 30, "other run", {});
  store.appendLog("a-1", 12, 50, "failed", { kind: "kafka" });
  store.appendLog("a-1", 13, 30, "ended", {});
  assert.deepEqual(
    store.logs("a-1").map((l) => [l.seq, l.msg]),
    [
      [1, "started"],
      [2, "failed"],
      [3, "ended"],
    ],
  );
  assert.deepEqual(
    store.logs("a-1", { minLevel: 50 }).map((l) => l.fields),
    [{ kind: "kafka" }],
  );
  assert.deepEqual(
    store.logs("a-1", { afterSeq: 2 }).map((l) => l.msg),
    ["ended"],
  );
  store.close();
});

test("runs left running by a process that ended are marked abandoned, of that job only", () => {
  const store = RunStore.open(freshPath());
  store.saveRun(run("a", 100, { outcome: "running", endedAt: null, durationMs: null }));
  store.saveRun(run("b", 100, { outcome: "running", endedAt: null, durationMs: null }));
  assert.equal(store.abandonRunning("a", 400), 1);
  assert.equal(store.run("a-100")!.outcome, "abandoned");
  assert.equal(store.run("a-100")!.durationMs, 300);
  assert.equal(store.run("b-100")!.outcome, "running");
  store.abandonRun("b-100", 500);
  assert.equal(store.run("b-100")!.outcome, "abandoned");
  store.close();
});

test("retention: ended runs older than the cut-off go with their logs; running ones and other jobs stay", () => {
  const store = RunStore.open(freshPath());
  store.saveRun(run("a", 100));
  store.appendLog("a-100", 100, 30, "old", {});
  store.saveRun(run("a", 200, { outcome: "running", endedAt: null }));
  store.saveRun(run("a", 300));
  store.saveRun(run("b", 100));
  assert.equal(store.prune("a", 250), 1);
  assert.deepEqual(
    store.runs("a").map((r) => r.runId),
    ["a-300", "a-200"],
  );
  assert.deepEqual(store.logs("a-100"), []);
  assert.equal(store.runs("b").length, 1);
  store.close();
});

test("a run store that cannot be opened is a StateDirError naming its path and the way out", () => {
  const file = join(dir, "a-file");
  writeFileSync(file, "");
  const path = join(file, "floe.db");
  assert.throws(
    () => RunStore.open(path),
    (error) =>
      error instanceof StateDirError &&
      error.message.startsWith(`cannot open the run store ${path} `) &&
      error.message.includes("pass --state-dir"),
  );
});
