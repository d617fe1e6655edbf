// Freshness of a continuous job: the time from a message's produce timestamp to the moment a
// DuckDB query of its table first returns it, at a steady produce rate.
//
//   node bench/freshness.ts [--rates 1000,50000] [--seconds 60] [--interval 10s] [--partitions 4]
//                           [--size 150] [--out bench/results/freshness.md]
//
// Per rate: a fresh topic and job (append, into the Iceberg REST fixture: `npm run services --
// start kafka iceberg-rest readers`), `floe run --continuous` in a child process with the job's
// commit.interval, and in this process a producer that sends `rate` orders-like messages a
// second for `seconds` (each stamped with its send time) while DuckDB asks the table, again as
// soon as it answered, for the highest offset of each partition. A message is visible at the
// end of the first query whose answer covers its offset: a commit is atomic, and offsets land
// in order within a partition. Once the last message is visible the service gets SIGTERM.
//
// A figure counts only for a table that reads back right: DuckDB, PyIceberg and Spark each
// read as many rows and distinct ids as were produced, and a sample of ids with their fields
// (bench/compare/verify.ts). The report gives p50, p99 and the maximum per rate, floe's own
// floe_freshness_seconds of its last commit, the commits made, the query's own time (the
// resolution of the measurement), and the machine.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ProduceAcks, Producer } from "@platformatic/kafka";
import { bootstrapServers, createTopic, deleteTopic } from "../dev/kafka.ts";
import { type Readers, startReaders, testRestCatalog } from "../dev/readers.ts";
import { restCatalog } from "../dev/services/iceberg-rest.ts";
import { loadTable } from "./compare/catalog.ts";
import { verify } from "./compare/verify.ts";
import type { Expected } from "./compare/workload.ts";
import { order, orderFields } from "./orders.ts";

const { values } = parseArgs({
  options: {
    rates: { type: "string", default: "1000,50000" },
    seconds: { type: "string", default: "60" },
    interval: { type: "string", default: "10s" },
    partitions: { type: "string", default: "4" },
    size: { type: "string", default: "150" },
    out: { type: "string", default: join(import.meta.dirname, "results", "freshness.md") },
  },
});
const seconds = Number(values.seconds);
const partitions = Number(values.partitions);
const size = Number(values.size);
const repo = join(import.meta.dirname, "..");

interface Result {
  rate: number;
  produced: number;
  /** Achieved: messages over the seconds the producer took. */
  producedRate: number;
  p50: number;
  p99: number;
  max: number;
  /** floe's floe_freshness_seconds of the table's last commit, quantile 0.99. */
  floeP99: number | undefined;
  commits: number;
  /** Median time of one DuckDB query: the resolution of "visible". */
  queryMs: number;
  cpuSeconds: number;
}

const results: Result[] = [];
let readers: Readers;
for (const rate of values.rates.split(",").map(Number)) {
  // Readers of their own per rate: DuckDB lists a REST catalog's namespaces when it attaches it,
  // and would not see the namespace the next job creates.
  readers = await startReaders();
  try {
    const result = await measure(rate);
    results.push(result);
    console.log(
      `${rate.toLocaleString("en")} msg/s: ${result.produced.toLocaleString("en")} messages, freshness p50 ${result.p50.toFixed(2)} s, ` +
        `p99 ${result.p99.toFixed(2)} s, max ${result.max.toFixed(2)} s; floe's p99 ${result.floeP99?.toFixed(2)} s; ` +
        `${result.commits} commits; DuckDB query ${result.queryMs.toFixed(0)} ms`,
    );
  } finally {
    await readers.close();
  }
}
writeReport(values.out, results);

async function measure(rate: number): Promise<Result> {
  const run = `${process.pid}_${Date.now()}`;
  const topic = `floe-bench-fresh-${rate}-${run}`;
  const name = `fresh_${rate}_${run}`;
  const namespace = `${name}_topics`;
  const table = `${testRestCatalog.name}.${namespace}.orders`;
  const dir = mkdtempSync(join(tmpdir(), "floe-bench-fresh-"));
  await createTopic(topic, partitions);
  const file = join(dir, "job.yaml");
  writeFileSync(
    file,
    `name: ${name}
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    topic_pattern: ^${topic}$
    max_threads: ${partitions}
destination:
  iceberg:
    catalog: {type: rest, uri: ${restCatalog.uri}}
streams:
  ${topic}: {mode: append, table: orders}
schedule: continuous
commit: {interval: ${values.interval}}
maintenance: {enabled: false}
`,
  );
  const metricsPort = 20_000 + Math.floor(Math.random() * 20_000);
  const service = spawn(
    process.execPath,
    [
      "src/cli/main.ts",
      "run",
      "--config",
      file,
      "--state-dir",
      join(dir, "state"),
      "--metrics",
      `127.0.0.1:${metricsPort}`,
      "--log-format",
      "json",
    ],
    { cwd: repo, stdio: ["ignore", "pipe", "inherit"] },
  );
  let log = "";
  service.stdout!.on("data", (d) => {
    log += d;
  });
  try {
    await until(() => log.includes('"msg":"scheduled: continuous"'), 60_000, "the service to start");

    // The poller: per query, when it answered and the highest offset of each partition.
    const polls: { at: number; offsets: bigint[] }[] = [];
    const queryMs: number[] = [];
    let lastError = "";
    let producing = true;
    let produced = 0;
    const ends = new Array<bigint>(partitions).fill(0n);
    const allVisible = () => polls.at(-1)?.offsets.every((o, p) => o + 1n >= ends[p]!) ?? false;
    const poller = (async () => {
      // DuckDB is asked once the table exists (the first commit creates it), for the same reason.
      while (
        !(await loadTable(namespace, "orders").then(
          () => true,
          () => false,
        ))
      )
        await sleep(20);
      while (producing || !allVisible()) {
        const started = Date.now();
        const offsets = new Array<bigint>(partitions).fill(-1n);
        try {
          const rows = await readers.sql(
            "duckdb",
            `SELECT _kafka_partition AS p, max(_kafka_offset) AS o FROM ${table} GROUP BY 1`,
          );
          for (const row of rows) offsets[Number(row.p)] = BigInt(row.o as bigint);
        } catch (error) {
          // The table does not exist before the first commit.
          lastError = (error as Error).message;
        }
        queryMs.push(Date.now() - started);
        polls.push({ at: Date.now(), offsets });
        if (Date.now() - started < 50) await sleep(50);
      }
    })();

    const cpuBefore = await serviceCpu(service);
    const sent = await produceSteadily(topic, rate, ends);
    produced = sent.count;
    producing = false;
    await Promise.race([
      poller,
      sleep(120_000).then(() => {
        throw new Error(
          `not every message visible 120 s after the last was produced: DuckDB last read ${polls.at(-1)?.offsets.join(",")} ` +
            `of ${ends.map((e) => e - 1n).join(",")} (${lastError.slice(0, 500)}); the service's log ends with ${log.slice(-1500)}`,
        );
      }),
    ]);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const cpuSeconds = (await serviceCpu(service)) - cpuBefore;
    service.kill("SIGTERM");
    await new Promise((resolve) => service.once("close", resolve));

    // Every message's visibility: the first poll that covers its offset.
    const rows = await readers.sql(
      "duckdb",
      `SELECT _kafka_partition AS p, _kafka_offset AS o, epoch_ms(_kafka_timestamp) AS t FROM ${table}`,
    );
    if (rows.length !== produced) throw new Error(`DuckDB reads ${rows.length} rows, ${produced} were produced`);
    const freshness = new Float64Array(rows.length);
    rows.forEach((row, i) => {
      const p = Number(row.p);
      const o = BigInt(row.o as bigint);
      let lo = 0;
      let hi = polls.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (polls[mid]!.offsets[p]! >= o) hi = mid;
        else lo = mid + 1;
      }
      freshness[i] = (polls[lo]!.at - Number(row.t)) / 1000;
    });
    freshness.sort();
    const q = (x: number) => freshness[Math.min(freshness.length - 1, Math.floor(x * freshness.length))]!;

    const expected: Expected = {
      rows: produced,
      ids: produced,
      sample: new Map(spread(produced, 20).map((n) => [n, { latest: orderFields(n), rows: 1 }])),
    };
    const verdict = await verify(readers, namespace, "orders", expected);
    if (!verdict.ok) throw new Error(`the table is wrong, so no figure: ${verdict.reasons.join("; ")}`);
    const floeP99 = /floe_freshness_seconds\{[^}]*quantile="0.99"\} ([\d.e+-]+)/.exec(metrics)?.[1];
    const commits = (log.match(/"msg":"committed /g) ?? []).length;
    return {
      rate,
      produced,
      producedRate: sent.count / sent.seconds,
      p50: q(0.5),
      p99: q(0.99),
      max: freshness[freshness.length - 1]!,
      floeP99: floeP99 === undefined ? undefined : Number(floeP99),
      commits,
      queryMs: [...queryMs].sort((a, b) => a - b)[queryMs.length >> 1] ?? 0,
      cpuSeconds,
    };
  } finally {
    if (service.exitCode === null) service.kill("SIGKILL");
    await deleteTopic(topic).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Sends `rate` messages a second for `seconds`, message n with id n, stamped with its send time. */
async function produceSteadily(
  topic: string,
  rate: number,
  ends: bigint[],
): Promise<{ count: number; seconds: number }> {
  const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
    clientId: "floe-bench-fresh",
    bootstrapBrokers: [bootstrapServers],
    idempotent: true,
  });
  const total = rate * seconds;
  const started = Date.now();
  let n = 0;
  const inflight: Promise<unknown>[] = [];
  try {
    while (n < total) {
      const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * rate));
      if (due > n) {
        const timestamp = BigInt(Date.now());
        const messages = [];
        for (; n < due; n++) {
          const partition = n % partitions;
          messages.push({ topic, partition, key: Buffer.from(String(n)), value: order(n, n, size), timestamp });
          ends[partition] = ends[partition]! + 1n;
        }
        inflight.push(producer.send({ acks: ProduceAcks.ALL, messages }));
        if (inflight.length >= 32) await inflight.shift();
      }
      await sleep(10);
    }
    await Promise.all(inflight);
  } finally {
    await producer.close();
  }
  return { count: n, seconds: (Date.now() - started) / 1000 };
}

/** CPU seconds of the service so far (user + system, from /proc). */
async function serviceCpu(child: ChildProcess): Promise<number> {
  const { readFileSync } = await import("node:fs");
  const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function writeReport(out: string, rs: Result[]): void {
  const versions = `node ${process.version}`;
  const lines = [
    "# Freshness of a continuous job",
    "",
    `\`node bench/freshness.ts --rates ${values.rates} --seconds ${seconds} --interval ${values.interval} --partitions ${partitions} --size ${size}\``,
    "",
    `Machine: ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} at the end; ${versions}; the Iceberg REST fixture; DuckDB through the readers of the tests.`,
    "",
    "From a message's produce timestamp to the end of the first DuckDB query that returns it. Every table was",
    "read back by DuckDB, PyIceberg and Spark (row count, distinct ids, a sample of rows) before its figures counted.",
    "",
    "| rate (msg/s) | achieved | messages | commit.interval | p50 s | p99 s | max s | floe's p99 s (last commit) | commits | floe CPU s per 1M | DuckDB query ms |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rs.map(
      (r) =>
        `| ${r.rate.toLocaleString("en")} | ${Math.round(r.producedRate).toLocaleString("en")} | ${r.produced.toLocaleString("en")} | ${values.interval} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(2)} | ${r.floeP99?.toFixed(2) ?? "-"} | ${r.commits} | ${((r.cpuSeconds / r.produced) * 1e6).toFixed(1)} | ${r.queryMs.toFixed(0)} |`,
    ),
    "",
  ];
  writeFileSync(out, lines.join("\n"));
  console.log(`wrote ${out}`);
}

function spread(n: number, count: number): number[] {
  return Array.from({ length: Math.min(n, count) }, (_, i) => Math.floor((i * n) / Math.min(n, count)));
}

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
