// Commit contention on one table: N members of a job, each landing its own Kafka partition,
// commit to the same Iceberg table every `interval`, as replicas of one job sharing its
// partitions through the consumer group do. Each member is a process of its own with its own
// catalog client; a commit is what a member's sync commits: a data file of `rows` rows and a
// FastAppend whose offset claim (pipeline/offset-claim.ts) requires the parent to hold the
// member's partition where the table held it when the member planned (the table loaded at the
// tick), and records it advanced. Members start at random phases of the interval, as
// independent processes would.
//
//   node bench/commit-contention.ts [--members 1,2,4,8] [--intervals 10s,1s] [--seconds 60]
//                                   [--rows 100] [--out bench/results/commit-contention.md]
//
// Against the Iceberg REST fixture (`npm run services -- start iceberg-rest readers`). Per
// configuration it reports commits per second landed, conflicts (a 409: another member moved
// the table first) and attempts per commit, commit latency (p50, p99, max: from the first attempt
// to the catalog's answer), commits that gave up, and whether members kept their interval. A
// figure counts only for a table that reads back right: DuckDB, PyIceberg and Spark each read
// exactly the rows the members say they committed (count and distinct (member, offset)), and
// the table's recorded offset of every partition is its member's last.
import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { countingCommits } from "../dev/counting-catalog.ts";
import { type Readers, restTable, startReaders } from "../dev/readers.ts";
import { restCatalog } from "../dev/services/iceberg-rest.ts";
import type { TableIdentifier } from "../src/iceberg/catalog/catalog.ts";
import { connectRestCatalog } from "../src/iceberg/catalog/rest-catalog.ts";
import { writeDataFiles } from "../src/iceberg/data-writer.ts";
import { ColumnBatchBuilder } from "../src/iceberg/parquet/column-batch.ts";
import { unpartitioned } from "../src/iceberg/spec/partition-spec.ts";
import { currentSchema } from "../src/iceberg/spec/table-metadata.ts";
import { Table } from "../src/iceberg/table.ts";
import { parseDurationMs } from "../src/job/schema-parts.ts";
import { claimOffsets } from "../src/pipeline/offset-claim.ts";
import { committedPosition, type KafkaPosition } from "../src/pipeline/snapshot-offsets.ts";

const TOPIC = "orders";
const TOPIC_ID = "6f0c3a55-8f7e-4d3b-9a51-3c1f1d2a7b10";
const schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: "member", required: true, type: "int" as const },
    { id: 2, name: "offset", required: true, type: "long" as const },
    { id: 3, name: "note", required: false, type: "string" as const },
  ],
};

interface MemberResult {
  member: number;
  commits: number;
  rows: number;
  /** Attempts per commit that landed. */
  attempts: number[];
  conflicts: number;
  latenciesMs: number[];
  /** Commits that threw (gave up, or a claim refused). */
  failures: string[];
  /** The offset the member's partition was last committed at. */
  lastOffset: string;
  /** How late each commit started against its tick, in ms. */
  lateMs: number[];
}

async function member(index: number, id: TableIdentifier, intervalMs: number, seconds: number, rows: number) {
  const catalog = countingCommits(await connectRestCatalog({ uri: restCatalog.uri, warehouse: restCatalog.warehouse }));
  const result: MemberResult = {
    member: index,
    commits: 0,
    rows: 0,
    attempts: [],
    conflicts: 0,
    latenciesMs: [],
    failures: [],
    lastOffset: "0",
    lateMs: [],
  };
  const table = await Table.load(catalog, id);
  let offset = 0n;
  const phase = Math.random() * intervalMs;
  const start = performance.now();
  for (let tick = 0; ; tick++) {
    const due = start + phase + tick * intervalMs;
    if (due > start + seconds * 1000) break;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
    result.lateMs.push(performance.now() - due);
    const batch = new ColumnBatchBuilder(currentSchema(table.metadata));
    for (let i = 0; i < rows; i++) batch.appendRow({ member: index, offset: offset + BigInt(i), note: `m${index}` });
    const files = await writeDataFiles(table, batch.build());
    // As a sync plans: the table as it is now, whose recorded position this commit claims from.
    await table.refresh();
    const startedFrom: KafkaPosition = committedPosition(table.metadata, table.name);
    let attempts = 0;
    const t0 = performance.now();
    try {
      await claimOffsets(table.newFastAppend().appendFile(...files), {
        table: table.name,
        job: "contention",
        startedFrom,
        read: new Map([[TOPIC, new Map([[index, offset + BigInt(rows)]])]]),
        topicIds: new Map([[TOPIC, TOPIC_ID]]),
      })
        .validate(() => {
          attempts++;
        })
        .commit();
      result.latenciesMs.push(performance.now() - t0);
      result.attempts.push(attempts);
      result.commits++;
      result.rows += rows;
      offset += BigInt(rows);
    } catch (error) {
      result.failures.push((error as Error).message);
      // The files of a failed commit are orphans; the member retries the same offsets at the next tick.
    }
  }
  result.conflicts = catalog.counts.conflicts;
  result.lastOffset = offset.toString();
  await catalog.close();
  return result;
}

if (process.argv[2] === "--member") {
  const [index, namespace, name, intervalMs, seconds, rows] = process.argv.slice(3);
  const result = await member(
    Number(index),
    { namespace: [namespace!], name: name! },
    Number(intervalMs),
    Number(seconds),
    Number(rows),
  );
  process.send!(result, () => process.exit(0));
} else {
  await main();
}

function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function runConfiguration(
  readers: Readers,
  namespace: string,
  members: number,
  intervalMs: number,
  seconds: number,
  rows: number,
) {
  const name = `m${members}_i${intervalMs}`;
  const id = { namespace: [namespace], name };
  const catalog = await connectRestCatalog({ uri: restCatalog.uri, warehouse: restCatalog.warehouse });
  await catalog.createTable(id, { schema, spec: unpartitioned });
  const results = await Promise.all(
    Array.from(
      { length: members },
      (_, i) =>
        new Promise<MemberResult>((resolve, reject) => {
          const child = fork(
            import.meta.filename,
            ["--member", String(i), namespace, name, String(intervalMs), String(seconds), String(rows)],
            { stdio: ["ignore", "inherit", "inherit", "ipc"] },
          );
          let result: MemberResult | undefined;
          child.on("message", (m) => {
            result = m as MemberResult;
          });
          child.on("exit", (code) => (result ? resolve(result) : reject(new Error(`member ${i} exited ${code}`))));
        }),
    ),
  );

  // Read back: every engine reads exactly the rows the members committed, once each.
  const committedRows = results.reduce((n, r) => n + r.rows, 0);
  const ref = restTable(namespace, name);
  for (const engine of readers.engines) {
    const read = await readers.rows(engine, ref, { columns: ["member", "offset"] });
    const distinct = new Set(read.map((r) => `${r.member}/${r.offset}`));
    if (read.length !== committedRows || distinct.size !== committedRows) {
      throw new Error(
        `${engine} read ${read.length} rows (${distinct.size} distinct) of ${name}, not ${committedRows}`,
      );
    }
  }
  const table = await Table.load(catalog, id);
  const position = committedPosition(table.metadata, name).offsets.get(TOPIC) ?? new Map();
  for (const r of results) {
    const recorded = position.get(r.member)?.toString() ?? "0";
    if (recorded !== r.lastOffset) {
      throw new Error(
        `${name}: the table records partition ${r.member} at ${recorded}, its member committed ${r.lastOffset}`,
      );
    }
  }
  await catalog.close();

  const attempts = results.flatMap((r) => r.attempts);
  const latencies = results.flatMap((r) => r.latenciesMs);
  const late = results.flatMap((r) => r.lateMs);
  const commits = results.reduce((n, r) => n + r.commits, 0);
  const ticks = results.reduce((n, r) => n + r.lateMs.length, 0);
  return {
    members,
    intervalMs,
    commits,
    ticks,
    commitsPerSecond: commits / seconds,
    conflicts: results.reduce((n, r) => n + r.conflicts, 0),
    meanAttempts: attempts.reduce((a, b) => a + b, 0) / Math.max(1, attempts.length),
    maxAttempts: Math.max(0, ...attempts),
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    max: Math.max(0, ...latencies),
    lateP99: quantile(late, 0.99),
    failures: results.flatMap((r) => r.failures),
    rows: committedRows,
  };
}

async function main() {
  const { values } = parseArgs({
    options: {
      members: { type: "string", default: "1,2,4,8" },
      intervals: { type: "string", default: "10s,1s" },
      seconds: { type: "string", default: "60" },
      rows: { type: "string", default: "100" },
      out: { type: "string", default: "bench/results/commit-contention.md" },
    },
  });
  const memberCounts = values.members.split(",").map(Number);
  const intervals = values.intervals.split(",").map((text) => {
    const ms = parseDurationMs(text);
    if (ms === undefined) throw new Error(`--intervals: ${text} is not a duration (e.g. 10s, 500ms)`);
    return { text, ms };
  });
  const seconds = Number(values.seconds);
  const rows = Number(values.rows);
  const namespace = `contention_${process.pid}_${Date.now()}`;
  const admin = await connectRestCatalog({ uri: restCatalog.uri, warehouse: restCatalog.warehouse });
  await admin.createNamespace([namespace]);
  await admin.close();
  const readers = await startReaders();
  const lines: string[] = [];
  try {
    for (const interval of intervals) {
      for (const members of memberCounts) {
        const r = await runConfiguration(readers, namespace, members, interval.ms, seconds, rows);
        const line =
          `| ${members} | ${interval.text} | ${r.commits}/${r.ticks} | ${r.commitsPerSecond.toFixed(2)} | ${r.conflicts} | ` +
          `${r.meanAttempts.toFixed(2)} (max ${r.maxAttempts}) | ${r.p50.toFixed(0)} / ${r.p99.toFixed(0)} / ${r.max.toFixed(0)} | ` +
          `${r.lateP99.toFixed(0)} | ${r.failures.length} |`;
        console.log(line);
        for (const f of r.failures.slice(0, 3)) console.log(`  failure: ${f}`);
        lines.push(line);
      }
    }
  } finally {
    await readers.close();
  }
  const report = [
    "# Commit contention: members of one job committing to one table",
    "",
    `\`node bench/commit-contention.ts --members ${values.members} --intervals ${values.intervals} --seconds ${seconds} --rows ${rows}\``,
    "",
    `Each member is a process committing a ${rows}-row data file and an offset-claimed FastAppend every interval, at a random phase, to the Iceberg REST fixture (JDBC over SQLite). Every table was read back by ${readers.engines.join(", ")}: exactly the committed rows, and each partition's recorded offset its member's last.`,
    "",
    "| members | interval | commits landed / due | commits/s | conflicts (409) | attempts per commit | latency ms p50 / p99 / max | tick lateness p99 ms | gave up |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...lines,
    "",
    `Machine: ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")} at the end; Node ${process.version}.`,
    "",
  ].join("\n");
  writeFileSync(values.out, report);
  console.log(`written ${values.out}`);
}
