// How a command reports a failure: one line (or the job file's problems) on stderr, or a JSON
// object with --json, and an exit code that says what kind of failure it was. An Iceberg
// error's kind and retryable flag (iceberg/errors.ts) go into the JSON, for a script or a
// scheduler that decides whether to try again.
import { ConfigError } from "../config/config-error.ts";
import { TopicSelectionError } from "../config/topics.ts";
import { errorKind, isRetryable } from "../iceberg/errors.ts";
import { stringifyJson } from "../iceberg/spec/json.ts";
import { MessagesLostError } from "../kafka/plan.ts";
import { JobBusyError } from "../service/job-lock.ts";
import { ConcurrentSyncError } from "../sync/offset-claim.ts";
import { EngineConflictError } from "../sync/plan-sync.ts";
import { ExitCode } from "./exit-codes.ts";

export function fail(command: string, error: unknown, json: boolean): ExitCode {
  const message = error instanceof Error ? error.message : String(error);
  if (json) {
    const kind = errorKind(error);
    const body = {
      error: message,
      ...(kind === undefined ? {} : { kind, retryable: isRetryable(error) }),
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
  if (error instanceof MessagesLostError) return ExitCode.DATA_LOSS;
  if (error instanceof JobBusyError || error instanceof ConcurrentSyncError) return ExitCode.BUSY;
  // Other writers kept committing to a table through all the commit retries: a later run can land.
  if (errorKind(error) === "conflict") return ExitCode.BUSY;
  if (error instanceof ConfigError || error instanceof TopicSelectionError || error instanceof EngineConflictError) {
    return ExitCode.USAGE;
  }
  return ExitCode.FAILED;
}
