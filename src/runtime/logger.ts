// Structured logs (pino): one JSON object per line when stdout is not a terminal, for a log
// collector; readable lines (pino-pretty) on a terminal. A run's lines carry its runId and job,
// and also go to that run's rows in the run store (`floe logs RUN_ID`), at info and above
// whatever --log-level says, so that a quiet terminal still leaves a full run log behind.
//
// Secrets: the job keeps them as Secret (job/secret.ts), which serialises as "***"; the
// credential-shaped keys below are also censored, should one ever reach a log call.
//
// pino loads with the first logger: a command's options (LOG_LEVELS) and its --help need none.
import type { DestinationStream, Level, Logger, StreamEntry } from "pino";
import type { RunStore } from "../state/run-store.ts";

export type { Logger } from "pino";
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const REDACTED_KEYS = [
  "password",
  "token",
  "secret",
  "client_secret",
  "clientSecret",
  "secretAccessKey",
  "sessionToken",
  "authorization",
  "webhook",
];
const REDACT_PATHS = REDACTED_KEYS.flatMap((key) => [key, `*.${key}`]);

/** Fields of a line that the store keeps in their own columns, or that every line has. */
const OWN_FIELDS = new Set(["level", "time", "msg", "runId", "pid", "hostname"]);

/** Sends each line that carries a runId to the run store the run was routed to. */
export class RunLogSink implements DestinationStream {
  readonly #routes = new Map<string, RunStore>();

  route(runId: string, store: RunStore): void {
    this.#routes.set(runId, store);
  }

  unroute(runId: string): void {
    this.#routes.delete(runId);
  }

  write(line: string): void {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const runId = parsed.runId;
    if (typeof runId !== "string") return;
    const store = this.#routes.get(runId);
    if (!store) return;
    const fields = Object.fromEntries(Object.entries(parsed).filter(([key]) => !OWN_FIELDS.has(key)));
    try {
      store.appendLog(runId, Number(parsed.time), Number(parsed.level), String(parsed.msg ?? ""), fields);
    } catch (error) {
      // A log line the store cannot take must not fail the run it describes.
      process.stderr.write(
        `floe: cannot write a log line of run ${runId} to ${store.path}: ${(error as Error).message}\n`,
      );
    }
  }
}

export interface LoggerOptions {
  /** The terminal's level (--log-level); the run store gets info and above in any case. */
  level: LogLevel;
  /** pretty: readable lines; json: one JSON object per line; none: the run store only. Default: pretty on a TTY. */
  format?: "pretty" | "json" | "none";
  /** Where the lines go (default stdout). */
  destination?: NodeJS.WritableStream & { isTTY?: boolean; fd?: number };
  sink?: RunLogSink;
}

export async function createLogger(options: LoggerOptions): Promise<Logger> {
  const destination = options.destination ?? process.stdout;
  const format = options.format ?? (destination.isTTY ? "pretty" : "json");
  const streams: StreamEntry<Level>[] = [];
  if (format === "json") streams.push({ level: options.level, stream: destination });
  if (format === "pretty") {
    // Loaded only for a terminal.
    const { default: pretty } = await import("pino-pretty");
    streams.push({
      level: options.level,
      stream: pretty({
        colorize: destination.isTTY === true,
        sync: true,
        destination,
        translateTime: "SYS:yyyy-mm-dd HH:MM:ss.l",
        ignore: "pid,hostname",
        singleLine: true,
      }),
    });
  }
  if (options.sink) streams.push({ level: "info", stream: options.sink });
  // The default export: what both Node and the bundle give a CommonJS module's dynamic import.
  const { default: pino } = await import("pino");
  const lowest = LOG_LEVELS.find((l) => l === options.level || (options.sink && l === "info")) ?? "info";
  return pino(
    {
      level: lowest,
      base: { pid: process.pid },
      redact: { paths: REDACT_PATHS, censor: "***" },
      // Errors as {type, message, kind} without stack traces on every line.
      serializers: { err: pino.stdSerializers.err },
    },
    pino.multistream(streams, { dedupe: false }),
  );
}
