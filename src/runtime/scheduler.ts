// `floe run`: each job on its schedule, until stopped. One loop per job: wait for the next
// tick (a continuous job has none: its runs follow one another, each reading until it is
// stopped, an hour has passed or the job's maintenance is due), take the job's sync lock (a `floe sync` of the job running then: the tick is skipped,
// with a warning naming it), record a sync of the job (recorded-sync.ts), feed the metrics and the
// alerts, and pick the next attempt (next-attempt.ts). For as long as it schedules a job the
// service holds the job's run lock, so a second `floe run` of the job exits naming this one (or
// waits with --wait, a standby).
//
// stop(): the running syncs stop reading and commit what they read (their signal), the loops
// end. A sync that does not end within the grace period is abandoned: the process exits, which
// leaves at most unreferenced files (nothing is visible before a commit, and a commit is
// atomic), and its run is marked abandoned in the store.
import type { Job } from "../job/job.ts";
import type { Secret } from "../job/secret.ts";
import { GroupMembershipError, type MemberLease } from "../kafka/group-member.ts";
import type { SyncChoices } from "../pipeline/sync-options.ts";
import type { RunStore, RunTrigger } from "../state/run-store.ts";
import { type Alert, postAlert, runAlerts } from "./alerts.ts";
import { openMembership } from "./cluster-membership.ts";
import { acquireJobLock, JobBusyError, type JobLock } from "./job-lock.ts";
import { type JobLag, measureLag } from "./job-status.ts";
import type { Logger, RunLogSink } from "./logger.ts";
import type { ServiceMetrics } from "./metrics.ts";
import { type Backoff, DEFAULT_BACKOFF, nextAttempt } from "./next-attempt.ts";
import { maintenanceDue, maintenanceDueAt, recordMaintenance } from "./recorded-maintenance.ts";
import { recordSync } from "./recorded-sync.ts";
import { retentionWarning } from "./retention.ts";
import { jobStateDir } from "./state-paths.ts";

export interface ScheduledJob {
  job: Job & { schedule: NonNullable<Job["schedule"]> };
  /** The job file, for the lock holder's message. */
  file: string;
  /** The state root: the job's folder is <root>/<job>. */
  root: string;
  store: RunStore;
}

export interface SchedulerOptions {
  logger: Logger;
  sink: RunLogSink;
  metrics?: ServiceMetrics;
  /** For the jobs whose file sets no alerts.webhook. */
  webhook?: Secret;
  backoff?: Backoff;
  /** What `floe run`'s flags chose for every sync. */
  sync?: SyncChoices;
  /** Wait for another `floe run` of a job to end instead of failing with JobBusyError. */
  waitMs?: number;
}

/** A scheduled job as the service sees it now. */
export interface ScheduledJobState {
  job: string;
  /** When its next run starts (ms since the epoch); null while a run is under way. */
  nextRun: number | null;
  nextTrigger: RunTrigger;
  /** The run under way, if any. */
  runningRunId: string | null;
  /** Failed runs in a row. */
  failures: number;
}

/** The longest run of a continuous job: the run history keeps one record an hour, not one a commit. */
export const CONTINUOUS_RUN_MS = 3_600_000;

interface LoopState {
  state: ScheduledJobState;
  /** Ends the wait for the next tick (a "run now"). */
  wake: () => void;
}

interface Running {
  runId: string | undefined;
  store: RunStore;
  abort: AbortController;
}

export class Scheduler {
  readonly #jobs: readonly ScheduledJob[];
  readonly #options: SchedulerOptions;
  readonly #stop = new AbortController();
  readonly #running = new Set<Running>();
  readonly #runLocks: JobLock[] = [];
  readonly #states = new Map<string, LoopState>();
  #loops: Promise<void>[] = [];

  constructor(jobs: readonly ScheduledJob[], options: SchedulerOptions) {
    this.#jobs = jobs;
    this.#options = options;
  }

  /** Takes every job's run lock (or throws JobBusyError naming the other `floe run`), then starts the loops. */
  async start(): Promise<void> {
    try {
      for (const { job, file, root } of this.#jobs) {
        this.#runLocks.push(
          await acquireJobLock(jobStateDir(root, job.name), job.name, {
            lock: "run",
            waitMs: this.#options.waitMs ?? 0,
            signal: this.#stop.signal,
            command: `floe run --config ${file}`,
          }),
        );
      }
    } catch (error) {
      this.#releaseRunLocks();
      throw error;
    }
    for (const scheduled of this.#jobs) {
      const last = scheduled.store.lastSuccess(scheduled.job.name);
      if (last) this.#options.metrics?.setLastSuccess(scheduled.job.name, last.startedAt);
    }
    this.#loops = this.#jobs.map((scheduled) => this.#loop(scheduled));
  }

  /** Resolves when every loop has ended (after stop()); a loop that fails stops the others, and its error is thrown. */
  async done(): Promise<void> {
    const results = await Promise.allSettled(
      this.#loops.map((loop) =>
        loop.catch((error: unknown) => {
          this.stop();
          throw error;
        }),
      ),
    );
    this.#releaseRunLocks();
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  }

  /** Stops the loops; running syncs stop reading and commit what they read. */
  stop(): void {
    this.#stop.abort();
    for (const running of this.#running) running.abort.abort();
  }

  /** Each job's next run and the run under way: for a status page. */
  jobs(): ScheduledJobState[] {
    return [...this.#states.values()].map(({ state }) => ({ ...state }));
  }

  /**
   * Starts a run of the job now instead of at its next tick ("sync now"); false when the service
   * does not schedule that job, or a run of it is under way (the request is then not queued).
   */
  runNow(job: string): boolean {
    const loop = this.#states.get(job);
    if (!loop || loop.state.runningRunId !== null || loop.state.nextRun === null || this.stopping) return false;
    loop.wake();
    return true;
  }

  get stopping(): boolean {
    return this.#stop.signal.aborted;
  }

  /** Marks the runs still under way abandoned (the process is about to exit without them); returns their ids. */
  abandonRunning(now = Date.now()): string[] {
    const ids: string[] = [];
    for (const { runId, store } of this.#running) {
      if (runId === undefined) continue;
      store.abandonRun(runId, now);
      ids.push(runId);
    }
    return ids;
  }

  #releaseRunLocks(): void {
    for (const lock of this.#runLocks.splice(0)) lock.release();
  }

  async #loop({ job, file, root, store }: ScheduledJob): Promise<void> {
    const { logger, metrics } = this.#options;
    const log = logger.child({ job: job.name });
    const stateDir = jobStateDir(root, job.name);
    const webhook = job.alerts.webhook ?? this.#options.webhook;
    let failures = 0;
    let retryable = false;
    let lastLag: JobLag | undefined;
    let retentionAlerted = false;
    // The time since the last successful run against the topics' retention, measured after an
    // earlier run: checked when a run fails or a tick is skipped (the job is not landing), and
    // alerted once until a run succeeds.
    const retentionAlert = (runId?: string): Alert | undefined => {
      const warning =
        lastLag &&
        retentionWarning(
          store.lastSuccess(job.name)?.startedAt,
          store.firstRun(job.name)?.startedAt,
          lastLag.retention,
          Date.now(),
        );
      if (!warning) return undefined;
      log.warn(runId ? { runId } : {}, `retention: ${warning}`);
      if (retentionAlerted) return undefined;
      retentionAlerted = true;
      return {
        kind: "retention",
        job: job.name,
        ...(runId ? { runId } : {}),
        text: `floe: job ${job.name}: ${warning}`,
      };
    };
    let next: { at: number; trigger: RunTrigger } = { at: job.schedule.next(Date.now()), trigger: "schedule" };
    const state: ScheduledJobState = {
      job: job.name,
      nextRun: next.at,
      nextTrigger: next.trigger,
      runningRunId: null,
      failures: 0,
    };
    let wake = new AbortController();
    this.#states.set(job.name, { state, wake: () => wake.abort() });
    // Left (its partitions handed to the other members at once) when the loop ends.
    const membership = job.cluster
      ? await openMembership({ ...job, cluster: job.cluster }, log, this.#stop.signal, metrics)
      : undefined;
    try {
      log.info(
        { schedule: job.schedule.text, nextRun: new Date(next.at).toISOString() },
        `scheduled: ${job.schedule.text}`,
      );
      while (!this.stopping) {
        await sleepUntil(next.at, AbortSignal.any([this.#stop.signal, wake.signal]));
        if (this.stopping) break;
        if (wake.signal.aborted) {
          next = { at: Date.now(), trigger: "manual" };
          wake = new AbortController();
        }
        state.nextRun = null;
        let lock: JobLock;
        try {
          lock = await acquireJobLock(stateDir, job.name, { command: `floe run --config ${file}` });
        } catch (error) {
          if (!(error instanceof JobBusyError)) throw error;
          next = { at: job.schedule.next(Date.now()), trigger: "schedule" };
          state.nextRun = next.at;
          state.nextTrigger = next.trigger;
          log.warn(
            `${error.message.replace(/; wait for it.*$/, "")}: skipping this tick, next at ${new Date(next.at).toISOString()}`,
          );
          const retention = retentionAlert();
          if (retention && webhook) await sendAlerts(webhook, [retention], log);
          continue;
        }
        const running: Running = { runId: undefined, store, abort: new AbortController() };
        this.#running.add(running);
        let run: Awaited<ReturnType<typeof recordSync>>;
        // As a member of the job's group, a run is a lease of the member's generation: it lands
        // only the member's partitions and stops (committing what it read) at a rebalance.
        const sync = (lease?: MemberLease) =>
          recordSync(job, {
            store,
            sink: this.#options.sink,
            logger: lease ? logger.child({ memberId: lease.memberId, generation: lease.generationId }) : logger,
            trigger: next.trigger,
            stateDir,
            signal: lease ? AbortSignal.any([running.abort.signal, lease.signal]) : running.abort.signal,
            ...(lease ? { membership: lease } : {}),
            ...(this.#options.sync ? { sync: this.#options.sync } : {}),
            ...(job.schedule.continuous
              ? { continuous: { until: continuousUntil(job, store, Date.now(), lease === undefined || lease.leader) } }
              : {}),
            onStart: (runId) => {
              running.runId = runId;
              state.runningRunId = runId;
            },
            onEvent: (event) => metrics?.observeEvent(job.name, event),
            afterSync: async (connections) => {
              lastLag = await measureLag(job, connections);
              metrics?.setLag(job.name, lastLag);
            },
          });
        try {
          try {
            run = membership ? await membership.member.lease(sync) : await sync();
          } catch (error) {
            // The group could not be joined (the cluster unreachable, a member of another kind in
            // the group): no run started; try again after the backoff, as after a failed run.
            if (!(error instanceof GroupMembershipError)) throw error;
            failures++;
            next = nextAttempt(
              job.schedule,
              Date.now(),
              { failures, retryable: error.retryable },
              this.#options.backoff ?? DEFAULT_BACKOFF,
            );
            state.nextRun = next.at;
            state.nextTrigger = next.trigger;
            state.failures = failures;
            log.warn({ err: error }, `${error.message}; trying again at ${new Date(next.at).toISOString()}`);
            continue;
          }
          // Under the same lock as the sync, so a pass never overlaps one; only after a sync that
          // did not fail, and only when the job's maintenance interval has passed.
          if (run.record.outcome !== "failed" && !this.stopping && maintenanceDue(job, store, Date.now())) {
            // Of a job's replicas only the group's leader maintains its tables: one member of a
            // generation, so a lease that moves to another member when the leader leaves or
            // dies; the pass stops between tables when the generation ends.
            const pass = membership
              ? await membership.member
                  .lease((lease) =>
                    lease.leader
                      ? recordMaintenance(job, {
                          store,
                          logger: logger.child({ memberId: lease.memberId, generation: lease.generationId }),
                          trigger: next.trigger,
                          signal: lease.signal,
                        })
                      : Promise.resolve(undefined),
                  )
                  .catch((error: unknown) => {
                    if (!(error instanceof GroupMembershipError)) throw error;
                    log.warn({ err: error }, `maintenance skipped: ${error.message}`);
                    return undefined;
                  })
              : await recordMaintenance(job, { store, logger, trigger: next.trigger });
            if (pass) metrics?.observeMaintenance(pass.record);
          }
        } finally {
          this.#running.delete(running);
          state.runningRunId = null;
          lock.release();
        }
        const { record } = run;
        metrics?.observeRun(record);
        const alerts: Alert[] = runAlerts(record);
        if (record.outcome === "failed") {
          failures++;
          retryable = record.error?.retryable ?? false;
        } else {
          failures = 0;
          retentionAlerted = false;
        }
        if (record.outcome === "failed") {
          const retention = retentionAlert(record.runId);
          if (retention) alerts.push(retention);
        }
        if (webhook) await sendAlerts(webhook, alerts, log);
        if (this.stopping) break;
        next = nextAttempt(job.schedule, Date.now(), { failures, retryable }, this.#options.backoff ?? DEFAULT_BACKOFF);
        state.nextRun = next.at;
        state.nextTrigger = next.trigger;
        state.failures = failures;
        log.info(
          { nextRun: new Date(next.at).toISOString(), trigger: next.trigger },
          next.trigger === "retry"
            ? `retrying after a retryable failure (${failures} in a row) at ${new Date(next.at).toISOString()}`
            : `next run at ${new Date(next.at).toISOString()}`,
        );
      }
      log.info("stopped");
    } finally {
      await membership?.close();
    }
  }
}

/**
 * Where a continuous run stops reading: after an hour, or when the job's maintenance is due and
 * this process `maintains` the job (a replica other than the group's leader does not), so that
 * the pass runs between two runs under the lock; at least one commit interval on.
 */
function continuousUntil(job: Job, store: RunStore, now: number, maintains: boolean): number {
  const until = now + CONTINUOUS_RUN_MS;
  return Math.max(now + job.commit.intervalMs, maintains ? Math.min(until, maintenanceDueAt(job, store)) : until);
}

/** Posts each alert; one that is not delivered is logged, never thrown. */
async function sendAlerts(webhook: Secret, alerts: readonly Alert[], log: Logger): Promise<void> {
  for (const alert of alerts) {
    const fields = { runId: alert.runId, alert: alert.kind };
    await postAlert(webhook, alert).then(
      () => log.info(fields, `alert sent: ${alert.kind}`),
      (error: Error) => log.warn(fields, `alert not sent: ${error.message}`),
    );
  }
}

function sleepUntil(at: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    // setTimeout fires early or late by a little; a tick is never started before its time.
    const wait = () => {
      const left = at - Date.now();
      if (left <= 0 || signal.aborted) {
        signal.removeEventListener("abort", onAbort);
        resolve();
        return;
      }
      timer = setTimeout(wait, Math.min(left, 2 ** 31 - 1));
    };
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    signal.addEventListener("abort", onAbort, { once: true });
    wait();
  });
}
