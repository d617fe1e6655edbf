// floe discover --config job.yaml: the topics the job selects, each with its partitions, the
// messages they retain and the columns a sample of its messages gives (type, nullable, an
// example value), and the topics it skips with the reason. Reads the cluster and the catalog;
// writes nothing (no namespace, table, offsets or consumer group, not even an embedded
// catalog that does not exist yet).
import type { Command } from "commander";
import type { DiscoveredBinding, Discovery } from "../inspect/discover-bindings.ts";
import { stringifyJson } from "../lib/int64-json.ts";
import { ExitCode } from "./exit-codes.ts";
import { sampleOption } from "./options.ts";
import { skippedTopicLines } from "./report.ts";
import { textTable } from "./text-table.ts";

interface DiscoverFlags {
  config: string;
  json?: boolean;
  sample: number;
}

/** Examples in the terminal table are cut shorter than in --json, to keep a row on one line. */
const TEXT_EXAMPLE_CHARS = 40;

export function registerDiscover(command: Command): void {
  command
    .requiredOption("-c, --config <file>", "job file (YAML)")
    .option("--json", "print the discovery as JSON")
    .addOption(sampleOption())
    .addHelpText(
      "after",
      `
Writes nothing: no namespace, table, offsets or consumer group. Example values of fields named
like secrets (password, token, api_key, ...) are hidden.

Example:
  floe discover --config job.yaml
  floe discover --config job.yaml --json --sample 100

Exit codes: 0 done, 1 Kafka or the catalog failed, 2 bad job file or usage`,
    )
    .action(async (flags: DiscoverFlags) => {
      process.exitCode = await discover(flags);
    });
}

async function discover(flags: DiscoverFlags): Promise<ExitCode> {
  try {
    const job = await (await import("../job/load-job.ts")).loadJob(flags.config);
    // Loaded here, not at start: --help and usage errors need none of the Kafka and Iceberg code.
    const { discoverBindings, withDiscoveryConnections } = await import("../inspect/discover-bindings.ts");
    const discovery = await withDiscoveryConnections(job, (connections) =>
      discoverBindings(job, connections, { sample: flags.sample }),
    );
    process.stdout.write(`${flags.json ? discoveryToJson(discovery) : discoveryToText(discovery)}\n`);
    return ExitCode.OK;
  } catch (error) {
    return (await import("./fail.ts")).fail("discover", error, flags.json === true);
  }
}

export function discoveryToJson(discovery: Discovery): string {
  return stringifyJson(discovery, { bigints: "strings", indent: 2 });
}

export function discoveryToText(discovery: Discovery): string {
  const lines: string[] = [];
  for (const stream of discovery.streams) {
    lines.push(...streamLines(stream), "");
  }
  lines.push(...skippedTopicLines(discovery.skipped));
  const retained = discovery.streams.reduce((sum, s) => sum + s.retained, 0n);
  lines.push(`${discovery.streams.length} topic(s) selected on ${discovery.cluster}, ${retained} messages retained`);
  return lines.join("\n");
}

function streamLines(s: DiscoveredBinding): string[] {
  const state = s.tableExists ? "exists" : "will be created";
  const lines = [
    `${s.topic} -> ${s.table} (${s.mode}, ${state})`,
    `  ${s.partitions.length} partition(s), ${s.retained} messages retained${s.topicId ? `, topic id ${s.topicId}` : ""}`,
    ...textTable(
      ["partition", "retained", "log start", "high watermark", "to read"],
      s.partitions.map((p) => [
        String(p.partition),
        String(p.retained),
        String(p.logStartOffset),
        String(p.highWatermark),
        String(p.toRead),
      ]),
      { right: [0, 1, 2, 3, 4], indent: "    " },
    ),
  ];
  const { sample } = s;
  if (sample.messages === 0) {
    lines.push("  no message to sample");
    return lines;
  }
  lines.push(`  columns from a sample of ${sample.messages} messages (system columns _kafka_key, ... come on top):`);
  lines.push(
    ...textTable(
      ["column", "type", "nullable", "nulls", "example"],
      sample.columns.map((c) => [
        printable(c.name),
        c.type === undefined ? "(none yet)" : c.source === "inferred" ? c.type : `${c.type} (${c.source})`,
        c.nullable ? "yes" : "no",
        String(c.nulls),
        c.hidden ? "(hidden)" : cut(c.example ?? "", TEXT_EXAMPLE_CHARS),
      ]),
      { right: [3], indent: "    " },
    ),
  );
  const misfits = sample.columns.filter((c) => c.misfits > 0);
  for (const c of misfits)
    lines.push(`  ${printable(c.name)}: ${c.misfits} sampled value(s) the column refuses (bad messages)`);
  const bad = Object.entries(sample.bad);
  if (bad.length > 0) lines.push(`  bad messages in the sample: ${bad.map(([kind, n]) => `${kind} ${n}`).join(", ")}`);
  if (sample.tombstones > 0) lines.push(`  ${sample.tombstones} tombstone(s) in the sample`);
  const proposed = Object.entries(sample.proposedColumns);
  if (proposed.length > 0) {
    lines.push("  the sample mixes types; declare them so that every commit writes the same columns:");
    lines.push(`    columns: {${proposed.map(([name, type]) => `${yamlKey(name)}: ${type}`).join(", ")}}`);
  }
  return lines;
}

/** At most `max` characters, the cut marked with "…"; control characters shown as spaces. */
export function cut(text: string, max: number): string {
  const flat = printable(text);
  if (flat.length <= max) return flat;
  return `${flat.slice(0, max - 1).replace(/[\uD800-\uDBFF]$/, "")}…`;
}

/** Control characters (a terminal's escape sequences among them) as spaces: names and values come from the messages. */
function printable(text: string): string {
  return text.replace(/\p{Cc}/gu, " ");
}

function yamlKey(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : JSON.stringify(name).replace(/\p{Cc}/gu, " ");
}
