// floe logs RUN_ID: one run's log lines from the run store; --errors only its errors, --follow
// until the run ends (a run of `floe run` or `floe sync` under way in another process).
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import type { Command } from "commander";
import { runStorePath, stateRoot } from "../runtime/state-paths.ts";
import { RunStore } from "../state/run-store.ts";
import { ExitCode } from "./exit-codes.ts";
import { logLineToJson, logLineToText } from "./run-format.ts";

interface LogsFlags {
  config?: string;
  stateDir?: string;
  errors?: boolean;
  follow?: boolean;
  json?: boolean;
}

const ERROR_LEVEL = 50;
const FOLLOW_POLL_MS = 500;

export function registerLogs(command: Command): void {
  command
    .argument("<run-id>", "the run's id")
    .option("-c, --config <file>", "a job file whose state root holds the run (default: .floe in this folder)")
    .option("--state-dir <dir>", "the state root that holds the run")
    .option("--errors", "only lines at level error and above")
    .option("-f, --follow", "keep printing new lines until the run ends")
    .option("--json", "one JSON object per line, as the logger wrote it")
    .addHelpText(
      "after",
      `
Example:
  floe logs 01a2318d-8d19-7cd8-b089-37b1f6ca54f5 --config job.yaml
  floe logs 01a2318d-8d19-7cd8-b089-37b1f6ca54f5 --state-dir /var/lib/floe --follow

Exit codes: 0, 1 no such run, 2 usage`,
    )
    .action(async (runId: string, flags: LogsFlags) => {
      process.exitCode = await logs(runId, flags);
    });
}

async function logs(runId: string, flags: LogsFlags): Promise<ExitCode> {
  try {
    const path = runStorePath(stateRoot(flags.stateDir, flags.config));
    if (!existsSync(path)) {
      process.stderr.write(`floe logs: no run store at ${path}; pass --config or --state-dir\n`);
      return ExitCode.FAILED;
    }
    const store = RunStore.open(path);
    try {
      if (!store.run(runId)) {
        process.stderr.write(`floe logs: no run ${runId} in ${path}\n`);
        return ExitCode.FAILED;
      }
      const minLevel = flags.errors ? ERROR_LEVEL : 0;
      const print = (afterSeq: number): number => {
        let last = afterSeq;
        for (const line of store.logs(runId, { afterSeq, minLevel })) {
          process.stdout.write(`${flags.json ? logLineToJson(line) : logLineToText(line)}\n`);
          last = line.seq;
        }
        // Lines below minLevel move the position too, so that they are not read again.
        return Math.max(last, store.logs(runId, { afterSeq: last }).at(-1)?.seq ?? last);
      };
      let seq = print(0);
      while (flags.follow && store.run(runId)?.outcome === "running" && processAlive(store, runId)) {
        await new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS));
        seq = print(seq);
      }
      if (flags.follow) print(seq);
    } finally {
      store.close();
    }
    return ExitCode.OK;
  } catch (error) {
    return (await import("./fail.ts")).fail("logs", error, flags.json === true);
  }
}

/** The run's process still exists, or is on another machine (where it cannot be checked). */
function processAlive(store: RunStore, runId: string): boolean {
  const run = store.run(runId);
  if (!run || run.host !== hostname()) return true;
  try {
    process.kill(run.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
