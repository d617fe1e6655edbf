// How a command reports a failure: one line (or the job file's problems) on stderr, or a JSON
// object with --json, and an exit code that says what kind of failure it was.
import { ConfigError } from "../config/config-error.ts";
import { TopicSelectionError } from "../config/topics.ts";
import { MessagesLostError } from "../kafka/plan.ts";
import { JobBusyError } from "../service/job-lock.ts";
import { ConcurrentSyncError } from "../sync/offset-claim.ts";
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
  if (error instanceof MessagesLostError) return ExitCode.DATA_LOSS;
  if (error instanceof JobBusyError || error instanceof ConcurrentSyncError) return ExitCode.BUSY;
  if (error instanceof ConfigError || error instanceof TopicSelectionError) return ExitCode.USAGE;
  return ExitCode.FAILED;
}
