// The logger: JSON lines with the run's id, copied into that run's rows of the run store (info
// and above whatever the terminal's level), and secrets never written, neither as a Secret nor
// under a credential-shaped key.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, test } from "node:test";
import { Secret } from "#src/job/secret.ts";
import { createLogger, RunLogSink } from "#src/runtime/logger.ts";
import { RunStore } from "#src/state/run-store.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-logger-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

test("JSON lines carry the run id; the store gets the run's lines at info and above; secrets are censored", async () => {
  const store = RunStore.open(join(dir, "floe.db"));
  const now = Date.now();
  store.saveRun({
    runId: "r1",
    job: "j",
    trigger: "sync",
    startedAt: now,
    endedAt: null,
    durationMs: null,
    outcome: "running",
    messages: 0,
    bytes: 0,
    deadLetters: 0,
    tables: [],
    error: null,
    pid: 1,
    host: "h",
  });
  const out = capture();
  const sink = new RunLogSink();
  const logger = await createLogger({ level: "warn", format: "json", destination: out.stream, sink });
  sink.route("r1", store);
  const log = logger.child({ runId: "r1", job: "j" });
  log.info({ webhook: new Secret("https://hooks.example/T/B/s3cr3t") }, "info line");
  log.warn({ sasl: { password: "hunter2" }, token: "abc123" }, "warn line");
  logger.info("a line of no run");
  sink.unroute("r1");
  log.error("after the run was unrouted");

  const written = out.lines.map((l) => JSON.parse(l));
  assert.deepEqual(
    written.map((l) => l.msg),
    ["warn line", "after the run was unrouted"],
    "the terminal gets warn and above",
  );
  assert.equal(written[0].runId, "r1");
  assert.deepEqual(written[0].sasl, { password: "***" });
  assert.equal(written[0].token, "***");
  const stored = store.logs("r1");
  assert.deepEqual(
    stored.map((l) => [l.level, l.msg]),
    [
      [30, "info line"],
      [40, "warn line"],
    ],
  );
  assert.equal(stored[0]!.fields.webhook, "***");
  assert.deepEqual(stored[1]!.fields, { job: "j", sasl: { password: "***" }, token: "***" });
  const everything = JSON.stringify([out.lines, stored]);
  for (const secret of ["s3cr3t", "hunter2", "abc123"]) assert.ok(!everything.includes(secret), secret);
  store.close();
});
