// End-to-end throughput of one `floe sync` (by default 1M messages of ~150 bytes, in append
// and in upsert mode), against the local development broker (`npm run services -- start kafka`),
// into the embedded SQLite-catalog warehouse in a temp folder; with --warehouse s3, into the S3
// REST fixture's warehouse on MinIO (`npm run services -- start minio iceberg-rest-s3`), with
// MinIO's root keys as the job file's static S3 credentials.
//
//   node bench/sync.ts [--messages 1000000] [--partitions 4] [--threads 4] [--modes append,upsert]
//                      [--runs 1] [--size 150] [--max-messages-per-commit 250000] [--profile <dir>]
//                      [--max-bytes-per-commit 33554432]
//                      [--warehouse local|s3]
//
// Produces `messages` orders-like JSON values of about `size` bytes to a topic named after the
// parameters, once (a topic that already holds exactly that many is reused). One message in ten
// repeats the id of an earlier one, so an upsert sync dedups ~10% of the messages, in the batch
// or against the table. The key is the id, and the partition follows the key, as a producer
// partitioning by key would.
//
// Each run is a fresh child process (its peak RSS is the sync's alone), with the V8 flags that
// `floe sync` runs with (bin/node-flags.js), a fresh warehouse,
// key-index folder and consumer group, so it reads the whole topic. It prints messages/s end to
// end, the time of each stage (plan, read + decode + infer, write + commit, group ack), CPU
// seconds, and peak RSS (process.resourceUsage().maxRSS). --profile <dir> runs the children with
// `node --cpu-prof --cpu-prof-dir <dir>`.
//
// A figure is printed only for a table that reads back right: after each run, DuckDB, PyIceberg
// and Spark (the readers of the integration tests, dev/readers.ts) must each read as
// many rows and distinct ids as the topic holds (append: one row per message; upsert: one per
// id); otherwise the bench fails naming the engine and the counts.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DATA_COMMAND_FLAGS } from "../bin/node-flags.js";
import { bootstrapServers } from "../dev/kafka.ts";
import { type Readers, restS3Table, startReaders, type TableRef } from "../dev/readers.ts";
import { restS3Catalog } from "../dev/services/iceberg-rest-s3.ts";
import { minio } from "../dev/services/minio.ts";
import { DEFAULT_COMMIT } from "../src/job/commit-policy.ts";
import { parseJob } from "../src/job/load-job.ts";
import { withConnections } from "../src/pipeline/connect.ts";
import { runSync } from "../src/pipeline/sync.ts";
import { ensureBenchTopic } from "./bench-topic.ts";
import { order } from "./orders.ts";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "1000000" },
    partitions: { type: "string", default: "4" },
    threads: { type: "string", default: "4" },
    modes: { type: "string", default: "append,upsert" },
    runs: { type: "string", default: "1" },
    size: { type: "string", default: "150" },
    profile: { type: "string" },
    warehouse: { type: "string", default: "local" },
    "max-messages-per-commit": { type: "string", default: String(DEFAULT_COMMIT.maxMessages) },
    "max-bytes-per-commit": { type: "string", default: String(DEFAULT_COMMIT.maxBytes) },
    bootstrap: { type: "string", default: bootstrapServers },
    // Internal: one measured sync in this process, its figures printed as JSON.
    "sync-once": { type: "string" },
  },
});

const bootstrap = values.bootstrap;
const messages = Number(values.messages);
const partitions = Number(values.partitions);
const size = Number(values.size);
const topic = `floe-bench-sync-${messages}m-${partitions}p-${size}b`;

interface Figures {
  mode: string;
  messages: number;
  records: number;
  positionsDeleted: number;
  dataFiles: number;
  seconds: number;
  stages: { plan: number; read: number; write: number; ack: number };
  cpuSeconds: number;
  peakRssMb: number;
  /** Peaks of process.memoryUsage() over the sync, sampled every 50 ms: where the RSS goes. */
  peakMb: { heapUsed: number; heapTotal: number; external: number; arrayBuffers: number };
  /** The run's temp folder (warehouse, state), left for the parent to verify and remove. */
  dir: string;
  table: { namespace: string; name: string };
}

/** The verifying readers, started at the first verification; the expected id count, once. */
let readers: Readers | undefined;
let distinctIds: number | undefined;

if (values["sync-once"] !== undefined) {
  console.log(JSON.stringify(await syncOnce(values["sync-once"] as "append" | "upsert")));
} else {
  await ensureTopic();
  console.log(`topic ${topic}: ${messages} messages of ~${size} bytes in ${partitions} partitions`);
  console.log(
    "mode     run  messages/s  seconds   plan   read+decode  write+commit   ack  CPU s  records  deleted  files  peak RSS (MB)  heap  external  (buffers)",
  );
  for (const mode of values.modes.split(",")) {
    for (let run = 1; run <= Number(values.runs); run++) {
      const profile = values.profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", values.profile];
      const child = spawnSync(
        process.execPath,
        [...process.execArgv, ...DATA_COMMAND_FLAGS, ...profile, import.meta.filename, ...argv(), "--sync-once", mode],
        { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20 },
      );
      if (child.status !== 0) throw new Error(`${mode} sync failed with status ${child.status}`);
      const f = JSON.parse(child.stdout.trim().split("\n").at(-1)!) as Figures;
      try {
        if (f.messages !== messages) throw new Error(`synced ${f.messages} messages, expected ${messages}`);
        await verifyTable(f, run);
      } finally {
        rmSync(f.dir, { recursive: true, force: true });
      }
      const s = f.stages;
      console.log(
        [
          mode.padEnd(7),
          String(run).padStart(4),
          Math.round(f.messages / f.seconds)
            .toLocaleString("en")
            .padStart(11),
          f.seconds.toFixed(2).padStart(8),
          s.plan.toFixed(2).padStart(6),
          s.read.toFixed(2).padStart(13),
          s.write.toFixed(2).padStart(13),
          s.ack.toFixed(2).padStart(5),
          f.cpuSeconds.toFixed(1).padStart(6),
          String(f.records).padStart(8),
          String(f.positionsDeleted).padStart(8),
          String(f.dataFiles).padStart(6),
          f.peakRssMb.toFixed(0).padStart(14),
          f.peakMb.heapUsed.toFixed(0).padStart(5),
          f.peakMb.external.toFixed(0).padStart(9),
          `(${f.peakMb.arrayBuffers.toFixed(0)})`.padStart(10),
        ].join(" "),
      );
    }
  }
  await readers?.close();
}

/** Throws unless DuckDB, PyIceberg and Spark read the rows and distinct ids the topic's messages make. */
async function verifyTable(f: Figures, run: number): Promise<void> {
  distinctIds ??= new Set(Array.from({ length: messages }, (_, n) => orderId(n))).size;
  const expected = { rows: f.mode === "append" ? messages : distinctIds, ids: distinctIds };
  readers ??= await startReaders({ s3: values.warehouse === "s3", sparkDriverMemory: "4g" });
  const warehouse = join(f.dir, "warehouse");
  const ref: TableRef =
    values.warehouse === "s3"
      ? restS3Table(f.table.namespace, f.table.name)
      : {
          catalog: { type: "sql", uri: join(warehouse, "catalog.db"), warehouse, name: "floe" },
          namespace: f.table.namespace,
          table: f.table.name,
        };
  for (const engine of readers.engines) {
    const rows = await readers.rows(engine, ref, { columns: ["id"], orderBy: [] });
    const ids = new Set(rows.map((r) => r.id)).size;
    if (rows.length !== expected.rows || ids !== expected.ids) {
      throw new Error(
        `${f.mode} run ${run}: ${engine} reads ${rows.length} rows with ${ids} distinct ids from ` +
          `${f.table.namespace}.${f.table.name}, expected ${expected.rows} rows with ${expected.ids} ids; ` +
          "the table is wrong, so no figure is printed",
      );
    }
  }
}

function argv(): string[] {
  const passed = [
    "messages",
    "partitions",
    "threads",
    "size",
    "bootstrap",
    "max-messages-per-commit",
    "max-bytes-per-commit",
    "warehouse",
  ] as const;
  return passed.flatMap((name) => [`--${name}`, String(values[name])]);
}

async function syncOnce(mode: "append" | "upsert"): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), "floe-bench-sync-"));
  const name = `bench_${mode}_${process.pid}_${Date.now()}`;
  const destination =
    values.warehouse === "s3"
      ? `catalog: {type: rest, uri: ${restS3Catalog.uri}}
    storage:
      s3: {endpoint: ${minio.endpoint}, region: ${minio.region}, access_key_id: ${minio.rootUser}, secret_access_key: ${minio.rootPassword}}`
      : "catalog: {type: sql, warehouse: ./warehouse}";
  if (!["local", "s3"].includes(values.warehouse)) throw new Error(`--warehouse: local or s3, not ${values.warehouse}`);
  const job = parseJob(
    `
name: ${name}
source:
  kafka:
    bootstrap_servers: [${bootstrap}]
    topic_pattern: ^${topic.replaceAll(".", "\\.")}$
    max_threads: ${values.threads}
destination:
  iceberg:
    ${destination}
commit: {max_messages: ${values["max-messages-per-commit"]}, max_bytes: ${values["max-bytes-per-commit"]}}
streams:
  ${topic}: {mode: ${mode}, table: orders${mode === "upsert" ? ", dedup_keys: [id]" : ""}}
`,
    join(dir, "job.yaml"),
  );
  let ok = false;
  try {
    const started = performance.now();
    const marks = { planned: started, read: started, committed: started };
    const cpuBefore = process.cpuUsage();
    const peak = { heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0 };
    const sample = setInterval(() => {
      const m = process.memoryUsage();
      peak.heapUsed = Math.max(peak.heapUsed, m.heapUsed / 2 ** 20);
      peak.heapTotal = Math.max(peak.heapTotal, m.heapTotal / 2 ** 20);
      peak.external = Math.max(peak.external, m.external / 2 ** 20);
      peak.arrayBuffers = Math.max(peak.arrayBuffers, m.arrayBuffers / 2 ** 20);
    }, 50);
    const report = await withConnections(job, (connections) =>
      runSync(job, connections, {
        stateDir: join(dir, "state"),
        onEvent(event) {
          const now = performance.now();
          if (event.type === "planned") marks.planned = marks.read = now;
          else if (event.type === "partition-progress") marks.read = now;
          else if (event.type === "table-committed") marks.committed = now;
        },
      }),
    );
    const ended = performance.now();
    clearInterval(sample);
    const cpu = process.cpuUsage(cpuBefore);
    if (report.status !== "complete") throw new Error(`sync ${report.status}: ${report.readError}`);
    const table = report.tables[0]!;
    ok = true;
    return {
      mode,
      messages: report.messagesRead,
      records: table.recordsAdded,
      positionsDeleted: table.positionsDeleted,
      dataFiles: table.dataFilesAdded,
      seconds: (ended - started) / 1000,
      stages: {
        plan: (marks.planned - started) / 1000,
        read: (marks.read - marks.planned) / 1000,
        write: (marks.committed - marks.read) / 1000,
        ack: (ended - marks.committed) / 1000,
      },
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      peakMb: peak,
      dir,
      table: { namespace: job.namespace, name: "orders" },
    };
  } finally {
    if (!ok) rmSync(dir, { recursive: true, force: true });
  }
}

function ensureTopic(): Promise<void> {
  return ensureBenchTopic({
    bootstrap,
    topic,
    partitions,
    messages,
    message: (n) => {
      const id = orderId(n);
      return { partition: id % partitions, key: Buffer.from(String(id)), value: order(n, id, size) };
    },
  });
}

/** Message n's order id: its own, or for one message in ten an earlier message's (an update). */
function orderId(n: number): number {
  if (n % 10 !== 9) return n;
  const earlier = Math.floor(n / 2);
  return earlier % 10 === 9 ? earlier - 1 : earlier;
}
