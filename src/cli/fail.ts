// How a command reports a failure: one line (or the job file's problems) on stderr, or a JSON
// object with --json, and an exit code that says what kind of failure it was. Both come from
// the sync's one classification of errors (pipeline/classify-error.ts): its kind and whether a
// retry can help go into the JSON, for a script or a scheduler that decides whether to try again.

import { MessagesLostError } from "../kafka/plan.ts";
import { stringifyJson } from "../lib/int64-json.ts";
import { classifyError } from "../pipeline/classify-error.ts";
import { JobBusyError } from "../runtime/job-lock.ts";
import { ExitCode } from "./exit-codes.ts";

export function fail(command: string, error: unknown, json: boolean): ExitCode {
  const message = error instanceof Error ? error.message : String(error);
  if (json) {
    const { kind, retryable } = classifyError(error);
    const body = {
      error: message,
      kind,
      retryable,
      // Expired messages per partition, as the report's lostMessages, so that a script can act on them.
      ...(error instanceof MessagesLostError ? { lostMessages: error.lost } : {}),
    };
    process.stdout.write(`${stringifyJson(body, { bigints: "strings" })}\n`);
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
    // Other writers kept committing to a table through all the commit retries: a later run can land.
    case "commit-conflict":
      return ExitCode.BUSY;
    default:
      return ExitCode.FAILED;
  }
}
