// The comparison's results: compare.json (every run, the machine, every version), compare.md (a
// table of min / median per system and mode, and the refused figures with their reasons) and
// compare.png (messages/s and CPU seconds per million, per system and mode; bench/chart.ts).
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, freemem, totalmem } from "node:os";
import { join, relative } from "node:path";
import type { ConnectInstall, SparkKafkaInstall } from "../../dev/services/bench-systems.ts";
import { readerEnv } from "../../dev/services/readers.ts";
import { drawChart } from "../chart.ts";
import { COMMIT_INTERVAL_MS } from "./systems/connect.ts";
import { SPARK_DRIVER_MEMORY, SPARK_SHUFFLE_PARTITIONS } from "./systems/spark.ts";
import type { Mode, Workload } from "./workload.ts";

export interface RunResult {
  system: string;
  mode: Mode;
  round: number;
  wallSeconds?: number;
  cpuSeconds?: number;
  peakRssMb?: number;
  /** The table's current snapshot: total-files-size (data and delete files), in MB. */
  tableMb?: number;
  ok: boolean;
  reasons: string[];
}

export interface Report {
  started: string;
  workload: Workload;
  rounds: number;
  preloadKeys: number;
  preloadSeconds?: { produce: number; sync: number } | undefined;
  installSeconds: Record<string, number>;
  loadBefore: number[];
  loadAfter: number[];
  floeRoot: string;
  connect?: ConnectInstall | undefined;
  sparkKafka?: SparkKafkaInstall | undefined;
  results: RunResult[];
}

const SYSTEM_NAMES: Record<string, string> = {
  floe: "floe (CLI, REST)",
  connect: "Iceberg Kafka Connect sink, standalone, 2 tasks",
  spark: "Spark Structured Streaming, availableNow",
};
const MODE_NAMES: Record<Mode, string> = {
  append: "append",
  upsert: "upsert",
  "upsert-preloaded": "upsert into pre-loaded table",
};

interface Row {
  system: string;
  mode: Mode;
  runs: RunResult[];
  accepted: RunResult[];
}

export async function writeReport(out: string, report: Report): Promise<void> {
  const versions = collectVersions(report);
  const machine = {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? "",
    memoryGb: Number((totalmem() / 2 ** 30).toFixed(1)),
    freeMemoryGbAtEnd: Number((freemem() / 2 ** 30).toFixed(1)),
    loadAverageBefore: report.loadBefore.map((l) => Number(l.toFixed(2))),
    loadAverageAfter: report.loadAfter.map((l) => Number(l.toFixed(2))),
  };
  const rows = groupRows(report.results);
  const summary = rows.map((row) => summarise(report.workload, row));
  writeFileSync(join(out, "compare.json"), `${JSON.stringify({ ...report, machine, versions, summary }, null, 2)}\n`);
  writeFileSync(join(out, "compare.md"), markdown(report, machine, versions, summary));
  const points = summary.filter((s) => s.accepted > 0);
  await drawChart(join(out, "compare.png"), {
    title: `${report.workload.messages.toLocaleString("en")} messages, ${machine.nproc} cores, load ${machine.loadAverageBefore[0]}`,
    x: "",
    kind: "bar",
    xKey: "label",
    series: [{ name: "median", points: points.map((s) => ({ label: `${s.system}\n${s.mode}`, ...s.median })) }],
    panels: [
      { key: "messagesPerSecond", label: "messages/s (median; higher is better)" },
      { key: "cpuSecondsPerMillion", label: "CPU s per million messages (median; lower is better)" },
    ],
  });
  console.log(`wrote ${join(out, "compare.md")}, compare.json, compare.png`);
}

function groupRows(results: RunResult[]): Row[] {
  const rows: Row[] = [];
  for (const r of results) {
    let row = rows.find((x) => x.system === r.system && x.mode === r.mode);
    if (row === undefined) {
      row = { system: r.system, mode: r.mode, runs: [], accepted: [] };
      rows.push(row);
    }
    row.runs.push(r);
    if (r.ok) row.accepted.push(r);
  }
  return rows;
}

interface Figures {
  wallSeconds: number;
  messagesPerSecond: number;
  mbPerSecond: number;
  cpuSecondsPerMillion: number;
  peakRssMb: number;
  tableMb: number;
}

interface Summary {
  system: string;
  mode: Mode;
  runs: number;
  accepted: number;
  /** The best of the accepted runs (min wall, CPU and RSS; max rates). */
  best: Figures;
  median: Figures;
  refused: string[];
}

function summarise(w: Workload, row: Row): Summary {
  const figures = row.accepted.map(
    (r): Figures => ({
      wallSeconds: r.wallSeconds!,
      messagesPerSecond: w.messages / r.wallSeconds!,
      mbPerSecond: w.valueBytes / 1e6 / r.wallSeconds!,
      cpuSecondsPerMillion: (r.cpuSeconds! / w.messages) * 1e6,
      peakRssMb: r.peakRssMb!,
      tableMb: r.tableMb ?? Number.NaN,
    }),
  );
  const pick = (f: (values: number[]) => number, higherIsBetter: (keyof Figures)[]) =>
    Object.fromEntries(
      (
        ["wallSeconds", "messagesPerSecond", "mbPerSecond", "cpuSecondsPerMillion", "peakRssMb", "tableMb"] as const
      ).map((k) => [
        k,
        f(figures.map((x) => x[k]).map((v) => (higherIsBetter.includes(k) ? -v : v))) *
          (higherIsBetter.includes(k) ? -1 : 1),
      ]),
    ) as unknown as Figures;
  const rates: (keyof Figures)[] = ["messagesPerSecond", "mbPerSecond"];
  return {
    system: row.system,
    mode: row.mode,
    runs: row.runs.length,
    accepted: row.accepted.length,
    best: pick((v) => Math.min(...v), rates),
    median: pick(median, []),
    refused: [...new Set(row.runs.filter((r) => !r.ok).flatMap((r) => r.reasons))],
  };
}

function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function markdown(
  report: Report,
  machine: Record<string, unknown>,
  versions: Record<string, string>,
  summary: Summary[],
): string {
  const w = report.workload;
  const f = (n: number, digits = 1) =>
    Number.isFinite(n) ? n.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "—";
  const pair = (s: Summary, k: keyof Figures, digits = 1) => `${f(s.best[k], digits)} / ${f(s.median[k], digits)}`;
  const lines = [
    "# floe against the Iceberg Kafka Connect sink and Spark",
    "",
    `${w.messages.toLocaleString("en")} orders-like JSON messages of ~${w.size} bytes (${(w.valueBytes / 1e6).toFixed(0)} MB of values) on ${w.partitions} partitions, ` +
      `${w.keys.toLocaleString("en")} distinct ids (nine messages in ten update an existing id), one local broker, ` +
      `each system into a fresh table of the Iceberg REST fixture. ${report.rounds} round${report.rounds === 1 ? "" : "s"}, systems interleaved; figures are best / median of the runs whose table checked out. ` +
      "Wall time runs from the process start to the commit that holds the last message; CPU is the whole process tree's (user + system); peak RSS the tree's.",
    "",
    "| system | mode | wall s | messages/s | MB/s | CPU s per 1M | peak RSS MB | table MB | runs accepted |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...summary.map((s) =>
      s.accepted === 0
        ? `| ${SYSTEM_NAMES[s.system]} | ${modeName(s)} | refused | — | — | — | — | — | 0 of ${s.runs} |`
        : `| ${SYSTEM_NAMES[s.system]} | ${modeName(s)} | ${pair(s, "wallSeconds")} | ${pair(s, "messagesPerSecond", 0)} | ${pair(s, "mbPerSecond")} | ${pair(s, "cpuSecondsPerMillion")} | ${pair(s, "peakRssMb", 0)} | ${pair(s, "tableMb")} | ${s.accepted} of ${s.runs} |`,
    ),
    "",
    "![messages/s and CPU s per million](compare.png)",
    "",
  ];
  const refused = summary.filter((s) => s.refused.length > 0);
  if (refused.length > 0) {
    lines.push("## Refused figures", "");
    for (const s of refused) {
      lines.push(`- **${SYSTEM_NAMES[s.system]}, ${modeName(s)}**${explain(s)}:`);
      for (const reason of s.refused) lines.push(`  - ${reason}`);
    }
    lines.push("");
  }
  lines.push(
    "## Setup",
    "",
    "- Each table is checked by DuckDB, PyIceberg and Spark: row count, distinct ids, and the rows of 20 sampled ids (25 for the pre-loaded table) against a model of what was produced (append: every message; upsert: each id's latest message).",
    `- floe: \`floe sync\` of a job file with the default settings (${relative(process.cwd(), report.floeRoot) || "this checkout"}).`,
    report.preloadKeys > 0
      ? `- Pre-loaded table: ${report.preloadKeys.toLocaleString("en")} ids landed once by a floe upsert (topic ready in ${f(report.preloadSeconds?.produce ?? Number.NaN, 0)} s, the sync ${f(report.preloadSeconds?.sync ?? Number.NaN, 0)} s), then registered anew in the catalog for each run with floe's key index; the measured messages all update pre-loaded ids.`
      : "- No pre-loaded run (--preload-keys 0).",
    `- Kafka Connect: ConnectStandalone with connect-standalone.sh's JVM options, the sink's \`iceberg.control.commit.interval-ms=${COMMIT_INTERVAL_MS}\`, 2 tasks, schemaless JSON; its table made up front (the orders' columns, format v2). Its wall time ends when the catalog's current snapshot holds every message (polled every 200 ms); CPU is taken at that moment.`,
    `- Spark: spark-submit local[2], driver memory ${SPARK_DRIVER_MEMORY}, spark.sql.shuffle.partitions=${SPARK_SHUFFLE_PARTITIONS}; its table is format v3 with merge-on-read (deletion vectors); MERGE keeps each id's latest message of the micro-batch first. Process start to exit.`,
    `- Installs this run: ${
      Object.entries(report.installSeconds)
        .map(([k, v]) => (v < 1 ? `${k} already there` : `${k} ${f(v)} s`))
        .join(", ") || "none"
    } (a first install fetches from Maven Central into .local/kafka-connect/ and .local/bench/).`,
    "",
    "## Machine and versions",
    "",
    ...Object.entries(machine).map(([k, v]) => `- ${k}: ${Array.isArray(v) ? v.join(", ") : v}`),
    ...Object.entries(versions).map(([k, v]) => `- ${k}: ${v}`),
    `- started: ${report.started}`,
    "",
  );
  return lines.join("\n");
}

function modeName(s: Summary): string {
  return s.system === "spark" && s.mode === "upsert" ? "upsert (MERGE INTO per micro-batch)" : MODE_NAMES[s.mode];
}

function explain(s: Summary): string {
  if (s.system === "connect" && s.mode === "upsert") {
    return " (the sink 1.10 has no upsert mode: `iceberg.tables.default-id-columns` only sets identifier fields of tables it creates, and every message is appended)";
  }
  return "";
}

function collectVersions(report: Report): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(report.floeRoot, "package.json"), "utf8")) as { version: string };
  const git = spawnSync("git", ["-C", report.floeRoot, "rev-parse", "--short", "HEAD"], { encoding: "utf8" });
  const java = spawnSync("java", ["-version"], { encoding: "utf8" });
  const python = spawnSync(
    readerEnv.python,
    ["-c", "import pyspark, pyiceberg, duckdb; print(pyspark.__version__, pyiceberg.__version__, duckdb.__version__)"],
    { encoding: "utf8" },
  );
  const [pyspark = "?", pyiceberg = "?", duckdb = "?"] = python.stdout.trim().split(" ");
  const icebergSpark = readdirSync(readerEnv.sparkJars).find((j) => j.startsWith("iceberg-spark-runtime")) ?? "?";
  return {
    floe: `${pkg.version} (${git.stdout.trim() || "?"})`,
    node: process.version,
    java: java.stderr.split("\n")[0]?.trim() ?? "?",
    "Kafka broker": "4.3.1 (dev/services/kafka/pom.xml)",
    "Iceberg REST fixture": "1.10.1 (dev/services/iceberg-rest/pom.xml)",
    ...(report.connect
      ? {
          "Kafka Connect": report.connect.kafkaVersion,
          "Iceberg Kafka Connect sink": report.connect.sinkVersion,
        }
      : {}),
    Spark: pyspark,
    ...(report.sparkKafka ? { "spark-sql-kafka": report.sparkKafka.connectorVersion } : {}),
    "Iceberg Spark runtime": icebergSpark.replace(/\.jar$/, ""),
    "DuckDB (checks)": duckdb,
    "PyIceberg (checks)": pyiceberg,
  };
}
