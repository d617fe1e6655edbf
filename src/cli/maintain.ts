// floe maintain --config job.yaml [--table T] [--dry-run] [--json]: one maintenance pass over
// the job's tables (compaction, manifest rewrite, snapshot expiry, orphan removal, by the job's
// maintenance: policy), under the job's lock so that it never overlaps a sync of the job. A dry
// run says what the pass would do and changes nothing.
import { resolve } from "node:path";
import type { Command } from "commander";
import { DEFAULT_MAINTENANCE } from "../job/maintenance.ts";
import { stringifyJson } from "../lib/int64-json.ts";
import type { TableMaintenanceReport } from "../pipeline/maintain.ts";
import { acquireJobLock, type JobLock } from "../runtime/job-lock.ts";
import { formatDuration } from "../runtime/retention.ts";
import { jobStateDir, runStorePath, stateRoot } from "../runtime/state-paths.ts";
import type { RunStore } from "../state/run-store.ts";
import { ExitCode } from "./exit-codes.ts";
import { nonNegativeSeconds } from "./options.ts";
import { textTable } from "./text-table.ts";

interface MaintainFlags {
  config: string;
  table?: string;
  dryRun?: boolean;
  json?: boolean;
  stateDir?: string;
  wait?: number | true;
}

export function registerMaintain(command: Command): void {
  // The help states the defaults from the schema itself, so that it cannot drift from them.
  const d = DEFAULT_MAINTENANCE;
  command
    .requiredOption("-c, --config <file>", "job file (YAML)")
    .option("--table <name>", "only this table of the job's namespace")
    .option("--dry-run", "say what would be done; change nothing")
    .option("--json", "print the report as JSON")
    .option("--state-dir <dir>", "the state root (default: .floe next to the job file)")
    .option(
      "--wait [seconds]",
      "when another process is syncing this job, wait for it (default: exit at once with code 5)",
      nonNegativeSeconds,
    )
    .addHelpText(
      "after",
      `
What a pass does is the job file's maintenance: policy (on by default): files under 75% of the target
size or with ${Math.round(d.compaction.deleteRatio * 100)}% of their rows deleted are compacted, the last ${d.snapshots.retainLast} snapshots and those younger than ${formatDuration(d.snapshots.maxAgeMs)}
are kept, manifests are rewritten above ${d.manifests.maxCount}, unreferenced files older than ${formatDuration(d.orphans.olderThanMs)} are removed.
The pass is recorded in the run store (floe history).

Example:
  floe maintain --config job.yaml --dry-run
  floe maintain --config job.yaml --table orders --json

Exit codes: 0 done, 1 failed (for one table at least), 2 bad job file or usage, 5 another process is syncing this job`,
    )
    .action(async (flags: MaintainFlags) => {
      process.exitCode = await maintain(flags);
    });
}

async function maintain(flags: MaintainFlags): Promise<ExitCode> {
  let lock: JobLock | undefined;
  let store: RunStore | undefined;
  try {
    const job = await (await import("../job/load-job.ts")).loadJob(flags.config);
    const root = stateRoot(flags.stateDir, flags.config);
    lock = await acquireJobLock(jobStateDir(root, job.name), job.name, {
      waitMs: flags.wait === undefined ? 0 : flags.wait === true ? Number.POSITIVE_INFINITY : flags.wait * 1000,
      command: `floe maintain --config ${resolve(flags.config)}`,
    });
    const [{ recordMaintenance }, { RunStore }, { createLogger }] = await Promise.all([
      import("../runtime/recorded-maintenance.ts"),
      import("../state/run-store.ts"),
      import("../runtime/logger.ts"),
    ]);
    store = flags.dryRun ? undefined : RunStore.open(runStorePath(root));
    const logger = await createLogger({ level: "info", format: "none", destination: process.stderr });
    const run = await recordMaintenance(job, {
      store,
      logger,
      trigger: "manual",
      ...(flags.table === undefined ? {} : { table: flags.table }),
      ...(flags.dryRun ? { dryRun: true } : {}),
    });
    const body = { job: job.name, dryRun: flags.dryRun === true, outcome: run.record.outcome, tables: run.tables };
    process.stdout.write(
      flags.json ? `${stringifyJson(body, { bigints: "strings" })}\n` : `${maintenanceText(body)}\n`,
    );
    if (run.record.outcome !== "complete") {
      if (!flags.json) process.stderr.write(`floe maintain: ${run.record.error?.message ?? "failed"}\n`);
      return ExitCode.FAILED;
    }
    return ExitCode.OK;
  } catch (error) {
    return (await import("./fail.ts")).fail("maintain", error, flags.json === true);
  } finally {
    store?.close();
    lock?.release();
  }
}

export function maintenanceText(body: { job: string; dryRun: boolean; tables: TableMaintenanceReport[] }): string {
  const lines = [`${body.dryRun ? "Would do" : "Done"} for job ${body.job}:`];
  if (body.tables.length === 0) return `${lines[0]} no tables yet`;
  const rows = body.tables.map((t) => [
    t.table,
    t.error
      ? "failed"
      : `${t.before.dataFiles} -> ${t.after?.dataFiles ?? t.before.dataFiles - (t.compaction?.dataFiles ?? 0) + (t.compaction?.addedFiles ?? 0)}`,
    t.compaction ? `${t.compaction.dataFiles} (+${t.compaction.deleteFiles} DVs)` : "-",
    t.manifests ? String(t.manifests.replaced) : "-",
    t.snapshots ? String(t.snapshots.expired) : "-",
    t.orphans ? String(t.orphans.files) : "-",
    bytes((t.snapshots?.bytes ?? 0) + (t.orphans?.bytes ?? 0)),
  ]);
  lines.push(
    ...textTable(
      ["table", "data files", "compacted", "manifests rewritten", "snapshots expired", "orphans", "bytes freed"],
      rows,
      { right: [3, 4, 5, 6], indent: "  " },
    ),
  );
  for (const t of body.tables) if (t.error) lines.push(`  ${t.table}: ${t.error}`);
  return lines.join("\n");
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
