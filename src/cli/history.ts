// floe history --config job.yaml: the job's last runs from the run store (start, duration,
// outcome, messages, bytes, per-table commit report, error), newest first.
import { type Command, InvalidArgumentError } from "commander";
import { runStorePath, stateRoot } from "../runtime/state-paths.ts";
import { RUN_OUTCOMES, type RunOutcome, RunStore } from "../state/run-store.ts";
import { ExitCode } from "./exit-codes.ts";
import { positiveInteger } from "./options.ts";
import { runsToText } from "./run-format.ts";

interface HistoryFlags {
  config: string;
  stateDir?: string;
  json?: boolean;
  limit: number;
  outcome?: RunOutcome;
}

export function registerHistory(command: Command): void {
  command
    .requiredOption("-c, --config <file>", "job file (YAML)")
    .option("--state-dir <dir>", "the state root (default: .floe next to the job file)")
    .option("--json", "print the runs as JSON")
    .option("-n, --limit <n>", "at most this many runs", positiveInteger, 20)
    .option("--outcome <outcome>", `only runs with this outcome (${RUN_OUTCOMES.join(", ")})`, (v: string) => {
      if (!RUN_OUTCOMES.includes(v as RunOutcome))
        throw new InvalidArgumentError(`expected one of ${RUN_OUTCOMES.join(", ")}`);
      return v as RunOutcome;
    })
    .addHelpText(
      "after",
      `
Example:
  floe history --config job.yaml
  floe history --config job.yaml --json --limit 100 | jq '.[] | select(.outcome == "failed")'

Exit codes: 0, 2 bad job file or usage`,
    )
    .action(async (flags: HistoryFlags) => {
      process.exitCode = await history(flags);
    });
}

async function history(flags: HistoryFlags): Promise<ExitCode> {
  try {
    // The run store needs the job's name and folder, none of its secrets.
    const job = await (await import("../job/load-job.ts")).loadJob(flags.config, { secretsOptional: {} });
    const store = RunStore.open(runStorePath(stateRoot(flags.stateDir, flags.config)));
    try {
      const runs = store.runs(job.name, { limit: flags.limit, ...(flags.outcome ? { outcome: flags.outcome } : {}) });
      process.stdout.write(`${flags.json ? JSON.stringify(runs, null, 2) : runsToText(runs)}\n`);
    } finally {
      store.close();
    }
    return ExitCode.OK;
  } catch (error) {
    return (await import("./fail.ts")).fail("history", error, flags.json === true);
  }
}
