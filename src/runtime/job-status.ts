// What `floe status` and the service's metrics say about a job now: its last run and last
// successful run (from the run store), its next run (from its schedule), the lag of each
// partition (the high watermark now minus the offset the job resumes from: the table's
// committed offset from its snapshot summary, else the group's or the log start, as the next
// sync plans it), the retention warning (retention.ts), and when asked (floe status for a
// `cluster:` job, the UI for any job) the members of its group with their partitions and lag,
// and the group's last rebalance as its leader noted it (kafka/rebalance-note.ts). Lag,
// retention and members need the job's cluster and catalog; without them (unreachable) the
// status says why and keeps the rest.
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
  /** What the member gained and gave up at the group's last rebalance; absent when no note says. */
  moved?: { gained: TopicPartition[]; gaveUp: TopicPartition[] };
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

/** The group's last rebalance: the generation its members are in, and when the leader assigned it. */
export interface LastRebalance {
  generationId: number;
  /** ms since the epoch, the leader's clock. */
  at: number;
}

export interface GroupStatus {
  /** The consumer group's id. */
  group: string;
  /** The broker's group state (Stable, PreparingRebalance, Empty, Dead when it does not exist, ...). */
  state: string;
  /**
   * "classic", or "consumer" for a group of KIP-848's protocol, whose members DescribeGroups does
   * not list (floe's members are classic); null when the group does not exist.
   */
  protocol: string | null;
  members: MemberStatus[];
  /** null when no member carries a floe leader's note (no member, or members that are not floe). */
  lastRebalance: LastRebalance | null;
}

export interface JobLag {
  partitions: PartitionLag[];
  retention: TopicRetention[];
  /** When asked for (`members`): the job's consumer group, its members and its last rebalance. */
  group?: GroupStatus;
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
 * with `members`, also the job's consumer group: its members and its last rebalance.
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
    ...(members ? { group: await groupStatus(job, connections, partitions) } : {}),
  };
}

/** The members of the job's group, each with the job's partitions it was assigned and their lag. */
async function groupStatus(
  job: Job,
  connections: JobConnections,
  partitions: readonly PartitionLag[],
): Promise<GroupStatus> {
  const activity = await connections.source.describeGroup(job.consumerGroup);
  const lagOf = new Map(partitions.map((p) => [`${p.topic}\u0000${p.partition}`, p.lag]));
  const ofJob = (byTopic: ReadonlyMap<string, readonly number[]>): TopicPartition[] =>
    [...byTopic].flatMap(([topic, ps]) =>
      ps.filter((p) => lagOf.has(`${topic}\u0000${p}`)).map((partition) => ({ topic, partition })),
    );
  // Members are in one generation once the group is stable; mid-rebalance some may still carry the
  // note of the one before: the newest note is the last rebalance, and only its moves are shown.
  const newest = activity.members.reduce<LastRebalance | null>(
    (found, m) =>
      m.rebalance && (found === null || m.rebalance.generationId > found.generationId)
        ? { generationId: m.rebalance.generationId, at: m.rebalance.assignedAt }
        : found,
    null,
  );
  const members = activity.members.map((m): MemberStatus => {
    const own = ofJob(m.assignment);
    const note = m.rebalance?.generationId === newest?.generationId ? m.rebalance : undefined;
    return {
      memberId: m.memberId,
      clientId: m.clientId,
      host: m.host,
      partitions: own,
      lag: own.reduce((sum, p) => sum + lagOf.get(`${p.topic}\u0000${p.partition}`)!, 0n),
      ...(note ? { moved: { gained: ofJob(note.gained), gaveUp: ofJob(note.gaveUp) } } : {}),
    };
  });
  members.sort((a, b) => (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0));
  return {
    group: job.consumerGroup,
    state: activity.state,
    protocol: activity.type ?? null,
    members,
    lastRebalance: newest,
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
