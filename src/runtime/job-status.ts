// What `floe status` and the service's metrics say about a job now: its last run and last
// successful run (from the run store), its next run (from its schedule), the lag of each
// partition (the high watermark now minus the offset the job resumes from: the table's
// committed offset from its snapshot summary, else the group's or the log start, as the next
// sync plans it), and the retention warning (retention.ts). Lag and retention need the job's
// cluster and catalog; without them (unreachable) the status says why and keeps the rest.
import type { Job } from "../job/job.ts";
import type { JobConnections } from "../pipeline/connect.ts";
import type { RunRecord, RunStore } from "../state/run-store.ts";
import { retentionWarning, type TopicRetention } from "./retention.ts";

export interface PartitionLag {
  topic: string;
  partition: number;
  highWatermark: bigint;
  /** The offset recorded in the table's snapshot summary; null when the table has none. */
  tableOffset: bigint | null;
  /** Where the next sync resumes (the table's offset when it has one). */
  resumeOffset: bigint;
  lag: bigint;
}

export interface JobLag {
  partitions: PartitionLag[];
  retention: TopicRetention[];
}

export interface JobStatus {
  job: string;
  schedule: string | null;
  lastRun: RunRecord | null;
  lastSuccess: RunRecord | null;
  /** ms since the epoch; null without a schedule. */
  nextRun: number | null;
  /** null when the cluster or the catalog could not be asked (lagError says why). */
  lag: JobLag | null;
  lagError?: string;
  /** Set when the time since the last successful run nears the shortest retention.ms. */
  retentionWarning: string | null;
}

/** The lag of every partition of the job's topics and their retention, over open connections. */
export async function measureLag(job: Job, connections: JobConnections): Promise<JobLag> {
  const { planSync } = await import("../pipeline/plan-sync.ts");
  const plan = await planSync(job, connections.source, connections.catalog);
  const topics = plan.bindings.map((t) => t.binding.topic);
  const retention = await connections.source.topicRetentionMs(topics);
  return {
    partitions: plan.offsets.partitions.map((p) => ({
      topic: p.topic,
      partition: p.partition,
      highWatermark: p.highWatermark,
      tableOffset: p.tableOffset,
      resumeOffset: p.startOffset,
      lag: p.highWatermark > p.startOffset ? p.highWatermark - p.startOffset : 0n,
    })),
    retention: topics.map((topic) => ({ topic, retentionMs: retention.get(topic) ?? null })),
  };
}

/** The job's status from the store, plus lag and retention when `lag` is given. */
export function jobStatus(
  job: Job,
  store: RunStore,
  now: number,
  lag: { lag: JobLag } | { error: string } | undefined,
): JobStatus {
  const lastRun = store.lastRun(job.name) ?? null;
  const lastSuccess = store.lastSuccess(job.name) ?? null;
  const measured = lag && "lag" in lag ? lag.lag : null;
  const firstRun = lastSuccess === null ? store.firstRun(job.name) : undefined;
  return {
    job: job.name,
    schedule: job.schedule?.text ?? null,
    lastRun,
    lastSuccess,
    nextRun: job.schedule ? job.schedule.next(now) : null,
    lag: measured,
    ...(lag && "error" in lag ? { lagError: lag.error } : {}),
    retentionWarning: measured
      ? (retentionWarning(lastSuccess?.startedAt, firstRun?.startedAt, measured.retention, now) ?? null)
      : null,
  };
}
