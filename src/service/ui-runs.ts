// The runs of the UI's jobs, on the service's own pieces: the run store (state/run-store.ts)
// for history and logs, runJob for one recorded run, and the scheduler of `floe run`
// (scheduler.ts) for each job that has a schedule and is not paused, one Service per job,
// replaced when the job changes. Sync now takes the job's sync lock as any run does, so it
// never overlaps a scheduled run or a `floe sync` of the job. Beside them: what the UI shows
// live (progress per partition of a running run), the lag at each run's plan (kept over time
// for the plots) and the lag measured when each run ended (job-status.ts), in lag.db; beside
// them in the same file, the runs a user cancelled (the run store's outcome says only what was
// committed) and the last Test connection of each source and destination (its stored health).
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { ConfigStore } from "../state/config-store.ts";
import { type RunRecord, RunStore } from "../state/run-store.ts";
import type { SyncEvent } from "../sync/events.ts";
import { OutboundPolicy } from "../sync/outbound-policy.ts";
import { acquireJobLock } from "./job-lock.ts";
import { type JobLag, measureLag } from "./job-status.ts";
import { createLogger, type Logger, RunLogSink } from "./logger.ts";
import { ServiceMetrics } from "./metrics.ts";
import { runJob } from "./run-job.ts";
import { type MaintenanceRun, runMaintenance } from "./run-maintenance.ts";
import { Service } from "./scheduler.ts";
import { jobStateDir, runStorePath } from "./state-paths.ts";

export interface PartitionLive {
  topic: string;
  partition: number;
  nextOffset: string;
  stopOffset: string;
  messages: number;
}

export interface LagSample {
  at: string;
  topic: string;
  partition: number;
  lag: number;
}

interface Live {
  runId: string;
  job: string;
  startedAt: number;
  progress: Map<string, PartitionLive>;
  messages: number;
  /** Aborts a Sync now run; a scheduled run is stopped through its Service. */
  abort?: AbortController;
}

/** The scheduler's metrics, also feeding the live view of its runs' events and the lag measured after each run. */
class LiveMetrics extends ServiceMetrics {
  readonly #onEvent: (job: string, event: SyncEvent) => void;
  readonly #onLag: (job: string, lag: JobLag) => void;
  constructor(onEvent: (job: string, event: SyncEvent) => void, onLag: (job: string, lag: JobLag) => void) {
    super();
    this.#onEvent = onEvent;
    this.#onLag = onLag;
  }
  override observeEvent(job: string, event: SyncEvent): void {
    super.observeEvent(job, event);
    this.#onEvent(job, event);
  }
  override setLag(job: string, lag: JobLag): void {
    super.setLag(job, lag);
    this.#onLag(job, lag);
  }
}

function startingRecord(live: Live): RunRecord {
  return {
    runId: live.runId,
    job: live.job,
    trigger: "sync",
    startedAt: live.startedAt,
    endedAt: null,
    durationMs: null,
    outcome: "running",
    messages: 0,
    bytes: 0,
    deadLetters: 0,
    tables: [],
    error: null,
    pid: process.pid,
    host: hostname(),
  };
}

export class UiRuns {
  readonly store: RunStore;
  readonly #config: ConfigStore;
  readonly #root: string;
  readonly #logger: Logger;
  readonly #sink: RunLogSink;
  readonly #metrics: LiveMetrics;
  readonly #lag: DatabaseSync;
  readonly #services = new Map<string, Service>();
  /** By job: its run under way. */
  readonly #live = new Map<string, Live>();
  readonly #done = new Map<string, Promise<void>>();
  #closed = false;

  readonly #policy: OutboundPolicy;

  private constructor(root: string, config: ConfigStore, logger: Logger, sink: RunLogSink, policy: OutboundPolicy) {
    this.#root = root;
    this.#policy = policy;
    this.#config = config;
    this.#logger = logger;
    this.#sink = sink;
    this.store = RunStore.open(runStorePath(root));
    this.#metrics = new LiveMetrics(
      (job, event) => this.#observe(job, event),
      (job, lag) => this.#measured(job, lag),
    );
    mkdirSync(root, { recursive: true });
    this.#lag = new DatabaseSync(join(root, "lag.db"), { timeout: 5000 });
    this.#lag.exec(`PRAGMA journal_mode = WAL;
      CREATE TABLE IF NOT EXISTS lag (job TEXT NOT NULL, at INTEGER NOT NULL, topic TEXT NOT NULL,
        partition INTEGER NOT NULL, lag INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS lag_job ON lag (job, at);
      CREATE TABLE IF NOT EXISTS measured_lag (job TEXT NOT NULL, at INTEGER NOT NULL, topic TEXT NOT NULL,
        partition INTEGER NOT NULL, lag INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS measured_lag_job ON measured_lag (job, at);
      CREATE TABLE IF NOT EXISTS cancelled (run_id TEXT PRIMARY KEY, at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS health (kind TEXT NOT NULL, name TEXT NOT NULL, at INTEGER NOT NULL,
        result TEXT NOT NULL, PRIMARY KEY (kind, name));`);
  }

  /** Opens the run store of the state root and schedules every stored job that has a schedule. */
  static async open(
    root: string,
    config: ConfigStore,
    logFormat: "pretty" | "json" | "none",
    policy: OutboundPolicy = new OutboundPolicy(),
  ): Promise<UiRuns> {
    const sink = new RunLogSink();
    const logger = await createLogger({ level: "info", format: logFormat, sink });
    const runs = new UiRuns(root, config, logger, sink, policy);
    for (const job of config.list("job")) await runs.reschedule(String(job["name"]));
    return runs;
  }

  get metrics(): ServiceMetrics {
    return this.#metrics;
  }

  #observe(job: string, event: SyncEvent): void {
    let live = this.#live.get(job);
    if (!live || live.runId !== event.runId) {
      live = { runId: event.runId, job, startedAt: event.at, progress: new Map(), messages: 0 };
      this.#live.set(job, live);
    }
    if (event.type === "planned") {
      const insert = this.#lag.prepare("INSERT INTO lag VALUES (?, ?, ?, ?, ?)");
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
    } else if (event.type === "partition-progress") {
      live.messages = event.messagesRead;
      live.progress.set(`${event.topic}:${event.partition}`, {
        topic: event.topic,
        partition: event.partition,
        nextOffset: String(event.nextOffset),
        stopOffset: String(event.stopOffset),
        messages: event.messages,
      });
    } else if (event.type === "finished" || event.type === "failed") {
      this.#live.delete(job);
    }
  }

  /** The lag measured after a run (job-status.ts): the high watermark minus where the next sync resumes. */
  #measured(job: string, lag: JobLag): void {
    const at = Date.now();
    const insert = this.#lag.prepare("INSERT INTO measured_lag VALUES (?, ?, ?, ?, ?)");
    for (const p of lag.partitions) insert.run(job, at, p.topic, p.partition, Number(p.lag));
  }

  /** The job's lag over every partition at the last measurement, or undefined when none was made yet. */
  measuredLag(name: string): number | undefined {
    const row = this.#lag
      .prepare(
        "SELECT SUM(lag) AS lag FROM measured_lag WHERE job = ? AND at = (SELECT MAX(at) FROM measured_lag WHERE job = ?)",
      )
      .get(name, name) as { lag: number | null } | undefined;
    return row?.lag ?? undefined;
  }

  /** Starts a run now and resolves to its id once it has one; JobBusyError when the job is being synced. */
  async syncNow(name: string): Promise<string> {
    const running = this.#live.get(name);
    if (running) return running.runId;
    const job = this.#config.job(name);
    await this.#policy.checkJob(job);
    const stateDir = jobStateDir(this.#root, name);
    const lock = await acquireJobLock(stateDir, name, { command: "floe serve (Sync now)" });
    const abort = new AbortController();
    let started!: (id: string) => void;
    const id = new Promise<string>((resolve) => {
      started = resolve;
    });
    const done = runJob(job, {
      store: this.store,
      sink: this.#sink,
      logger: this.#logger,
      trigger: "sync",
      stateDir,
      signal: abort.signal,
      onStart: (runId) => {
        this.#live.set(name, { runId, job: name, startedAt: Date.now(), progress: new Map(), messages: 0, abort });
        started(runId);
      },
      onEvent: (event) => this.#metrics.observeEvent(name, event),
      afterSync: async (connections) => this.#metrics.setLag(name, await measureLag(job, connections)),
    })
      .then((run) => {
        this.#metrics.observeRun(run.record);
      })
      .finally(() => {
        lock.release();
        if (this.#live.get(name)?.abort === abort) this.#live.delete(name);
      });
    const runId = await id;
    this.#done.set(runId, done);
    return runId;
  }

  /** A maintenance pass over the job's tables now, under the job's lock; JobBusyError while it is being synced. */
  async maintainNow(name: string): Promise<MaintenanceRun> {
    const job = this.#config.job(name);
    await this.#policy.checkJob(job);
    const lock = await acquireJobLock(jobStateDir(this.#root, name), name, { command: "floe serve (Maintain now)" });
    try {
      const pass = await runMaintenance(job, { store: this.store, logger: this.#logger, trigger: "manual" });
      this.#metrics.observeMaintenance(pass.record);
      return pass;
    } finally {
      lock.release();
    }
  }

  /** Stops the job's run under way: it stops reading and commits what it read. */
  async cancel(name: string): Promise<boolean> {
    const live = this.#live.get(name);
    if (!live) return false;
    this.#lag.prepare("INSERT OR IGNORE INTO cancelled VALUES (?, ?)").run(live.runId, Date.now());
    if (live.abort) {
      live.abort.abort();
      return true;
    }
    // A scheduled run: its Service stops (the run commits what it read) and starts again.
    const service = this.#services.get(name);
    if (!service) return false;
    service.stop();
    await service.done().catch(() => {});
    this.#services.delete(name);
    await this.reschedule(name);
    return true;
  }

  /** Whether a user cancelled the run (it then committed what it had read and stopped). */
  wasCancelled(runId: string): boolean {
    return this.#lag.prepare("SELECT 1 FROM cancelled WHERE run_id = ?").get(runId) !== undefined;
  }

  /** Keeps the last Test connection of a stored source or destination, with when it ran. */
  saveHealth(kind: "source" | "destination", name: string, result: object): void {
    this.#lag
      .prepare("INSERT OR REPLACE INTO health VALUES (?, ?, ?, ?)")
      .run(kind, name, Date.now(), JSON.stringify(result));
  }

  /** The last Test connection of a stored source or destination, or null when none was made. */
  health(kind: "source" | "destination", name: string): ({ testedAt: string } & Record<string, unknown>) | null {
    const row = this.#lag.prepare("SELECT at, result FROM health WHERE kind = ? AND name = ?").get(kind, name) as
      | { at: number; result: string }
      | undefined;
    if (!row) return null;
    return { ...(JSON.parse(row.result) as Record<string, unknown>), testedAt: new Date(row.at).toISOString() };
  }

  /** Forgets a deleted record's health. */
  dropHealth(kind: "source" | "destination", name: string): void {
    this.#lag.prepare("DELETE FROM health WHERE kind = ? AND name = ?").run(kind, name);
  }

  runningRun(name: string): string | undefined {
    return this.#live.get(name)?.runId;
  }

  runs(name: string, limit = 50): RunRecord[] {
    return this.store.runs(name, { limit });
  }

  run(runId: string): { record: RunRecord; progress: PartitionLive[]; liveMessages: number | undefined } | undefined {
    const mine = [...this.#live.values()].find((l) => l.runId === runId);
    // A run is stored from its first event; until then (connecting) it is known here only.
    const record = this.store.run(runId) ?? (mine && startingRecord(mine));
    if (!record) return undefined;
    return { record, progress: mine ? [...mine.progress.values()] : [], liveMessages: mine?.messages };
  }

  lagSamples(name: string): LagSample[] {
    const rows = this.#lag
      .prepare("SELECT at, topic, partition, lag FROM lag WHERE job = ? ORDER BY at LIMIT 5000")
      .all(name) as { at: number; topic: string; partition: number; lag: number }[];
    return rows.map((r) => ({ ...r, at: new Date(r.at).toISOString() }));
  }

  /** The job's next scheduled run; undefined when it has no schedule or is paused. */
  nextRun(name: string): Date | undefined {
    if (!this.#services.has(name)) return undefined;
    const schedule = this.#config.job(name).schedule;
    return schedule ? new Date(schedule.next(Date.now())) : undefined;
  }

  /** After a job was created, changed, paused, resumed or deleted: its scheduler is replaced. */
  async reschedule(name: string): Promise<void> {
    const old = this.#services.get(name);
    this.#services.delete(name);
    if (old) {
      old.stop();
      await old.done().catch(() => {});
    }
    if (this.#closed || !this.#config.has("job", name) || this.#config.get("job", name)["paused"] === true) return;
    const job = this.#config.job(name);
    if (job.schedule === undefined) return;
    try {
      await this.#policy.checkJob(job);
    } catch (error) {
      this.#logger.error({ job: name }, `the schedule of ${name} is not started: ${(error as Error).message}`);
      return;
    }
    const service = new Service(
      [
        {
          job: { ...job, schedule: job.schedule },
          file: `floe serve job ${name}`,
          root: this.#root,
          store: this.store,
        },
      ],
      {
        logger: this.#logger,
        sink: this.#sink,
        metrics: this.#metrics,
      },
    );
    await service.start();
    service
      .done()
      .catch((error: unknown) =>
        this.#logger.error({ job: name, err: error }, `the schedule of ${name} stopped: ${(error as Error).message}`),
      );
    this.#services.set(name, service);
  }

  /** Resolves once the Sync now run has ended. */
  async waitFor(runId: string): Promise<void> {
    await this.#done.get(runId);
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const live of this.#live.values()) live.abort?.abort();
    for (const service of this.#services.values()) service.stop();
    await Promise.allSettled([...this.#services.values()].map((s) => s.done()));
    await Promise.allSettled([...this.#done.values()]);
    this.store.close();
    this.#lag.close();
  }
}
