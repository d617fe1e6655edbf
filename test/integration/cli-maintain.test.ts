// floe maintain as a user runs it (a child process) on an upsert table that many small syncs
// wrote (each sync a data file and DVs on older ones): --dry-run reports and changes nothing;
// the pass compacts, rewrites manifests, expires snapshots and removes an old orphan, and
// DuckDB, PyIceberg and Spark read the model's rows after it; after Spark's expire_snapshots
// (retain_last 1) and the consumer group deleted, the next sync neither re-lands a
// message nor leaves a retired row; a pass never overlaps a sync of the job (its lock); and a
// sync that commits DVs between the compaction's plan and its commit loses none of them; floe run
// makes a pass after a sync once the job's maintenance interval has passed.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Admin } from "@platformatic/kafka";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import { parseJob } from "#src/job/load-job.ts";
import { acquireJobLock } from "#src/runtime/job-lock.ts";
import { jobStateDir } from "#src/runtime/state-paths.ts";
import { type RunRecord, RunStore } from "#src/state/run-store.ts";
import { bootstrapServers, createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { floe } from "../helpers/floe-cli.ts";
import { syncJob } from "../helpers/sync-job.ts";
import {
  modelColumns,
  OffsetCounter,
  produceExactly,
  Random,
  syncWorkspace,
  UpsertModel,
} from "../helpers/sync-model.ts";

const random = new Random(Number(process.env.FLOE_SEED ?? 7));
const ws = syncWorkspace("maintain");
const topic = `maintain${ws.run}_kv`;
const namespace = ws.namespace;
const file = join(ws.dir, "job.yaml");
const yaml = `
name: ${ws.name}
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    consumer_group: floe_${ws.name}
    topic_pattern: ^${topic}$
    security: {protocol: PLAINTEXT}
destination:
  iceberg:
    catalog: {type: rest, uri: ${restCatalog.uri}}
    target_engines: [duckdb, spark]
streams:
  ${topic}: {mode: upsert, dedup_keys: [_kafka_key], table: kv}
maintenance:
  snapshots: {retain_last: 2, max_age: 1s}
  manifests: {max_count: 2}
  orphans: {older_than: 1h}
`;
const job = parseJob(yaml, file);
const counter = new OffsetCounter();
const model = new UpsertModel((m) => m.key, true);
const columns = ["name", "n"];
let readers: Readers;

before(async () => {
  readers = await startReaders();
  await createTopic(topic, 1);
  await writeFile(file, yaml);
});
after(async () => {
  await readers?.close();
  await deleteTopic(topic);
});

async function syncBatch(step: string, size: number): Promise<void> {
  const messages = counter.assign(
    Array.from({ length: size }, () => {
      const k = random.int(40);
      return {
        partition: 0,
        key: `k${k}`,
        value: random.chance(0.1) ? null : { name: `v${k}_${step}`, n: random.int(1e6) },
      };
    }),
  );
  await produceExactly(topic, messages, counter);
  const figures = model.apply(messages);
  const report = await syncJob(job, { stateDir: jobStateDir(ws.stateDir, ws.name) });
  assert.equal(report.status, "complete", step);
  assert.equal(report.messagesRead, figures.messagesRead, `${step}: nothing read twice`);
}

async function assertModel(step: string): Promise<void> {
  for (const engine of readers.engines) {
    const rows = await readers.rows(engine, restTable(namespace, "kv"), {
      columns: modelColumns(columns),
      orderBy: ["_kafka_partition", "_kafka_offset"],
    });
    assert.deepStrictEqual(rows, model.rows(columns), `${step}: ${engine}`);
  }
}

async function deleteGroup(group: string): Promise<void> {
  const admin = new Admin({ clientId: "floe-test-maintain", bootstrapBrokers: [bootstrapServers] });
  try {
    await admin.deleteGroups({ groups: [group] });
  } finally {
    await admin.close();
  }
}

async function loadTable(): Promise<Table> {
  const catalog = await connectRestCatalog({ uri: restCatalog.uri });
  return Table.load(catalog, { namespace: [namespace], name: "kv" });
}

test("floe maintain: dry run, then a pass that compacts, expires and removes orphans; readers and the next sync agree", async () => {
  for (let i = 0; i < 8; i++) await syncBatch(`sync ${i}`, 30);
  await assertModel("before maintenance");
  let table = await loadTable();
  const before = await planFiles(table, currentSnapshot(table.metadata));
  assert.ok(before.dataFiles.size >= 8);
  assert.ok(before.deletionVectors.size > 0);
  const snapshotsBefore = table.metadata.snapshots.length;
  // An old file no metadata names (a crashed writer's), and a young one (a commit in flight).
  const dataDir = `${table.metadata.location}/data`;
  await writeFile(`${dataDir}/crashed-writer.parquet`, "x");
  await writeFile(`${dataDir}/in-flight.parquet`, "x");
  const old = new Date(Date.now() - 2 * 3600 * 1000);
  await utimes(`${dataDir}/crashed-writer.parquet`, old, old);

  const args = ["maintain", "--config", file, "--state-dir", ws.stateDir, "--json"];
  const dry = await floe([...args, "--dry-run"]);
  assert.equal(dry.code, 0, dry.stderr);
  const planned = JSON.parse(dry.stdout);
  assert.equal(planned.dryRun, true);
  const [p] = planned.tables;
  assert.equal(p.table, `${namespace}.kv`);
  assert.equal(p.compaction.dataFiles, before.dataFiles.size);
  assert.equal(p.orphans.files, 1);
  assert.ok(p.snapshots.expired > 0);
  table = await loadTable();
  assert.equal(table.metadata.snapshots.length, snapshotsBefore, "a dry run changes nothing");

  // Two seconds on: every snapshot but the last two is older than max_age.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const done = await floe(args);
  assert.equal(done.code, 0, done.stderr);
  const [r] = JSON.parse(done.stdout).tables;
  assert.equal(r.compaction.dataFiles, before.dataFiles.size);
  assert.equal(r.after.dataFiles, 1);
  assert.equal(r.after.deleteFiles, 0);
  assert.equal(r.orphans.files, 1);
  assert.equal(r.after.snapshots, 2);
  table = await loadTable();
  assert.equal(await table.io.exists(`${dataDir}/crashed-writer.parquet`), false);
  assert.equal(await table.io.exists(`${dataDir}/in-flight.parquet`), true, "a young file is never removed");
  // The current snapshot records floe's position itself.
  assert.ok(currentSnapshot(table.metadata)!.summary["floe.kafka.offsets"]);
  await assertModel("after maintenance");
  // Another engine's expiry down to the current snapshot (the pass's own): floe's position is on it.
  await readers.spark(
    `CALL rest.system.expire_snapshots(table => '${namespace}.kv', older_than => TIMESTAMP '2100-01-01 00:00:00', retain_last => 1)`,
  );
  // And no consumer group offsets to fall back on: the next sync starts from the table alone.
  await deleteGroup(`floe_${ws.name}`);

  // Recorded in history as a maintenance pass.
  const store = RunStore.open(join(ws.stateDir, "floe.db"));
  try {
    const pass = store.lastMaintenance(ws.name);
    assert.equal(pass?.kind, "maintenance");
    assert.equal(pass?.outcome, "complete");
    assert.equal(pass?.maintenance?.[0]?.compaction?.dataFiles, before.dataFiles.size);
  } finally {
    store.close();
  }

  const history = await floe(["history", "--config", file, "--state-dir", ws.stateDir]);
  assert.equal(history.code, 0, history.stderr);
  assert.match(history.stdout, /complete +manual, maintenance/);
  assert.match(history.stdout, new RegExp(`${namespace}\\.kv: ${before.dataFiles.size} data files compacted`));

  // The next syncs read only new messages and retire rows of the compacted file.
  await syncBatch("after maintenance", 30);
  await syncBatch("after maintenance 2", 30);
  await assertModel("syncs after maintenance");

  // The job's lock: a pass never runs beside a sync of the job.
  const lock = await acquireJobLock(jobStateDir(ws.stateDir, ws.name), ws.name, { command: "test sync" });
  try {
    const busy = await floe(args);
    assert.equal(busy.code, 5, busy.stdout);
  } finally {
    lock.release();
  }
});

test("a floe sync that commits DVs on files while the compaction runs loses none of them", async () => {
  const { maintainTable } = await import("#src/pipeline/maintain.ts");
  for (let i = 0; i < 5; i++) await syncBatch(`before the race ${i}`, 30);
  const table = await loadTable();
  let raced = 0;
  const report = await maintainTable(table, job.maintenance, {
    beforeCompactionCommit: async (attempt) => {
      if (attempt > 0) return;
      raced++;
      // Upserts of keys whose rows are in the files being compacted: DVs on them, committed first.
      await syncBatch("during the compaction", 30);
    },
  });
  assert.equal(raced, 1);
  assert.equal(report.compaction?.retries, 1, "the compaction saw the new DVs and started again");
  await assertModel("after the raced compaction");
  await syncBatch("after the raced compaction", 30);
  await assertModel("a sync after the raced compaction");
});

test("floe run makes a maintenance pass after a sync once the job's interval has passed", async () => {
  const scheduled = join(ws.dir, "scheduled.yaml");
  await writeFile(scheduled, `${yaml.replace("maintenance:\n", "maintenance:\n  interval: 1s\n")}schedule: every 1s\n`);
  for (let i = 0; i < 5; i++) await syncBatch(`before floe run ${i}`, 20);
  const since = Date.now();
  const child = spawn(
    process.execPath,
    [
      join(import.meta.dirname, "../../src/cli/main.ts"),
      "run",
      "--config",
      scheduled,
      "--state-dir",
      ws.stateDir,
      "--log-format",
      "json",
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const store = RunStore.open(join(ws.stateDir, "floe.db"));
  try {
    const deadline = Date.now() + 120_000;
    let pass: RunRecord | undefined;
    while (Date.now() < deadline) {
      pass = store.runs(ws.name, { kind: "maintenance", limit: 1 })[0];
      if (pass && pass.startedAt >= since && pass.outcome !== "running") break;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    assert.ok(pass && pass.startedAt >= since, `no maintenance pass by floe run:\n${output}`);
    assert.equal(pass.trigger, "schedule");
    assert.equal(pass.outcome, "complete", JSON.stringify(pass.error));
    // The pass ran after a sync of the same process, under the same lock: a sync precedes it.
    const syncs = store.runs(ws.name, { kind: "sync" }).filter((r) => r.startedAt >= since);
    assert.ok(
      syncs.some((r) => r.startedAt < pass.startedAt && r.endedAt !== null && r.endedAt <= pass.startedAt),
      "a sync ran, and ended, before the pass",
    );
  } finally {
    store.close();
    child.kill("SIGTERM");
  }
  assert.equal(await exited, 0, output);
  await assertModel("after floe run's pass");
});
