// How a command reports a failure: one line (or the job file's problems) on stderr, or a JSON
// object with --json, and an exit code that says what kind of failure it was (the kind the
// sync's error classification gives it).
import { MessagesLostError } from "../kafka/plan.ts";
import { JobBusyError } from "../service/job-lock.ts";
import { classifyError } from "../sync/classify-error.ts";
import { ExitCode } from "./exit-codes.ts";

export function fail(command: string, error: unknown, json: boolean): ExitCode {
  const message = error instanceof Error ? error.message : String(error);
  if (json) {
    // Expired messages per partition, as the report's lostMessages, so that a script can act on them.
    const body = error instanceof MessagesLostError ? { error: message, lostMessages: error.lost } : { error: message };
    process.stdout.write(
      `${JSON.stringify(body, (_key, value) => (typeof value === "bigint" ? value.toString() : value))}\n`,
    );
  } else {
    const hint =
      error instanceof MessagesLostError ? "\nRun again with --accept-data-loss to go on; the loss is reported." : "";
    process.stderr.write(`floe ${command}: ${message}${hint}\n`);
  }
  return exitCode(error);
}

function exitCode(error: unknown): ExitCode {
  // The job lock is taken before a sync starts, by the command.
  if (error instanceof JobBusyError) return ExitCode.BUSY;
  switch (classifyError(error).kind) {
    case "config":
      return ExitCode.USAGE;
    case "data-loss":
      return ExitCode.DATA_LOSS;
    case "concurrent-sync":
      return ExitCode.BUSY;
    default:
      return ExitCode.FAILED;
  }
}
