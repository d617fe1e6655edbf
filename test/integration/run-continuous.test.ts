// `floe run` of a continuous job (schedule: continuous, commit.interval 3s) against the real
// broker, the embedded catalog and the three readers, an upsert table:
//
//   1. a batch produced while the service runs is visible to DuckDB within two commit intervals,
//      and /metrics shows the commit's freshness
//   2. updates produced batch after batch while the service lands them; it is SIGKILLed between
//      writing a round's data files and committing them (a fault point)
//   3. a new process resumes; maintenance is due every 5 s, so its runs end for the passes, which
//      run between commits under the job's lock; more updates land, then SIGTERM: the process
//      commits what it read and exits 0
//
// Then DuckDB, PyIceberg and Spark read exactly the model's rows: one per key, its last value.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { RunStore } from "#src/state/run-store.ts";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { writeJobFile } from "../helpers/job-file.ts";
import { freePort, runsOf, until } from "../helpers/service-process.ts";
import { OffsetCounter, produceExactly, syncWorkspace, UpsertModel } from "../helpers/sync-model.ts";

const repo = join(import.meta.dirname, "..", "..");
const INTERVAL_MS = 3000;
const PARTITIONS = 2;
const KEYS = 300;
const ws = syncWorkspace("run_cont");
const topic = `${ws.name}_t`;
const stateRoot = join(ws.dir, "state");
const storePath = join(stateRoot, "floe.db");
const table = { catalog: ws.catalogRef, namespace: ws.namespace, table: "t" };
const columns = ["id", "v", "_kafka_key", "_kafka_partition", "_kafka_offset"];
const children: ChildProcess[] = [];

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await createTopic(topic, PARTITIONS);
});
after(async () => {
  for (const child of children) child.kill("SIGKILL");
  await readers?.close();
  await deleteTopic(topic).catch(() => {});
});

function floeRun(file: string, metricsPort: number, env: Record<string, string> = {}) {
  const child = spawn(
    process.execPath,
    [
      "src/cli/main.ts",
      "run",
      "--config",
      file,
      "--state-dir",
      stateRoot,
      "--metrics",
      `127.0.0.1:${metricsPort}`,
      "--log-format",
      "json",
    ],
    { cwd: repo, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } },
  );
  children.push(child);
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, output: () => output };
}

/** As quick to notice as the commit interval needs: every 100 ms, for at most 2 minutes. */
const within = (what: string, condition: () => boolean | Promise<boolean>) => until(what, condition, 120_000, 100);

const duckdbRows = () => readers.rows("duckdb", table, { columns, orderBy: ["id"] }).catch(() => []);

test("floe run, continuous: visible within two intervals, a SIGKILL mid-commit, maintenance between runs, SIGTERM", async () => {
  const file = writeJobFile(join(ws.dir, "job.yaml"), {
    name: ws.name,
    kafka: { topic_pattern: `^${topic}$`, max_threads: PARTITIONS },
    iceberg: { catalog: { type: "sql", warehouse: ws.warehouse } },
    streams: { [topic]: { mode: "upsert", table: "t", dedup_keys: ["id"] } },
    schedule: "continuous",
    commit: { interval: `${INTERVAL_MS / 1000}s` },
    maintenance: { interval: "5s" },
  });
  const counter = new OffsetCounter();
  const model = new UpsertModel((m) => String((m.value as { id: number }).id), false);
  let round = 0;
  const updates = async (count: number) => {
    round++;
    const messages = counter.assign(
      Array.from({ length: count }, (_, i) => {
        const id = (round * 37 + i * 7) % KEYS;
        return { partition: id % PARTITIONS, key: `k${id}`, value: { id, v: `r${round}_${i}` } };
      }),
    );
    await produceExactly(topic, messages, counter);
    model.apply(messages);
  };
  const expected = () =>
    model
      .rows(["id", "v"])
      .map(({ _op_type, ...row }) => row)
      .sort((a, b) => Number(a.id) - Number(b.id));

  // 1. Visible within two commit intervals of its produce.
  const metricsPort = await freePort();
  const first = floeRun(file, metricsPort, { FLOE_FAULT_AT: "after-data-files:4", FLOE_FAULT: "crash" });
  await within("the first continuous run starts", () =>
    runsOf(storePath, ws.name).some((r) => r.outcome === "running"),
  );
  const producedAt = Date.now();
  await updates(100);
  await within("batch 1 is visible in DuckDB", async () => (await duckdbRows()).length === expected().length);
  const visibleMs = Date.now() - producedAt;
  assert.ok(visibleMs < 2 * INTERVAL_MS, `visible ${visibleMs} ms after it was produced`);
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const freshness = new RegExp(
    `floe_freshness_seconds\\{job="${ws.name}",table="${ws.namespace}.t",quantile="1"\\} ([\\d.e-]+)`,
  ).exec(metrics);
  assert.ok(freshness, metrics);
  assert.ok(Number(freshness[1]) < (2 * INTERVAL_MS) / 1000, `the oldest message of the commit: ${freshness[1]} s`);

  // 2. Updates while it lands them, until the fault point kills it before its fourth round's commit.
  while (first.child.exitCode === null && first.child.signalCode === null && round < 40) {
    await updates(60);
    await new Promise((resolve) => setTimeout(resolve, 700));
  }
  const killed = await first.exited;
  assert.equal(killed.signal, "SIGKILL", `exited ${killed.code}: ${first.output().slice(-2000)}`);

  // 3. A new process resumes from the tables; runs end for maintenance; then SIGTERM.
  const second = floeRun(file, await freePort());
  for (let i = 0; i < 4; i++) {
    await updates(80);
    await new Promise((resolve) => setTimeout(resolve, 1500));
  }
  const text = (rows: unknown[]) => JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? v.toString() : v));
  await within("the second process lands every update", async () => text(await duckdbRows()) === text(expected()));
  // Read within a few polls, its commit still an interval away when SIGTERM comes: the stop commits it.
  await updates(5);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  second.child.kill("SIGTERM");
  const stopped = await second.exited;
  assert.equal(stopped.code, 0, second.output().slice(-3000));

  const runs = runsOf(storePath, ws.name);
  assert.ok(runs.filter((r) => r.outcome === "complete").length >= 2, "runs end for maintenance and start again");
  assert.ok(!runs.some((r) => r.outcome === "running"), "no run left running");
  const store = RunStore.open(storePath);
  try {
    assert.ok(store.lastMaintenance(ws.name), "a maintenance pass ran between two runs");
  } finally {
    store.close();
  }
  await readers.assertRows(table, expected(), { columns, orderBy: ["id"] });
});
