// What a day of one-minute upsert syncs does to a table, with and without floe's maintenance.
//
//   node bench/table-health.ts [--hours 24] [--syncs-per-hour 60] [--messages 200] [--keys 20000]
//                              [--tombstones 0.02] [--policies none,default] [--out bench/results]
//   node bench/table-health.ts --combine a.json,b.json [--out DIR]   # table and chart of earlier runs together
//
// Against the local broker (`npm run services -- start kafka`), into the embedded SQLite-catalog
// warehouse in a temp folder: floe writes its metadata itself there, stamped by the simulated
// clock below (a REST catalog stamps metadata-only commits, snapshot expiry's among them, with
// its own clock, and refuses a table whose times then run backwards). Per policy: a fresh topic and namespace; a first sync lands `keys` keys; then
// `hours` x `syncs-per-hour` syncs of `messages` messages each, keys drawn uniformly (so most
// update an existing key), a `tombstones` share of them tombstones that delete their key. Time
// is compressed: the syncs run back to back in one process that keeps its Kafka and catalog
// connections, as `floe run` does. With the `default` policy, the maintenance that `floe run`
// runs after a sync is run after each sync, with the default `maintenance:` settings, its clock
// advanced by the simulated minutes (`maintain` below), so that a policy stated in hours acts as
// it would over a real day.
//
// After each simulated hour it records: live data files, delete files (DVs), manifests of the
// current snapshot, snapshots kept, the size of the current metadata.json, the mean sync time of
// the hour, and DuckDB's `count(*)` time (median of 3, measured from here: the reader RPC adds a
// constant few ms). The count must equal the model's live keys or the bench fails: a figure
// from a table that reads wrong is not a figure. At the end DuckDB, PyIceberg and Spark must each
// read exactly the model's rows (id, seq).
//
// Writes bench/results/table-health.json, table-health.md (one table per policy) and
// table-health.png (the curves, drawn by matplotlib in a venv of its own, bench/chart.ts).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { bootstrapServers, createTopic, produce, type TestMessage } from "../dev/kafka.ts";
import { type Readers, startReaders, type TableRef } from "../dev/readers.ts";
import { planFiles } from "../src/iceberg/scan/plan-files.ts";
import { readManifestList } from "../src/iceberg/scan/read-manifests.ts";
import { currentSnapshot } from "../src/iceberg/spec/table-metadata.ts";
import { Table } from "../src/iceberg/table.ts";
import type { Job } from "../src/job/job.ts";
import { parseJob } from "../src/job/load-job.ts";
import { type JobConnections, withConnections } from "../src/pipeline/connect.ts";
import { runSync } from "../src/pipeline/sync.ts";
import { drawChart } from "./chart.ts";
import { type MaintenancePolicyName, maintainAfterSync } from "./table-health-maintain.ts";

const { values } = parseArgs({
  options: {
    hours: { type: "string", default: "24" },
    "syncs-per-hour": { type: "string", default: "60" },
    messages: { type: "string", default: "200" },
    keys: { type: "string", default: "20000" },
    tombstones: { type: "string", default: "0.02" },
    policies: { type: "string", default: "none,default" },
    out: { type: "string", default: "bench/results" },
    combine: { type: "string" },
  },
});
const hours = Number(values.hours);
const syncsPerHour = Number(values["syncs-per-hour"]);
const messagesPerSync = Number(values.messages);
const keyCount = Number(values.keys);
const tombstoneShare = Number(values.tombstones);
const policies = values.policies.split(",") as MaintenancePolicyName[];
const out = resolve(values.out);

export interface HourFigures {
  hour: number;
  dataFiles: number;
  deleteFiles: number;
  manifests: number;
  snapshots: number;
  metadataBytes: number;
  liveRows: number;
  duckdbCountMs: number;
  meanSyncMs: number;
  maintenanceMs: number;
}

interface PolicyRun {
  policy: MaintenancePolicyName;
  settings: { hours: number; syncsPerHour: number; messagesPerSync: number; keyCount: number; tombstoneShare: number };
  hours: HourFigures[];
}

/** Deterministic draws, so that both policies see the same messages. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The simulated clock: `minute` minutes after `start`, plus the real time spent in this minute (at most 59 s). */
const realNow = Date.now.bind(Date);
const clock = { start: 0, minute: 0, minuteStartedReal: 0 };
Date.now = () => clock.start + clock.minute * 60_000 + Math.min(realNow() - clock.minuteStartedReal, 59_000);
function startClock(): void {
  clock.start = realNow() - (hours + 1) * 3_600_000;
  clock.minute = 0;
  clock.minuteStartedReal = realNow();
}
function nextMinute(): void {
  clock.minute++;
  clock.minuteStartedReal = realNow();
}

// --combine a.json,b.json: no run, the runs of earlier outputs drawn and tabled together.
const runs: PolicyRun[] = [];
if (values.combine) {
  for (const file of values.combine.split(",")) {
    runs.push(...(JSON.parse(readFileSync(file, "utf8")) as { runs: PolicyRun[] }).runs);
  }
} else {
  const readers: Readers = await startReaders();
  try {
    for (const policy of policies) runs.push(await runPolicy(readers, policy));
  } finally {
    await readers.close();
  }
}
mkdirSync(out, { recursive: true });
const environment = {
  nproc: cpus().length,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  loadAverage: loadavg().map((l) => l.toFixed(2)),
  node: process.version,
  settings: { hours, syncsPerHour, messagesPerSync, keyCount, tombstoneShare },
};
writeFileSync(join(out, "table-health.json"), `${JSON.stringify({ environment, runs }, null, 2)}\n`);
writeFileSync(join(out, "table-health.md"), markdown(runs));
await drawChart(join(out, "table-health.png"), {
  title: `${hours} h of one-minute upsert syncs (${messagesPerSync} msgs each, ${keyCount} keys)`,
  x: "simulated hour",
  series: runs.map((r) => ({ name: `policy ${r.policy}`, points: r.hours })),
  panels: [
    { key: "dataFiles", label: "live data files" },
    { key: "deleteFiles", label: "delete files (DVs)" },
    { key: "manifests", label: "manifests" },
    { key: "snapshots", label: "snapshots" },
    { key: "metadataBytes", label: "metadata.json bytes" },
    { key: "duckdbCountMs", label: "DuckDB count(*) ms" },
    { key: "meanSyncMs", label: "mean sync ms" },
  ],
});
console.log(markdown(runs));
console.log(`wrote ${join(out, "table-health.{json,md,png}")}`);

async function runPolicy(readers: Readers, policy: MaintenancePolicyName): Promise<PolicyRun> {
  const dir = mkdtempSync(join(tmpdir(), `floe-bench-health-${policy}-`));
  const tag = `${policy}_${process.pid}_${Date.now()}`;
  const topic = `floe-bench-health-${tag}`;
  const namespace = `health_${tag}`;
  await createTopic(topic, 2);
  const job = parseJob(
    `
name: health_${tag}
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    topic_pattern: ^${topic}$
destination:
  iceberg:
    namespace: ${namespace}
    catalog: {type: sql, warehouse: ./warehouse}
streams:
  ${topic}: {mode: upsert, table: t, dedup_keys: [_kafka_key]}
`,
    join(dir, "job.yaml"),
  );
  const model = new Map<number, bigint>();
  const draw = random(42);
  let seq = 0n;
  const message = (id: number, tombstone: boolean): TestMessage => {
    seq++;
    if (tombstone) {
      model.delete(id);
      return { key: String(id), value: null as unknown as string };
    }
    model.set(id, seq);
    return { key: String(id), value: JSON.stringify({ id, seq: Number(seq), name: `customer ${id}`, amount: id / 4 }) };
  };
  const hoursOut: HourFigures[] = [];
  const stateDir = join(dir, "state");
  try {
    await withConnections(job, async (connections) => {
      await produce(
        topic,
        Array.from({ length: keyCount }, (_, id) => message(id, false)),
      );
      startClock();
      await sync(job, connections, stateDir);
      for (let hour = 1; hour <= hours; hour++) {
        let syncMs = 0;
        let maintenanceMs = 0;
        for (let s = 0; s < syncsPerHour; s++) {
          const batch: TestMessage[] = [];
          for (let m = 0; m < messagesPerSync; m++) {
            batch.push(message(Math.floor(draw() * keyCount), draw() < tombstoneShare));
          }
          await produce(topic, batch);
          nextMinute();
          const t0 = performance.now();
          await sync(job, connections, stateDir);
          syncMs += performance.now() - t0;
          const t1 = performance.now();
          await maintainAfterSync(policy, job, stateDir);
          maintenanceMs += performance.now() - t1;
        }
        const figures = await measure(readers, connections, namespace, model.size);
        hoursOut.push({ hour, ...figures, meanSyncMs: syncMs / syncsPerHour, maintenanceMs });
        console.log(`policy ${policy} hour ${hour}: ${JSON.stringify(hoursOut.at(-1))}`);
      }
    });
    const expected = [...model].sort(([a], [b]) => a - b).map(([id, s]) => ({ id: BigInt(id), seq: s }));
    const warehouse = join(dir, "warehouse");
    const ref: TableRef = {
      catalog: { type: "sql", uri: join(warehouse, "catalog.db"), warehouse, name: "floe" },
      namespace,
      table: "t",
    };
    await readers.assertRows(ref, expected, { columns: ["id", "seq"], orderBy: ["id"] });
    console.log(`policy ${policy}: DuckDB, PyIceberg and Spark read the model's ${expected.length} rows`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { policy, settings: { hours, syncsPerHour, messagesPerSync, keyCount, tombstoneShare }, hours: hoursOut };
}

async function sync(job: Job, connections: JobConnections, stateDir: string): Promise<void> {
  const report = await runSync(job, connections, { stateDir });
  if (report.status !== "complete") throw new Error(`sync ${report.status}: ${report.readError ?? ""}`);
}

async function measure(readers: Readers, connections: JobConnections, namespace: string, liveKeys: number) {
  const table = await Table.load(connections.catalog, { namespace: [namespace], name: "t" });
  const snapshot = currentSnapshot(table.metadata);
  const files = await planFiles(table, snapshot);
  const manifests = snapshot ? await readManifestList(table, snapshot) : [];
  const metadataBytes = (await table.io.read(table.metadataLocation)).byteLength;
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const [row] = await readers.sql(
      "duckdb",
      `select count(*) as n from iceberg_scan('${table.metadataLocation}')`,
      null,
    );
    times.push(performance.now() - t0);
    if (Number(row!.n) !== liveKeys) {
      throw new Error(`DuckDB counts ${row!.n} rows in ${namespace}.t, the model has ${liveKeys} live keys`);
    }
  }
  return {
    dataFiles: files.dataFiles.size,
    deleteFiles: files.deletionVectors.size,
    manifests: manifests.length,
    snapshots: table.metadata.snapshots.length,
    metadataBytes,
    liveRows: liveKeys,
    duckdbCountMs: times.sort((a, b) => a - b)[1]!,
  };
}

function markdown(all: PolicyRun[]): string {
  const lines: string[] = [];
  for (const run of all) {
    lines.push(`### policy: ${run.policy}`, "");
    lines.push(
      "| hour | data files | delete files | manifests | snapshots | metadata.json KB | DuckDB count ms | mean sync ms | maintenance s |",
      "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    );
    for (const h of run.hours) {
      lines.push(
        `| ${h.hour} | ${h.dataFiles} | ${h.deleteFiles} | ${h.manifests} | ${h.snapshots} | ${(h.metadataBytes / 1024).toFixed(1)} | ${h.duckdbCountMs.toFixed(0)} | ${h.meanSyncMs.toFixed(0)} | ${(h.maintenanceMs / 1000).toFixed(1)} |`,
      );
    }
    lines.push("");
  }
  return `${lines.join("\n")}\n`;
}
