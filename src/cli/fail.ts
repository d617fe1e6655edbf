// How a command reports a failure: one line (or the job file's problems) on stderr, or a JSON
// object with --json, and an exit code that says what kind of failure it was.
import { ConfigError } from "../config/config-error.ts";
import { TopicSelectionError } from "../config/topics.ts";
import { MessagesLostError } from "../kafka/plan.ts";
import { EngineConflictError } from "../sync/plan-sync.ts";
import { ExitCode } from "./exit-codes.ts";

export function fail(command: string, error: unknown, json: boolean): ExitCode {
  const message = error instanceof Error ? error.message : String(error);
  if (json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  else process.stderr.write(`floe ${command}: ${message}\n`);
  if (error instanceof MessagesLostError) return ExitCode.DATA_LOSS;
  if (error instanceof ConfigError || error instanceof TopicSelectionError || error instanceof EngineConflictError) {
    return ExitCode.USAGE;
  }
  return ExitCode.FAILED;
}
