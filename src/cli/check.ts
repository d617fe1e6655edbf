// floe check --config job.yaml: validates the job file, connects to Kafka and the catalog, and
// shows what a sync would do now (topics selected and skipped, tables, messages to read per
// partition and where reading would start), without reading a message or writing anything.
import type { Command } from "commander";
import { loadJob } from "../config/load-job.ts";
import { loadCatalog } from "../iceberg/catalog/load-catalog.ts";
import { KafkaCluster } from "../kafka/connection.ts";
import { catalogConfig, kafkaConnection } from "../sync/connect.ts";
import { checkTargetEngines, planSync, type SyncPlan } from "../sync/plan-sync.ts";
import { ExitCode } from "./exit-codes.ts";
import { fail } from "./fail.ts";
import { recreatedTopicLine, skippedTopicLines } from "./report.ts";

interface CheckFlags {
  config: string;
  json?: boolean;
}

export function registerCheck(program: Command): void {
  program
    .command("check")
    .description("validate the job file, reach Kafka and the catalog, and show what a sync would read")
    .requiredOption("-c, --config <file>", "job file (YAML)")
    .option("--json", "print the plan as JSON")
    .addHelpText(
      "after",
      `
Example:
  floe check --config job.yaml

Exit codes: 0 ready, 1 Kafka or the catalog failed, 2 bad job file, 3 messages expired unread`,
    )
    .action(async (flags: CheckFlags) => {
      process.exitCode = await check(flags);
    });
}

async function check(flags: CheckFlags): Promise<ExitCode> {
  try {
    const job = await loadJob(flags.config);
    checkTargetEngines(job);
    const cluster = await KafkaCluster.connect(kafkaConnection(job.kafka));
    try {
      const catalog = await loadCatalog(catalogConfig(job.iceberg.catalog));
      try {
        const plan = await planSync(job, cluster, catalog);
        process.stdout.write(`${flags.json ? planToJson(job.name, plan) : planToText(plan)}\n`);
        return plan.offsets.lost.length > 0 ? ExitCode.DATA_LOSS : ExitCode.OK;
      } finally {
        await catalog.close();
      }
    } finally {
      await cluster.close();
    }
  } catch (error) {
    return fail("check", error, flags.json === true);
  }
}

function planToJson(job: string, plan: SyncPlan): string {
  return JSON.stringify(
    {
      job,
      topics: plan.targets.map((t) => ({
        topic: t.selection.topic,
        table: t.selection.table,
        mode: t.selection.stream.mode,
        tableExists: t.table !== undefined,
      })),
      skipped: plan.skipped,
      partitions: plan.offsets.partitions,
      lost: plan.offsets.lost,
      recreated: plan.recreated,
      messagesToRead: plan.offsets.offsetsToRead,
    },
    (_key, value) => (typeof value === "bigint" ? value.toString() : value),
    2,
  );
}

function planToText(plan: SyncPlan): string {
  const lines: string[] = [];
  for (const t of plan.targets) {
    const state = t.table ? "exists" : "will be created";
    lines.push(`${t.selection.topic} -> ${t.selection.table} (${t.selection.stream.mode}, ${state})`);
    for (const p of plan.offsets.partitions.filter((p) => p.topic === t.selection.topic)) {
      lines.push(
        `  partition ${p.partition}: ${p.stopOffset - p.startOffset} to read, from ${p.startOffset} (${p.startFrom}) to ${p.stopOffset}`,
      );
    }
  }
  for (const r of plan.recreated) {
    lines.push(recreatedTopicLine(r, plan.targets.find((t) => t.selection.topic === r.topic)?.selection.stream.mode));
  }
  for (const l of plan.offsets.lost) {
    lines.push(`${l.topic} partition ${l.partition}: ${l.lost} messages expired unread; sync needs --accept-data-loss`);
  }
  lines.push(...skippedTopicLines(plan.skipped));
  lines.push(`${plan.offsets.offsetsToRead} messages to read`);
  return lines.join("\n");
}
