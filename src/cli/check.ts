// floe check --config job.yaml: validates the job file, connects to Kafka and the catalog, and
// shows what a sync would do now (topics selected and skipped, tables, messages to read per
// partition and where reading would start), and, from a sample of each topic's messages, the
// columns a sync would write and the `columns:` to declare where the sample mixes types. It
// reads that sample and writes nothing.

import type { Command } from "commander";
import type { StreamSample } from "../decode/schema-sample.ts";
import { stringifyJson } from "../lib/int64-json.ts";
import type { SyncPlan } from "../pipeline/plan-sync.ts";
import { ExitCode } from "./exit-codes.ts";
import { sampleOption } from "./options.ts";
import { recreatedTopicLine, skippedTopicLines } from "./report.ts";

interface CheckFlags {
  config: string;
  json?: boolean;
  sample: number;
}

export function registerCheck(command: Command): void {
  command
    .requiredOption("-c, --config <file>", "job file (YAML)")
    .option("--json", "print the plan as JSON")
    .addOption(sampleOption())
    .addHelpText(
      "after",
      `
Example:
  floe check --config job.yaml
  floe check --config job.yaml --json --sample 0   # the plan alone, no sample read

Exit codes: 0 ready, 1 Kafka or the catalog failed, 2 bad job file or usage, 3 messages expired unread`,
    )
    .action(async (flags: CheckFlags) => {
      process.exitCode = await check(flags);
    });
}

async function check(flags: CheckFlags): Promise<ExitCode> {
  try {
    const job = await (await import("../job/load-job.ts")).loadJob(flags.config);
    // Loaded here, not at start: --help and usage errors need none of the Kafka and Iceberg code.
    const [{ withConnections }, { planSync }, { sampleBindings }] = await Promise.all([
      import("../pipeline/connect.ts"),
      import("../pipeline/plan-sync.ts"),
      import("../inspect/sample-bindings.ts"),
    ]);
    return await withConnections(job, async ({ source, catalog }) => {
      const plan = await planSync(job, source, catalog);
      const samples = await sampleBindings(source, plan, {
        messagesPerTopic: flags.sample,
        maxThreads: job.maxThreads,
        registry: job.source.schemaRegistry,
      });
      process.stdout.write(`${flags.json ? planToJson(job.name, plan, samples) : planToText(plan, samples)}\n`);
      return plan.offsets.lost.length > 0 ? ExitCode.DATA_LOSS : ExitCode.OK;
    });
  } catch (error) {
    return (await import("./fail.ts")).fail("check", error, flags.json === true);
  }
}

function planToJson(job: string, plan: SyncPlan, samples: ReadonlyMap<string, StreamSample>): string {
  return stringifyJson(
    {
      job,
      topics: plan.bindings.map((t) => {
        const sample = samples.get(t.binding.topic);
        return {
          topic: t.binding.topic,
          table: t.binding.table,
          mode: t.binding.mode,
          tableExists: t.table !== undefined,
          ...(sample && {
            sample: {
              messages: sample.messages,
              tombstones: sample.tombstones,
              bad: sample.bad,
              // No example values here: `floe discover` shows them, hiding secret-named fields.
              columns: sample.columns.map(({ name, type, source, values, misfits }) => ({
                name,
                type,
                source,
                values,
                misfits,
              })),
              proposedColumns: Object.fromEntries(sample.proposed),
            },
          }),
        };
      }),
      skipped: plan.skipped,
      partitions: plan.offsets.partitions,
      lost: plan.offsets.lost,
      recreated: plan.recreated,
      untrusted: plan.untrusted,
      messagesToRead: plan.offsets.offsetsToRead,
    },
    { bigints: "strings", indent: 2 },
  );
}

function planToText(plan: SyncPlan, samples: ReadonlyMap<string, StreamSample>): string {
  const lines: string[] = [];
  for (const t of plan.bindings) {
    const state = t.table ? "exists" : "will be created";
    lines.push(`${t.binding.topic} -> ${t.binding.table} (${t.binding.mode}, ${state})`);
    for (const p of plan.offsets.partitions.filter((p) => p.topic === t.binding.topic)) {
      lines.push(
        `  partition ${p.partition}: ${p.stopOffset - p.startOffset} to read, from ${p.startOffset} (${p.startFrom}) to ${p.stopOffset}`,
      );
    }
    const sample = samples.get(t.binding.topic);
    if (sample) lines.push(...sampleLines(sample));
  }
  for (const r of plan.recreated) {
    lines.push(recreatedTopicLine(r, plan.bindings.find((t) => t.binding.topic === r.topic)?.binding.mode));
  }
  for (const l of plan.offsets.lost) {
    lines.push(`${l.topic} partition ${l.partition}: ${l.lost} messages expired unread; sync needs --accept-data-loss`);
  }
  for (const u of plan.untrusted) {
    lines.push(`${u.table}: ${u.reason}; sync needs --resume-from group|earliest|latest`);
  }
  lines.push(...skippedTopicLines(plan.skipped));
  lines.push(`${plan.offsets.offsetsToRead} messages to read`);
  return lines.join("\n");
}

/** The sample's columns as a table, its bad messages, and the `columns:` to declare. */
function sampleLines(sample: StreamSample): string[] {
  if (sample.messages === 0) return ["  no message to sample"];
  const lines = [`  columns from a sample of ${sample.messages} messages:`];
  const width = Math.max(...sample.columns.map((c) => c.name.length), 4);
  for (const c of sample.columns) {
    const type = c.type === undefined ? "(none yet)" : c.source === "inferred" ? c.type : `${c.type} (${c.source})`;
    const values = Object.entries(c.values)
      .map(([kind, n]) => `${kind === "huge" ? "beyond long" : kind} ${n}`)
      .join(", ");
    const misfits = c.misfits === 0 ? "" : `; ${c.misfits} would be bad messages`;
    lines.push(`    ${c.name.padEnd(width)}  ${type.padEnd(22)}  ${values || "no value"}${misfits}`);
  }
  const bad = Object.entries(sample.bad);
  if (bad.length > 0) {
    const total = bad.reduce((sum, [, n]) => sum + n, 0);
    lines.push(`  ${total} sampled messages are bad messages: ${bad.map(([kind, n]) => `${kind} ${n}`).join(", ")}`);
  }
  if (sample.proposed.size > 0) {
    const entries = [...sample.proposed].map(([name, type]) => `${yamlKey(name)}: ${type}`).join(", ");
    lines.push("  the sample mixes types; declare them so that every commit writes the same columns:");
    lines.push(`    columns: {${entries}}`);
  }
  return lines;
}

function yamlKey(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : JSON.stringify(name);
}
