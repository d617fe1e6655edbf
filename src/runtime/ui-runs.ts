// The runs of the UI's jobs, on the service's own pieces: the run store (state/run-store.ts)
// for history and logs, recordSync for one recorded run, and the scheduler of `floe run`
// (scheduler.ts) for each job that has a schedule and is not paused, one Scheduler per job,
// replaced when the job changes. Sync now takes the job's sync lock as any run does, so it
// never overlaps a scheduled run or a `floe sync` of the job. Beside them: what the UI shows
// live (progress per partition of a running run), the lag at each run's plan (kept over time
// for the plots) and the lag measured when each run ended (job-status.ts), in lag.db; beside
// them in the same store (state/lag-store.ts), the runs a user cancelled (the run store's
// outcome says only what was committed) and the last Test connection of each source and
// destination (its stored health).
import type { SyncEvent } from "../pipeline/events.ts";
import { OutboundPolicy } from "../pipeline/outbound-policy.ts";
import type { ConfigStore } from "../state/config-store.ts";
import { type LagSample, LagStore } from "../state/lag-store.ts";
import { type RunRecord, RunStore } from "../state/run-store.ts";
import { acquireJobLock } from "./job-lock.ts";
import { type JobLag, measureLag } from "./job-status.ts";
import { createLogger, type Logger, RunLogSink } from "./logger.ts";
import { ServiceMetrics } from "./metrics.ts";
import { type MaintenanceRun, recordMaintenance } from "./recorded-maintenance.ts";
import { recordSync } from "./recorded-sync.ts";
import { startedRecord } from "./run-fold.ts";
import { Scheduler } from "./scheduler.ts";
import { jobStateDir, runStorePath } from "./state-paths.ts";

export interface PartitionLive {
  topic: string;
  partition: number;
  nextOffset: string;
  stopOffset: string;
  messages: number;
}

interface Live {
  runId: string;
  job: string;
  startedAt: number;
  progress: Map<string, PartitionLive>;
  messages: number;
  /** Aborts a Sync now run; a scheduled run is stopped through its Scheduler. */
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

export class UiRuns {
  readonly store: RunStore;
  readonly #config: ConfigStore;
  readonly #root: string;
  readonly #logger: Logger;
  readonly #sink: RunLogSink;
  readonly #metrics: LiveMetrics;
  readonly #lag: LagStore;
  readonly #services = new Map<string, Scheduler>();
  /** By job: its run under way. */
  readonly #live = new Map<string, Live>();
  readonly #done = new Map<string, Promise<void>>();
  /**
   * Per job, the end of its last Sync now: the run's last event clears it from the live runs a
   * moment before its lock is released, and a Sync now or Maintain now in that moment waits for
   * the release instead of answering that the job is busy.
   */
  readonly #settling = new Map<string, Promise<void>>();
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
    this.#lag = LagStore.open(root);
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
      this.#lag.addPlanned(
        job,
        event.at,
        event.partitions.map((p) => ({
          topic: p.topic,
          partition: p.partition,
          lag: Number(p.stopOffset - p.startOffset),
        })),
      );
      for (const p of event.partitions) {
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
    this.#lag.addMeasured(
      job,
      Date.now(),
      lag.partitions.map((p) => ({ topic: p.topic, partition: p.partition, lag: Number(p.lag) })),
    );
  }

  /** The job's lag over every partition at the last measurement, or undefined when none was made yet. */
  measuredLag(name: string): number | undefined {
    return this.#lag.measuredLag(name);
  }

  /** Starts a run now and resolves to its id once it has one; JobBusyError when the job is being synced. */
  async syncNow(name: string): Promise<string> {
    const running = this.#live.get(name);
    if (running) return running.runId;
    const job = this.#config.job(name);
    await this.#policy.checkJob(job);
    const stateDir = jobStateDir(this.#root, name);
    await this.#settling.get(name);
    const lock = await acquireJobLock(stateDir, name, { command: "floe serve (Sync now)" });
    const abort = new AbortController();
    let started!: (id: string) => void;
    const id = new Promise<string>((resolve) => {
      started = resolve;
    });
    const done = recordSync(job, {
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
    const settled = done.catch(() => undefined);
    this.#settling.set(name, settled);
    void settled.then(() => {
      if (this.#settling.get(name) === settled) this.#settling.delete(name);
    });
    const runId = await id;
    this.#done.set(runId, done);
    return runId;
  }

  /** A maintenance pass over the job's tables now, under the job's lock; JobBusyError while it is being synced. */
  async maintainNow(name: string): Promise<MaintenanceRun> {
    const job = this.#config.job(name);
    await this.#policy.checkJob(job);
    await this.#settling.get(name);
    const lock = await acquireJobLock(jobStateDir(this.#root, name), name, { command: "floe serve (Maintain now)" });
    try {
      const pass = await recordMaintenance(job, { store: this.store, logger: this.#logger, trigger: "manual" });
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
    this.#lag.markCancelled(live.runId, Date.now());
    if (live.abort) {
      live.abort.abort();
      return true;
    }
    // A scheduled run: its Scheduler stops (the run commits what it read) and starts again.
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
    return this.#lag.wasCancelled(runId);
  }

  /** Keeps the last Test connection of a stored source or destination, with when it ran. */
  saveHealth(kind: "source" | "destination", name: string, result: object): void {
    this.#lag.saveHealth(kind, name, Date.now(), result);
  }

  /** The last Test connection of a stored source or destination, or null when none was made. */
  health(kind: "source" | "destination", name: string): ({ testedAt: string } & Record<string, unknown>) | null {
    return this.#lag.health(kind, name);
  }

  /** Forgets a deleted record's health. */
  dropHealth(kind: "source" | "destination", name: string): void {
    this.#lag.dropHealth(kind, name);
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
    const record =
      this.store.run(runId) ??
      (mine && startedRecord({ runId: mine.runId, job: mine.job, trigger: "sync", startedAt: mine.startedAt }));
    if (!record) return undefined;
    return { record, progress: mine ? [...mine.progress.values()] : [], liveMessages: mine?.messages };
  }

  lagSamples(name: string): LagSample[] {
    return this.#lag.samples(name);
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
    const service = new Scheduler(
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
