// Replicas of one job (its `cluster:` setting): how throughput and CPU cost per message change
// with the number of `floe run` members landing one topic, against the local broker and the REST
// fixture catalog (`npm run services -- start kafka iceberg-rest`).
//
//   node bench/cluster.ts [--messages 1000000] [--partitions 12] [--members 1,2,3] [--size 150]
//                         [--interval 5s]
//
// The topic (orders-like JSON values of about `size` bytes, bench-topic.ts) is filled once. For
// each member count, a fresh job (so a fresh consumer group and namespace) in continuous mode
// with `cluster:` is started as that many `floe run` processes, each with its own state root;
// the clock runs from their start until the table's current snapshot counts every message. CPU
// seconds are the members' user + system time (/proc/<pid>/stat) at that moment, so process
// start-up and the group join are in both figures. Then the members get SIGTERM and must exit 0.
//
// A figure is printed only for a table that reads back right: DuckDB must count as many rows
// and distinct (partition, offset) pairs as the topic holds.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import { bootstrapServers } from "../dev/kafka.ts";
import { startReaders } from "../dev/readers.ts";
import { restCatalog } from "../dev/services/iceberg-rest.ts";
import { connectRestCatalog } from "../src/iceberg/catalog/rest-catalog.ts";
import { Table } from "../src/iceberg/table.ts";
import { ensureBenchTopic } from "./bench-topic.ts";
import { order } from "./orders.ts";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "1000000" },
    partitions: { type: "string", default: "12" },
    members: { type: "string", default: "1,2,3" },
    size: { type: "string", default: "150" },
    interval: { type: "string", default: "5s" },
  },
});
const messages = Number(values.messages);
const partitions = Number(values.partitions);
const size = Number(values.size);
const topic = `bench_cluster_${messages}_${partitions}_${size}`;
const repo = join(import.meta.dirname, "..");
const CLOCK_TICKS = 100;

await ensureBenchTopic({
  bootstrap: bootstrapServers,
  topic,
  partitions,
  messages,
  message: (n) => ({ partition: n % partitions, key: Buffer.from(String(n)), value: order(n, n, size) }),
});

const catalog = await connectRestCatalog({ uri: restCatalog.uri });
const readers = await startReaders({ engines: ["duckdb"] });
const results: { members: number; seconds: number; cpu: number }[] = [];
try {
  for (const count of values.members.split(",").map(Number)) {
    results.push(await measure(count));
  }
} finally {
  await readers.close();
  await catalog.close();
}
console.log(`\n${messages} messages of ~${size} bytes, ${partitions} partitions, commit.interval ${values.interval}\n`);
console.log("| members | seconds | messages/s | CPU s | CPU s per 1M messages |");
console.log("| ---: | ---: | ---: | ---: | ---: |");
for (const r of results) {
  const perMillion = (r.cpu / messages) * 1e6;
  console.log(
    `| ${r.members} | ${r.seconds.toFixed(1)} | ${Math.round(messages / r.seconds)} | ${r.cpu.toFixed(1)} | ${perMillion.toFixed(1)} |`,
  );
}

async function measure(count: number): Promise<{ members: number; seconds: number; cpu: number }> {
  const dir = mkdtempSync(join(tmpdir(), "floe-bench-cluster-"));
  const name = `bench_cluster_${process.pid}_${count}_${Date.now()}`;
  const file = join(dir, "job.yaml");
  writeFileSync(
    file,
    stringify({
      name,
      source: { kafka: { bootstrap_servers: [bootstrapServers], topic_pattern: `^${topic}$`, max_threads: 4 } },
      destination: { iceberg: { catalog: { type: "rest", uri: restCatalog.uri } } },
      streams: { [topic]: { mode: "append", table: "t" } },
      schedule: "continuous",
      commit: { interval: values.interval },
      cluster: { session_timeout: "10s", heartbeat_interval: "1s" },
      maintenance: { enabled: false },
    }),
  );
  const started = performance.now();
  const children: ChildProcess[] = [];
  for (let i = 0; i < count; i++) {
    const root = join(dir, `state-${i}`);
    mkdirSync(root);
    const child = spawn(
      process.execPath,
      ["src/cli/main.ts", "run", "--config", file, "--state-dir", root, "--log-format", "json", "--log-level", "warn"],
      { cwd: repo, stdio: ["ignore", "ignore", "inherit"] },
    );
    children.push(child);
  }
  try {
    while ((await landed(`${name}_topics`)) < messages) {
      const gone = children.find((c) => c.exitCode !== null);
      if (gone)
        throw new Error(`${count} members: a member exited with ${gone.exitCode} before the table was complete`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = children.reduce((sum, c) => sum + cpuSeconds(c.pid!), 0);
    const exits = children.map((c) => new Promise<number | null>((resolve) => c.on("close", resolve)));
    for (const c of children) c.kill("SIGTERM");
    const codes = await Promise.all(exits);
    if (codes.some((code) => code !== 0)) throw new Error(`${count} members: exit codes ${codes.join(", ")}`);
    const [row] = await readers.sql(
      "duckdb",
      `SELECT count(*) AS n, count(DISTINCT (_kafka_partition, _kafka_offset)) AS d FROM rest."${name}_topics".t`,
    );
    if (Number(row?.n) !== messages || Number(row?.d) !== messages) {
      throw new Error(`${count} members: DuckDB reads ${row?.n} rows, ${row?.d} distinct, of ${messages}`);
    }
    console.log(`${count} member(s): ${seconds.toFixed(1)} s, ${cpu.toFixed(1)} CPU s`);
    return { members: count, seconds, cpu };
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}

async function landed(namespace: string): Promise<number> {
  try {
    const { metadata } = await Table.load(catalog, { namespace: [namespace], name: "t" });
    const current = metadata.snapshots.find((s) => s.snapshotId === metadata.currentSnapshotId);
    return Number(current?.summary["total-records"] ?? 0);
  } catch {
    return 0;
  }
}

/** User + system CPU seconds of a live process, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // After the command: state is field 3; utime and stime are fields 14 and 15.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
