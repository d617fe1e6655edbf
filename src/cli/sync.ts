// floe sync --config job.yaml: one sync, from the committed offsets to the high watermarks
// listed at its start, then exit. Ctrl-C stops reading and commits what was read.
import { resolve } from "node:path";
import { type Command, Option } from "commander";
import { type SyncChoices, syncChoices } from "../pipeline/sync-options.ts";
import { acquireJobLock, type JobLock } from "../runtime/job-lock.ts";
import { LOG_LEVELS, type LogLevel } from "../runtime/logger.ts";
import { jobStateDir, runStorePath, stateRoot } from "../runtime/state-paths.ts";
import type { RunStore } from "../state/run-store.ts";
import { ExitCode } from "./exit-codes.ts";
import { nonNegativeSeconds, RESUME_FROM_CHOICES } from "./options.ts";
import { progressDisplay, wantsProgress } from "./progress-terminal.ts";
import { reportToJson, reportToText } from "./report.ts";

interface SyncFlags extends SyncChoices {
  config: string;
  json?: boolean;
  stateDir?: string;
  /** --wait alone: true, wait as long as it takes. */
  wait?: number | true;
  logLevel?: LogLevel;
}

export function registerSync(command: Command): void {
  command
    .requiredOption("-c, --config <file>", "job file (YAML)")
    .option("--json", "print the report as JSON")
    .option("--accept-data-loss", "go on when messages expired unread (retention); the loss is reported")
    .addOption(
      new Option(
        "--resume-from <where>",
        "for a table that holds rows but no Kafka position floe can trust (snapshots expired before floe kept it as a table property, rolled back, written by another engine): resume from the group's offsets (else the log start), the log start, or the log end; recorded in the next commit",
      ).choices(RESUME_FROM_CHOICES),
    )
    .option(
      "--state-dir <dir>",
      "the state root: the run store (floe.db) and <dir>/<job>, the job's lock and upsert key indexes (default: .floe next to the job file)",
    )
    .option(
      "--wait [seconds]",
      "when another process is syncing this job, wait for it (default: exit at once with code 5)",
      nonNegativeSeconds,
    )
    .addOption(
      new Option("--log-level <level>", "also write the run's log lines to stderr, from this level").choices(
        LOG_LEVELS,
      ),
    )
    .addHelpText(
      "after",
      `
The run, its outcome and its log lines are recorded in the run store: see floe history and floe logs.

Example:
  floe sync --config job.yaml
  floe sync --config job.yaml --json > report.json
  floe sync --config job.yaml --wait 600     # behind a sync of the same job that is still running

Exit codes: 0 done, 1 failed, 2 bad job file or usage, 3 messages expired unread, 4 stopped early (what was read landed),
5 another process is syncing this job (or committed its messages meanwhile): nothing landed twice; run again later`,
    )
    .action(async (flags: SyncFlags) => {
      process.exitCode = await sync(flags);
    });
}

async function sync(flags: SyncFlags): Promise<ExitCode> {
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  // On stderr, and only on a terminal: the report on stdout stays clean for a pipe or a file.
  const progress = wantsProgress(process.stderr) && !flags.json ? progressDisplay(process.stderr) : undefined;
  let lock: JobLock | undefined;
  let store: RunStore | undefined;
  try {
    // Loaded here, not at start: --help and usage errors need neither the job schema nor the rest.
    const { loadJob } = await import("../job/load-job.ts");
    const job = await loadJob(flags.config);
    const root = stateRoot(flags.stateDir, flags.config);
    const stateDir = jobStateDir(root, job.name);
    lock = await acquireJobLock(stateDir, job.name, {
      waitMs: flags.wait === undefined ? 0 : flags.wait === true ? Number.POSITIVE_INFINITY : flags.wait * 1000,
      signal: abort.signal,
      command: `floe sync --config ${resolve(flags.config)}`,
    });
    const [{ recordSync }, { RunStore }, { createLogger, RunLogSink }] = await Promise.all([
      import("../runtime/recorded-sync.ts"),
      import("../state/run-store.ts"),
      import("../runtime/logger.ts"),
    ]);
    store = RunStore.open(runStorePath(root));
    const sink = new RunLogSink();
    const logger = await createLogger({
      level: flags.logLevel ?? "info",
      format: flags.logLevel === undefined ? "none" : process.stderr.isTTY ? "pretty" : "json",
      destination: process.stderr,
      sink,
    });
    const run = await recordSync(job, {
      store,
      sink,
      logger,
      trigger: "sync",
      stateDir,
      sync: syncChoices(flags),
      signal: abort.signal,
      ...(progress ? { onEvent: progress.update } : {}),
    });
    if (run.error !== undefined) throw run.error;
    const report = run.report!;
    progress?.done();
    process.stdout.write(`${flags.json ? reportToJson(report) : reportToText(report)}\n`);
    return report.status === "complete" ? ExitCode.OK : ExitCode.PARTIAL;
  } catch (error) {
    progress?.done();
    const { fail } = await import("./fail.ts");
    return fail("sync", error, flags.json === true);
  } finally {
    store?.close();
    lock?.release();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
