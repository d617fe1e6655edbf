// A sync of a job, recorded as a run (a sync is one pass of the job; its run is the record the
// run store keeps of it): the sync's events are folded into a run record (run-fold.ts) and
// saved to the run store as they come, logged as lines that carry the run id (and stored with
// the run), and handed on to the caller (progress, metrics). A run that fails before its sync
// starts (Kafka or the catalog unreachable) is recorded as started and failed all the same.
// The caller holds the job's lock (job-lock.ts) for the whole run.
import { hostname } from "node:os";
import type { Job } from "../job/job.ts";
import { classifyError } from "../pipeline/classify-error.ts";
import type { JobConnections } from "../pipeline/connect.ts";
import type { SyncEvent } from "../pipeline/events.ts";
import { newRunId } from "../pipeline/run-id.ts";
import type { SyncChoices, SyncOptions } from "../pipeline/sync-options.ts";
import type { SyncReport } from "../pipeline/sync-report.ts";
import type { RunRecord, RunStore, RunTrigger } from "../state/run-store.ts";
import { logEvent } from "./event-log.ts";
import type { Logger, RunLogSink } from "./logger.ts";
import { RunFold } from "./run-fold.ts";

export interface RecordSyncOptions {
  store: RunStore;
  sink: RunLogSink;
  logger: Logger;
  trigger: RunTrigger;
  /** The job's own state folder (`<root>/<job>`): its upsert key indexes. */
  stateDir: string;
  signal?: AbortSignal;
  /** What the command's flags chose for the sync, handed to it whole. */
  sync?: SyncChoices;
  /** The sync runs as a member of the job's consumer group (the job's `cluster:`). */
  membership?: SyncOptions["membership"];
  /** A run of a continuous job: it reads on until the signal or `until` (ms since the epoch). */
  continuous?: { until: number };
  /** Every event, after the record was updated. */
  onEvent?: (event: SyncEvent, record: RunRecord) => void;
  /** Runs once the sync ended, on its open connections (a lag measurement); its failure is logged, not the run's. */
  afterSync?: (connections: JobConnections, log: Logger) => Promise<void>;
  /** Called with the run id as soon as it is known. */
  onStart?: (runId: string) => void;
  now?: () => number;
}

export interface RecordedSync {
  record: RunRecord;
  /** The sync's report; undefined when it failed. */
  report: SyncReport | undefined;
  /** Why the run failed, as thrown. */
  error: unknown;
}

/** Progress events update the stored record at most this often; the other events every time. */
const PROGRESS_SAVE_MS = 1000;
const DAY_MS = 86_400_000;

export async function recordSync(job: Job, options: RecordSyncOptions): Promise<RecordedSync> {
  const now = options.now ?? Date.now;
  const { store, sink } = options;
  const runId = newRunId(now());
  const log = options.logger.child({ runId, job: job.name });
  sink.route(runId, store);
  options.onStart?.(runId);
  // The caller holds the job's lock: a run still marked running belongs to a process that is gone.
  try {
    const abandoned = store.abandonRunning(job.name, now());
    if (abandoned > 0) {
      // Logged for the job, not the run: the run has no row yet for its lines to hang on.
      options.logger
        .child({ job: job.name })
        .warn(`${abandoned} earlier run(s) of ${job.name} were left running by a process that ended; marked abandoned`);
    }
  } catch (error) {
    options.logger
      .child({ job: job.name })
      .warn({ err: error }, `cannot update the run store ${store.path}: ${(error as Error).message}`);
  }

  const fold = new RunFold({ trigger: options.trigger, pid: process.pid, host: hostname() });
  let savedAt = 0;
  let storeFailed = false;
  const save = (record: RunRecord) => {
    try {
      store.saveRun(record);
    } catch (error) {
      // The run store is the sync's record, not part of it: a store that cannot be written
      // (disk full, a lock held too long) is reported once and never fails the sync.
      if (!storeFailed)
        log.error({ err: error }, `cannot record the run in ${store.path}: ${(error as Error).message}`);
      storeFailed = true;
    }
  };
  const onEvent = (event: SyncEvent) => {
    const record = fold.apply(event);
    if (event.type !== "partition-progress" || event.at - savedAt >= PROGRESS_SAVE_MS) {
      save(record);
      savedAt = event.at;
    }
    logEvent(log, event);
    options.onEvent?.(event, record);
  };

  const startedAt = now();
  let report: SyncReport | undefined;
  let failure: unknown;
  try {
    // Loaded here: a command that only reads the store needs none of the Kafka and Iceberg code.
    const [{ withConnections }, { runSync }] = await Promise.all([
      import("../pipeline/connect.ts"),
      import("../pipeline/sync.ts"),
    ]);
    await withConnections(job, async (connections) => {
      try {
        report = await runSync(job, connections, {
          ...options.sync,
          runId,
          stateDir: options.stateDir,
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.continuous ? { continuous: options.continuous } : {}),
          ...(options.membership ? { membership: options.membership } : {}),
          onEvent,
        });
      } finally {
        if (options.afterSync) {
          await options.afterSync(connections, log).catch((error: unknown) => {
            log.warn({ err: error }, `after the run: ${(error as Error).message}`);
          });
        }
      }
    });
  } catch (error) {
    failure = error;
    // Failed before the sync emitted its own end (connecting, or before it started): the same fold records it.
    if (fold.record?.endedAt == null) {
      if (fold.record === undefined) onEvent({ type: "started", job: job.name, runId, at: startedAt });
      onEvent({ type: "failed", error: classifyError(error), durationMs: now() - startedAt, runId, at: now() });
    }
  } finally {
    sink.unroute(runId);
  }
  const record = fold.record!;
  save(record);
  try {
    const pruned = store.prune(job.name, now() - job.historyDays * DAY_MS);
    if (pruned > 0) log.debug(`pruned ${pruned} runs older than ${job.historyDays} days`);
  } catch (error) {
    log.warn({ err: error }, `cannot prune the run store ${store.path}: ${(error as Error).message}`);
  }
  return { record, report, error: failure };
}
