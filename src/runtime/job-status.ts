// What `floe status` and the service's metrics say about a job now: its last run and last
// successful run (from the run store), its next run (from its schedule), the lag of each
// partition (the high watermark now minus the offset the job resumes from: the table's
// committed offset from its snapshot summary, else the group's or the log start, as the next
// sync plans it), the retention warning (retention.ts), and for a `cluster:` job the members of
// its group with their partitions and lag. Lag, retention and members need the job's
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

/** A member of a `cluster:` job's consumer group: who it is, what the group assigned it, its lag. */
export interface MemberStatus {
  memberId: string;
  /** floe-<host>-<pid> for a floe member. */
  clientId: string;
  host: string;
  /** The job's partitions the group assigned it. */
  partitions: { topic: string; partition: number }[];
  /** The lag of those partitions, summed. */
  lag: bigint;
}

export interface JobLag {
  partitions: PartitionLag[];
  retention: TopicRetention[];
  /** For a `cluster:` job: the group's state (Stable, PreparingRebalance, ...) and its members. */
  group?: { state: string; members: MemberStatus[] };
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

/**
 * The lag of every partition of the job's topics and their retention, over open connections;
 * with `members` (floe status), also the members of a `cluster:` job's group.
 */
export async function measureLag(
  job: Job,
  connections: JobConnections,
  { members = false }: { members?: boolean } = {},
): Promise<JobLag> {
  const { planSync } = await import("../pipeline/plan-sync.ts");
  const plan = await planSync(job, connections.source, connections.catalog);
  const topics = plan.bindings.map((t) => t.binding.topic);
  const retention = await connections.source.topicRetentionMs(topics);
  const partitions = plan.offsets.partitions.map((p) => ({
    topic: p.topic,
    partition: p.partition,
    highWatermark: p.highWatermark,
    tableOffset: p.tableOffset,
    resumeOffset: p.startOffset,
    lag: p.highWatermark > p.startOffset ? p.highWatermark - p.startOffset : 0n,
  }));
  return {
    partitions,
    retention: topics.map((topic) => ({ topic, retentionMs: retention.get(topic) ?? null })),
    ...(job.cluster && members ? { group: await groupStatus(job, connections, partitions) } : {}),
  };
}

/** The members of the job's group, each with the job's partitions it was assigned and their lag. */
async function groupStatus(
  job: Job,
  connections: JobConnections,
  partitions: readonly PartitionLag[],
): Promise<{ state: string; members: MemberStatus[] }> {
  const activity = await connections.source.describeGroup(job.consumerGroup);
  const lagOf = new Map(partitions.map((p) => [`${p.topic}\u0000${p.partition}`, p.lag]));
  const members = activity.members.map((m): MemberStatus => {
    const own = [...m.assignment].flatMap(([topic, ps]) =>
      ps.filter((p) => lagOf.has(`${topic}\u0000${p}`)).map((partition) => ({ topic, partition })),
    );
    return {
      memberId: m.memberId,
      clientId: m.clientId,
      host: m.host,
      partitions: own,
      lag: own.reduce((sum, p) => sum + lagOf.get(`${p.topic}\u0000${p.partition}`)!, 0n),
    };
  });
  members.sort((a, b) => (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0));
  return { state: activity.state, members };
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
