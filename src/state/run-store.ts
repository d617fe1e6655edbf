// The run store: every run of every job of a state root, and each run's log lines, in one
// embedded SQLite database (node:sqlite) in WAL mode, so that readers (`floe history`, `floe
// logs --follow`, the UI) never block the writer and the writer never blocks them. A process
// writes only the runs it makes; several processes may share the file (a `floe run` and a
// `floe sync` beside it): SQLite serialises their short write transactions, waiting up to
// BUSY_TIMEOUT_MS for one another. The schema is migrated on open (migrations.ts).
//
// Nothing secret is written: a run's record is what its events say (counts, tables, the error's
// kind and message), and log lines come from the logger, which redacts.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { openSqlite } from "../lib/sqlite.ts";
import type { SyncError, SyncErrorKind } from "../pipeline/classify-error.ts";
import type { TableMaintenanceReport } from "../pipeline/maintain.ts";
import type { TableReport } from "../pipeline/write-binding.ts";
import { migrate } from "./migrations.ts";
import { StateDirError } from "./state-dir-error.ts";

/** running: not ended yet. abandoned: its process ended without finishing it (killed, or stopped past the grace period). */
export type RunOutcome = "running" | "complete" | "partial" | "failed" | "abandoned";
export const RUN_OUTCOMES: readonly RunOutcome[] = ["running", "complete", "partial", "failed", "abandoned"];
/** What started the run: its schedule, a retry after a retryable failure, `floe sync`, or a "run now" of a running service. */
export type RunTrigger = "schedule" | "retry" | "sync" | "manual";

/** A sync of the job's topics, or a maintenance pass over its tables. */
export type RunKind = "sync" | "maintenance";

export interface RunRecord {
  runId: string;
  /** Undefined: a sync. */
  kind?: RunKind;
  /** A maintenance pass: what it did per table. */
  maintenance?: TableMaintenanceReport[];
  job: string;
  trigger: RunTrigger;
  /** ms since the epoch. */
  startedAt: number;
  endedAt: number | null;
  durationMs: number | null;
  outcome: RunOutcome;
  messages: number;
  bytes: number;
  deadLetters: number;
  /** Per table, what the run's commits added up to. */
  tables: TableReport[];
  error: SyncError | null;
  /** The process that made the run. */
  pid: number;
  host: string;
}

export interface LogLine {
  runId: string;
  /** 1, 2, ... within the run. */
  seq: number;
  at: number;
  /** pino's numeric level: 20 debug, 30 info, 40 warn, 50 error. */
  level: number;
  msg: string;
  /** The line's other fields. */
  fields: Record<string, unknown>;
}

const BUSY_TIMEOUT_MS = 10_000;
/** The store's file in a state root. */
export const RUN_STORE_FILE = "floe.db";

interface RunRow {
  run_id: string;
  job: string;
  trigger: string;
  started_at: number;
  ended_at: number | null;
  duration_ms: number | null;
  outcome: string;
  messages: number;
  bytes: number;
  dead_letters: number;
  tables: string;
  error_kind: string | null;
  error_retryable: number | null;
  error_name: string | null;
  error_message: string | null;
  pid: number;
  host: string;
  kind: string;
  maintenance: string | null;
}

export class RunStore {
  readonly path: string;
  readonly #db: DatabaseSync;

  private constructor(path: string, db: DatabaseSync) {
    this.path = path;
    this.#db = db;
  }

  /** Opens (creating it and its folder when needed) and migrates the store at `path`. */
  static open(path: string): RunStore {
    let db: DatabaseSync;
    try {
      mkdirSync(dirname(path), { recursive: true });
      // WAL with synchronous NORMAL: a power loss may lose the last transactions, never corrupt the file.
      db = openSqlite(path, { busyTimeoutMs: BUSY_TIMEOUT_MS, synchronousNormal: true, foreignKeys: true });
    } catch (error) {
      throw new StateDirError(
        `cannot open the run store ${path} (the runs and logs of floe history and floe logs): ${(error as Error).message}; make its folder writable or pass --state-dir`,
      );
    }
    try {
      migrate(db, path);
    } catch (error) {
      db.close();
      throw error;
    }
    return new RunStore(path, db);
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  /** Inserts the run, or replaces the record of the same id. */
  saveRun(run: RunRecord): void {
    this.#db
      .prepare(
        `INSERT INTO runs (run_id, job, trigger, started_at, ended_at, duration_ms, outcome, messages, bytes,
           dead_letters, tables, error_kind, error_retryable, error_name, error_message, pid, host, kind, maintenance)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id) DO UPDATE SET ended_at = excluded.ended_at, duration_ms = excluded.duration_ms,
           outcome = excluded.outcome, messages = excluded.messages, bytes = excluded.bytes,
           dead_letters = excluded.dead_letters, tables = excluded.tables, error_kind = excluded.error_kind,
           error_retryable = excluded.error_retryable, error_name = excluded.error_name, error_message = excluded.error_message,
           maintenance = excluded.maintenance`,
      )
      .run(
        run.runId,
        run.job,
        run.trigger,
        run.startedAt,
        run.endedAt,
        run.durationMs,
        run.outcome,
        run.messages,
        run.bytes,
        run.deadLetters,
        JSON.stringify(run.tables),
        run.error?.kind ?? null,
        run.error === null ? null : run.error.retryable ? 1 : 0,
        run.error?.name ?? null,
        run.error?.message ?? null,
        run.pid,
        run.host,
        run.kind ?? "sync",
        run.maintenance === undefined ? null : JSON.stringify(run.maintenance),
      );
  }

  run(runId: string): RunRecord | undefined {
    const row = this.#db.prepare("SELECT * FROM runs WHERE run_id = ?").get(runId) as RunRow | undefined;
    return row && toRecord(row);
  }

  /** The job's runs, newest first; `before` (a start time, ms) pages back from the last page's oldest run. */
  runs(
    job: string,
    options: { limit?: number; outcome?: RunOutcome; before?: number; kind?: RunKind } = {},
  ): RunRecord[] {
    const where = ["job = ?"];
    const params: SQLInputValue[] = [job];
    if (options.kind) {
      where.push("kind = ?");
      params.push(options.kind);
    }
    if (options.outcome) {
      where.push("outcome = ?");
      params.push(options.outcome);
    }
    if (options.before !== undefined) {
      where.push("started_at < ?");
      params.push(options.before);
    }
    params.push(options.limit ?? -1);
    const rows = this.#db
      .prepare(`SELECT * FROM runs WHERE ${where.join(" AND ")} ORDER BY started_at DESC, run_id DESC LIMIT ?`)
      .all(...params) as unknown as RunRow[];
    return rows.map(toRecord);
  }

  /** Every job that has a run in the store. */
  jobs(): string[] {
    return (this.#db.prepare("SELECT DISTINCT job FROM runs ORDER BY job").all() as { job: string }[]).map(
      (r) => r.job,
    );
  }

  /** The job's latest sync (maintenance passes are not what "the last run" of a job means). */
  lastRun(job: string): RunRecord | undefined {
    return this.runs(job, { limit: 1, kind: "sync" })[0];
  }

  /** The job's latest maintenance pass. */
  lastMaintenance(job: string): RunRecord | undefined {
    return this.runs(job, { limit: 1, kind: "maintenance" })[0];
  }

  /** The job's oldest run the store keeps. */
  firstRun(job: string): RunRecord | undefined {
    const row = this.#db.prepare("SELECT * FROM runs WHERE job = ? ORDER BY started_at LIMIT 1").get(job) as
      | RunRow
      | undefined;
    return row && toRecord(row);
  }

  /** The job's latest run that landed what it read (complete or partial). */
  lastSuccess(job: string): RunRecord | undefined {
    const row = this.#db
      .prepare(
        "SELECT * FROM runs WHERE job = ? AND kind = 'sync' AND outcome IN ('complete', 'partial') ORDER BY started_at DESC LIMIT 1",
      )
      .get(job) as RunRow | undefined;
    return row && toRecord(row);
  }

  /**
   * Marks the job's runs still `running` as abandoned: called by the process that holds the
   * job's lock before it starts a run, so any other running run's process is gone.
   */
  abandonRunning(job: string, now: number): number {
    const result = this.#db
      .prepare(
        "UPDATE runs SET outcome = 'abandoned', ended_at = ?, duration_ms = ? - started_at WHERE job = ? AND outcome = 'running'",
      )
      .run(now, now, job);
    return Number(result.changes);
  }

  /** Marks one run abandoned, unless it ended meanwhile. */
  abandonRun(runId: string, now: number): void {
    this.#db
      .prepare(
        "UPDATE runs SET outcome = 'abandoned', ended_at = ?, duration_ms = ? - started_at WHERE run_id = ? AND outcome = 'running'",
      )
      .run(now, now, runId);
  }

  appendLog(runId: string, at: number, level: number, msg: string, fields: Record<string, unknown>): void {
    this.#db
      .prepare(
        `INSERT INTO run_logs (run_id, seq, at, level, msg, fields)
         SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ? FROM run_logs WHERE run_id = ?`,
      )
      .run(runId, at, level, msg, JSON.stringify(fields), runId);
  }

  /** The run's log lines in order, after `afterSeq` and at `minLevel` or above. */
  logs(runId: string, options: { afterSeq?: number; minLevel?: number } = {}): LogLine[] {
    const rows = this.#db
      .prepare("SELECT * FROM run_logs WHERE run_id = ? AND seq > ? AND level >= ? ORDER BY seq")
      .all(runId, options.afterSeq ?? 0, options.minLevel ?? 0) as unknown as {
      run_id: string;
      seq: number;
      at: number;
      level: number;
      msg: string;
      fields: string;
    }[];
    return rows.map((r) => ({
      runId: r.run_id,
      seq: r.seq,
      at: r.at,
      level: r.level,
      msg: r.msg,
      fields: JSON.parse(r.fields) as Record<string, unknown>,
    }));
  }

  /** Deletes the job's ended runs (and their logs) that started before `before`; returns how many. */
  prune(job: string, before: number): number {
    const result = this.#db
      .prepare("DELETE FROM runs WHERE job = ? AND started_at < ? AND outcome != 'running'")
      .run(job, before);
    return Number(result.changes);
  }
}

function toRecord(row: RunRow): RunRecord {
  let error: SyncError | null = null;
  if (row.error_kind !== null) {
    error = {
      kind: row.error_kind as SyncErrorKind,
      retryable: row.error_retryable === 1,
      name: row.error_name ?? "",
      message: row.error_message ?? "",
    };
  }
  return {
    runId: row.run_id,
    job: row.job,
    trigger: row.trigger as RunTrigger,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    durationMs: row.duration_ms,
    outcome: row.outcome as RunOutcome,
    messages: row.messages,
    bytes: row.bytes,
    deadLetters: row.dead_letters,
    tables: JSON.parse(row.tables) as TableReport[],
    error,
    pid: row.pid,
    host: row.host,
    ...(row.kind === "maintenance" ? { kind: "maintenance" as const } : {}),
    ...(row.maintenance === null ? {} : { maintenance: JSON.parse(row.maintenance) as TableMaintenanceReport[] }),
  };
}
