// The runs of the UI's jobs: Sync now, a schedule per job, cancel, and a history of runs with
// their reports, logs and lag samples in a SQLite database in the state directory. One run of
// a job at a time: in this process by the map of running runs, across processes by the job's
// lock (job-lock.ts). The API reaches it only through the RunService interface.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { stringifyJson } from "../iceberg/spec/json.ts";
import type { SyncEvent } from "../sync/events.ts";
import { newRunId } from "../sync/run-id.ts";
import { reduceSyncEvent, type SyncReport } from "../sync/sync-report.ts";
import type { ConfigStore } from "./config-store.ts";
import { acquireJobLock } from "./job-lock.ts";
import { nextRuns } from "./schedule-spec.ts";

export type RunStatus = "running" | "complete" | "partial" | "failed";

export interface RunSummary {
  id: string;
  job: string;
  trigger: "manual" | "schedule";
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  status: RunStatus;
  messages: number;
  bytes: number;
  error: string | null;
}

export interface PartitionLive {
  topic: string;
  partition: number;
  nextOffset: string;
  stopOffset: string;
  messages: number;
}

export interface RunDetail extends RunSummary {
  report: SyncReport | null;
  /** While the run is going: per partition, how far it has read. */
  progress: PartitionLive[];
}

export interface LogLine {
  seq: number;
  at: string;
  level: "debug" | "info" | "warn" | "error";
  msg: string;
}

export interface LagSample {
  at: string;
  topic: string;
  partition: number;
  lag: number;
}

/** What the API needs of a run service; the scheduler of `floe run` can stand behind it. */
export interface RunService {
  syncNow(job: string, trigger?: "manual" | "schedule"): string;
  cancel(job: string): boolean;
  runningRun(job: string): string | undefined;
  listRuns(job: string, limit?: number): RunSummary[];
  getRun(id: string): RunDetail | undefined;
  logs(id: string): LogLine[];
  lagSamples(job: string): LagSample[];
  nextRun(job: string): Date | undefined;
  /** Call after a job was created, changed, paused, resumed or deleted. */
  reschedule(job: string): void;
  /** Resolves once the run is over (tests, shutdown). */
  waitFor(id: string): Promise<void>;
  close(): Promise<void>;
}

/** Runs one sync of the stored job; the caller passes how to (sync/, connections) so that this file stays small. */
export type ExecuteSync = (
  job: ReturnType<ConfigStore["job"]>,
  options: { stateDir: string; runId: string; signal: AbortSignal; onEvent: (event: SyncEvent) => void },
) => Promise<unknown>;

interface Live {
  id: string;
  controller: AbortController;
  report: SyncReport | undefined;
  progress: Map<string, PartitionLive>;
  done: Promise<void>;
}

export class LocalRunService implements RunService {
  readonly #db: DatabaseSync;
  readonly #store: ConfigStore;
  readonly #execute: ExecuteSync;
  readonly #stateDir: string;
  readonly #live = new Map<string, Live>();
  readonly #byId = new Map<string, Live>();
  readonly #timers = new Map<string, { at: Date; timer: NodeJS.Timeout }>();
  #closed = false;

  constructor(stateDir: string, store: ConfigStore, execute: ExecuteSync) {
    mkdirSync(stateDir, { recursive: true });
    this.#stateDir = stateDir;
    this.#store = store;
    this.#execute = execute;
    this.#db = new DatabaseSync(join(stateDir, "runs.db"));
    this.#db.exec("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;");
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS runs (
        id TEXT PRIMARY KEY, job TEXT NOT NULL, trigger TEXT NOT NULL, started_at INTEGER NOT NULL,
        finished_at INTEGER, status TEXT NOT NULL, messages INTEGER NOT NULL DEFAULT 0,
        bytes INTEGER NOT NULL DEFAULT 0, report TEXT, error TEXT);
      CREATE INDEX IF NOT EXISTS runs_job ON runs (job, started_at);
      CREATE TABLE IF NOT EXISTS logs (run_id TEXT NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL,
        level TEXT NOT NULL, msg TEXT NOT NULL, PRIMARY KEY (run_id, seq));
      CREATE TABLE IF NOT EXISTS lag (job TEXT NOT NULL, at INTEGER NOT NULL, topic TEXT NOT NULL,
        partition INTEGER NOT NULL, lag INTEGER NOT NULL);
    `);
    // A run left "running" by a process that died is over.
    this.#db
      .prepare("UPDATE runs SET status = 'failed', error = 'the process running it stopped' WHERE status = 'running'")
      .run();
    for (const job of store.list("job")) this.reschedule(String(job["name"]));
  }

  syncNow(job: string, trigger: "manual" | "schedule" = "manual"): string {
    const running = this.#live.get(job);
    if (running) return running.id;
    const id = newRunId();
    const controller = new AbortController();
    const live: Live = { id, controller, report: undefined, progress: new Map(), done: Promise.resolve() };
    this.#live.set(job, live);
    this.#byId.set(id, live);
    this.#db
      .prepare("INSERT INTO runs (id, job, trigger, started_at, status) VALUES (?, ?, ?, ?, 'running')")
      .run(id, job, trigger, Date.now());
    let seq = 0;
    const log = (level: LogLine["level"], msg: string) =>
      this.#db.prepare("INSERT INTO logs VALUES (?, ?, ?, ?, ?)").run(id, seq++, Date.now(), level, msg);
    live.done = (async () => {
      let error: string | null = null;
      try {
        const config = this.#store.job(job);
        const stateDir = join(this.#stateDir, "jobs", job);
        log("info", `run ${id} of job ${job} (${trigger})`);
        const lock = await acquireJobLock(stateDir, job, { command: "floe serve" });
        try {
          await this.#execute(config, {
            stateDir,
            runId: id,
            signal: controller.signal,
            onEvent: (event) => this.#onEvent(job, live, event, log),
          });
        } finally {
          lock.release();
        }
      } catch (failure) {
        error = failure instanceof Error ? failure.message : String(failure);
        if (live.report?.status !== "failed") log("error", error);
      }
      const report = live.report;
      const status: RunStatus = error !== null ? "failed" : ((report?.status as RunStatus) ?? "failed");
      const bytes = report?.tables.reduce((sum, t) => sum + t.bytesRead, 0) ?? 0;
      this.#db
        .prepare(
          "UPDATE runs SET finished_at = ?, status = ?, messages = ?, bytes = ?, report = ?, error = ? WHERE id = ?",
        )
        .run(
          Date.now(),
          status,
          report?.messagesRead ?? 0,
          bytes,
          report ? stringifyJson(report, { bigints: "strings" }) : null,
          error,
          id,
        );
      this.#live.delete(job);
      this.#byId.delete(id);
    })();
    return id;
  }

  #onEvent(job: string, live: Live, event: SyncEvent, log: (level: LogLine["level"], msg: string) => void): void {
    live.report = reduceSyncEvent(live.report, event);
    switch (event.type) {
      case "planned": {
        const insert = this.#db.prepare("INSERT INTO lag VALUES (?, ?, ?, ?, ?)");
        for (const p of event.partitions) {
          insert.run(job, event.at, p.topic, p.partition, Number(p.stopOffset - p.startOffset));
          live.progress.set(`${p.topic}:${p.partition}`, {
            topic: p.topic,
            partition: p.partition,
            nextOffset: String(p.startOffset),
            stopOffset: String(p.stopOffset),
            messages: 0,
          });
        }
        log(
          "info",
          `planned ${event.tables.length} table(s): ${event.tables.map((t) => `${t.topic} -> ${t.table} (${t.mode})`).join(", ")}; ${event.messagesToRead} messages to read`,
        );
        if (event.skippedTopics.length > 0) {
          const shown = event.skippedTopics
            .slice(0, 5)
            .map((s) => `${s.topic} (${s.reason})`)
            .join(", ");
          const more = event.skippedTopics.length > 5 ? ` and ${event.skippedTopics.length - 5} more` : "";
          log("debug", `skipped ${event.skippedTopics.length} topic(s): ${shown}${more}`);
        }
        for (const l of event.lostMessages)
          log("warn", `${l.topic} partition ${l.partition}: ${l.lost} messages expired unread`);
        break;
      }
      case "partition-progress":
        live.progress.set(`${event.topic}:${event.partition}`, {
          topic: event.topic,
          partition: event.partition,
          nextOffset: String(event.nextOffset),
          stopOffset: String(event.stopOffset),
          messages: event.messages,
        });
        log(
          "debug",
          `${event.topic} partition ${event.partition}: read up to offset ${event.nextOffset} of ${event.stopOffset}`,
        );
        break;
      case "dead-letters":
        log("warn", `${event.count} dead letter(s) of ${event.topic} committed to ${event.table}`);
        break;
      case "table-committed": {
        const r = event.report;
        log(
          "info",
          `${r.table}: committed ${r.recordsAdded} record(s) in ${r.dataFilesAdded} data file(s), ${r.deletionVectorsAdded} deletion vector(s), ${r.positionsDeleted} position(s) deleted, ${r.deadLetters} dead letter(s) (snapshot ${r.snapshotId ?? "none"})`,
        );
        break;
      }
      case "finished":
        log(
          event.status === "complete" ? "info" : "warn",
          `finished (${event.status}): ${event.messagesRead} messages in ${Math.round(event.durationMs)} ms${event.readError ? `; ${event.readError}` : ""}`,
        );
        break;
      case "failed":
        log(
          "error",
          `failed (${event.error.kind}${event.error.retryable ? ", retryable" : ""}): ${event.error.message}`,
        );
        break;
      case "started":
        break;
    }
  }

  cancel(job: string): boolean {
    const live = this.#live.get(job);
    if (!live) return false;
    live.controller.abort();
    return true;
  }

  runningRun(job: string): string | undefined {
    return this.#live.get(job)?.id;
  }

  listRuns(job: string, limit = 50): RunSummary[] {
    const rows = this.#db
      .prepare("SELECT * FROM runs WHERE job = ? ORDER BY started_at DESC LIMIT ?")
      .all(job, limit) as unknown as RunRow[];
    return rows.map(summary);
  }

  getRun(id: string): RunDetail | undefined {
    const row = this.#db.prepare("SELECT * FROM runs WHERE id = ?").get(id) as unknown as RunRow | undefined;
    if (!row) return undefined;
    const live = this.#byId.get(id);
    const report = live ? (live.report ?? null) : row.report ? (JSON.parse(row.report) as SyncReport) : null;
    const shown = summary(row);
    if (live) shown.messages = live.report?.messagesRead ?? 0;
    return { ...shown, report, progress: live ? [...live.progress.values()] : [] };
  }

  logs(id: string): LogLine[] {
    const rows = this.#db.prepare("SELECT seq, at, level, msg FROM logs WHERE run_id = ? ORDER BY seq").all(id) as {
      seq: number;
      at: number;
      level: LogLine["level"];
      msg: string;
    }[];
    return rows.map((r) => ({ ...r, at: new Date(r.at).toISOString() }));
  }

  lagSamples(job: string): LagSample[] {
    const rows = this.#db
      .prepare("SELECT at, topic, partition, lag FROM lag WHERE job = ? ORDER BY at LIMIT 5000")
      .all(job) as { at: number; topic: string; partition: number; lag: number }[];
    return rows.map((r) => ({ ...r, at: new Date(r.at).toISOString() }));
  }

  nextRun(job: string): Date | undefined {
    return this.#timers.get(job)?.at;
  }

  reschedule(job: string): void {
    const old = this.#timers.get(job);
    if (old) clearTimeout(old.timer);
    this.#timers.delete(job);
    if (this.#closed || !this.#store.has("job", job)) return;
    const record = this.#store.get("job", job);
    const schedule = record["schedule"];
    if (typeof schedule !== "string" || record["paused"] === true) return;
    const [at] = nextRuns(schedule, 1);
    if (!at) return;
    // Timers cap at about 24.8 days; a later run is re-armed when the timer fires early.
    const delay = Math.min(at.getTime() - Date.now(), 2 ** 31 - 1);
    const timer = setTimeout(
      () => {
        if (Date.now() >= at.getTime() - 1000 && !this.#live.has(job)) this.syncNow(job, "schedule");
        this.reschedule(job);
      },
      Math.max(0, delay),
    );
    timer.unref();
    this.#timers.set(job, { at, timer });
  }

  async waitFor(id: string): Promise<void> {
    await this.#byId.get(id)?.done;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    for (const live of this.#live.values()) live.controller.abort();
    await Promise.all([...this.#live.values()].map((l) => l.done));
    this.#db.close();
  }
}

interface RunRow {
  id: string;
  job: string;
  trigger: "manual" | "schedule";
  started_at: number;
  finished_at: number | null;
  status: RunStatus;
  messages: number;
  bytes: number;
  report: string | null;
  error: string | null;
}

function summary(row: RunRow): RunSummary {
  return {
    id: row.id,
    job: row.job,
    trigger: row.trigger,
    startedAt: new Date(row.started_at).toISOString(),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at).toISOString(),
    durationMs: row.finished_at === null ? null : row.finished_at - row.started_at,
    status: row.status,
    messages: row.messages,
    bytes: row.bytes,
    error: row.error,
  };
}
