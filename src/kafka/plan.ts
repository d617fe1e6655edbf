// Where each partition's read starts and stops.
//
// Start: the offset the table recorded in its last snapshot (the truth: it is committed together
// with the rows), else the consumer group's committed offset, else the log start offset (a
// partition never read). Stop: the last stable offset when the plan is made, exclusive. That is the
// high watermark unless a transaction is open; reads are read_committed, so the broker serves
// nothing past the last stable offset and stopping at the high watermark would wait for the
// transaction to end. Messages of the open transaction are left to the next sync.
//
// Two findings are returned for the caller to act on rather than thrown here:
// - lost: the resume offset is below the log start offset, so retention deleted messages that
//   were never read. The read then starts at the log start offset; the sync must fail unless the
//   user acknowledged the loss (MessagesLostError).
// - ahead: the resume offset is above the high watermark, so the partition is not the one we read
//   (topic deleted and re-created, or truncated by an unclean leader election). Nothing is read
//   there; the sync should fail (OffsetsAheadError): resuming later would silently skip messages.
//
// A topic the caller knows was deleted and re-created since its offsets were committed (its topic
// id changed, see discover.ts) starts at its log start: the committed offsets, the group's as
// much as the caller's, count messages of the deleted topic. Only the caller can know it: the
// group's committed offsets carry no topic id.
//
// A topic the caller resumes (its table's offsets cannot be trusted, and the user chose where to
// go on) has no table offset: "group" starts at the group's offset else the log start,
// "earliest" at the log start, "latest" at the last stable offset (nothing already in the log is read).
import { readGroupOffsets, type TopicPartitionOffsets, type TopicPartitions } from "./commit-offsets.ts";
import type { KafkaCluster } from "./connection.ts";
import { KafkaError } from "./errors.ts";

export type { TopicPartitionOffsets, TopicPartitions };

export type StartSource = "table" | "group" | "log-start" | "log-end";

/** Where to resume a topic whose table offsets are not to be used. */
export type ResumeFrom = "group" | "earliest" | "latest";

export interface PartitionPlan {
  topic: string;
  partition: number;
  /** Earliest offset still in the log. */
  logStartOffset: bigint;
  /** Offset after the last message in the log. */
  highWatermark: bigint;
  /** Offset of the first message of the oldest open transaction; the high watermark when none is open. */
  lastStableOffset: bigint;
  /** The group's committed offset; null when the group has none for this partition, or has it for a deleted topic of this name. */
  groupOffset: bigint | null;
  /** The offset recorded in the table; null when the table has none for this partition. */
  tableOffset: bigint | null;
  startFrom: StartSource;
  /** First offset to read. */
  startOffset: bigint;
  /** Offset to stop before (exclusive). Equal to startOffset when there is nothing to read. */
  stopOffset: bigint;
}

export interface LostMessages {
  topic: string;
  partition: number;
  /** Where the sync would have resumed. */
  resumeOffset: bigint;
  startFrom: StartSource;
  logStartOffset: bigint;
  /** logStartOffset - resumeOffset: offsets deleted unread (fewer messages if the topic is compacted or transactional). */
  lost: bigint;
}

export interface OffsetAhead {
  topic: string;
  partition: number;
  resumeOffset: bigint;
  startFrom: StartSource;
  highWatermark: bigint;
}

export interface OffsetPlan {
  consumerGroup: string;
  /** Sorted by topic, then partition. */
  partitions: PartitionPlan[];
  lost: LostMessages[];
  ahead: OffsetAhead[];
  /** Sum of stopOffset - startOffset: an upper bound of the messages to read. */
  offsetsToRead: bigint;
}

/** Retention deleted messages that were never read; raised by the caller unless the user acknowledged it. */
export class MessagesLostError extends KafkaError {
  override name = "MessagesLostError";
  readonly lost: readonly LostMessages[];

  constructor(lost: readonly LostMessages[]) {
    const total = lost.reduce((sum, l) => sum + l.lost, 0n);
    const each = lost
      .map(
        (l) =>
          `${l.topic} partition ${l.partition}: ${l.lost} (resume at ${l.resumeOffset} from the ${l.startFrom} offset, log starts at ${l.logStartOffset})`,
      )
      .join("; ");
    super(`${total} message(s) expired before they were read: ${each}`);
    this.lost = lost;
  }
}

/** The resume offset is past the end of the log: the partition is not the one that was read. */
export class OffsetsAheadError extends KafkaError {
  override name = "OffsetsAheadError";
  readonly ahead: readonly OffsetAhead[];

  constructor(ahead: readonly OffsetAhead[]) {
    const each = ahead
      .map(
        (a) =>
          `${a.topic} partition ${a.partition}: resume at ${a.resumeOffset} (${a.startFrom} offset) but the log ends at ${a.highWatermark}`,
      )
      .join("; ");
    super(`offsets beyond the end of the log (topic re-created or truncated?): ${each}`);
    this.ahead = ahead;
  }
}

export interface PartitionOffsets extends PartitionWatermarks {
  groupOffset: bigint | null;
  tableOffset: bigint | null;
  /** Start at the last stable offset, whatever the group says (resume from "latest"). */
  startAtEnd?: boolean;
}

/** The plan of one partition from its offsets; pure. */
export function planPartition(
  topic: string,
  partition: number,
  offsets: PartitionOffsets,
): { plan: PartitionPlan; lost?: LostMessages; ahead?: OffsetAhead } {
  const { logStartOffset, highWatermark, lastStableOffset, groupOffset, tableOffset, startAtEnd } = offsets;
  const startFrom: StartSource = startAtEnd
    ? "log-end"
    : tableOffset !== null
      ? "table"
      : groupOffset !== null
        ? "group"
        : "log-start";
  const resumeOffset = startAtEnd ? lastStableOffset : (tableOffset ?? groupOffset ?? logStartOffset);
  const { startAtEnd: _, ...listed } = offsets;
  const base = { topic, partition, ...listed, startFrom };
  if (resumeOffset > highWatermark) {
    const plan = { ...base, startOffset: resumeOffset, stopOffset: resumeOffset };
    return { plan, ahead: { topic, partition, resumeOffset, startFrom, highWatermark } };
  }
  if (resumeOffset < logStartOffset) {
    const plan = { ...base, startOffset: logStartOffset, stopOffset: max(logStartOffset, lastStableOffset) };
    const lost = { topic, partition, resumeOffset, startFrom, logStartOffset, lost: logStartOffset - resumeOffset };
    return { plan, lost };
  }
  return { plan: { ...base, startOffset: resumeOffset, stopOffset: max(resumeOffset, lastStableOffset) } };
}

/** Where a partition's log starts and ends now. */
export interface PartitionWatermarks {
  logStartOffset: bigint;
  highWatermark: bigint;
  lastStableOffset: bigint;
}

/** Topic -> partition -> its watermarks. */
export type TopicPartitionWatermarks = Map<string, Map<number, PartitionWatermarks>>;

export interface OffsetPlanInput {
  topics: readonly TopicPartitions[];
  consumerGroup: string;
  /** Offsets recorded in the tables' snapshot summaries: they win over the group's. */
  tableOffsets?: TopicPartitionOffsets;
  /** Topics deleted and re-created since their offsets were committed: read from the log start, whatever the group says. */
  recreatedTopics?: ReadonlySet<string>;
  /** Topics whose table offsets are not used, and where each resumes instead. */
  resumeFrom?: ReadonlyMap<string, ResumeFrom>;
}

/**
 * Lists the log start offset, high watermark and last stable offset of every partition of the
 * topics, and the group's committed offsets (read without joining the group), and plans each
 * partition (offsetPlan).
 */
export async function planOffsets(cluster: KafkaCluster, input: OffsetPlanInput): Promise<OffsetPlan> {
  if (input.topics.length === 0) return offsetPlan({ ...input, watermarks: new Map(), groupOffsets: new Map() });
  const [watermarks, groupOffsets] = await Promise.all([
    listWatermarks(cluster, input.topics),
    readGroupOffsets(cluster, input.consumerGroup, input.topics),
  ]);
  return offsetPlan({ ...input, watermarks, groupOffsets });
}

/** The log start offset, high watermark and last stable offset of every partition of the topics. */
export async function listWatermarks(
  cluster: KafkaCluster,
  topics: readonly TopicPartitions[],
): Promise<TopicPartitionWatermarks> {
  const watermarks: TopicPartitionWatermarks = new Map();
  if (topics.length === 0) return watermarks;
  const [logStart, highWatermark, lastStable] = await Promise.all([
    listOffsets(cluster, topics, -2n, 0),
    listOffsets(cluster, topics, -1n, 0),
    listOffsets(cluster, topics, -1n, 1),
  ]);
  for (const { topic, partitions } of topics) {
    const byPartition = new Map<number, PartitionWatermarks>();
    for (let partition = 0; partition < partitions; partition++) {
      byPartition.set(partition, {
        logStartOffset: required(logStart, topic, partition, "log start offset"),
        highWatermark: required(highWatermark, topic, partition, "high watermark"),
        lastStableOffset: required(lastStable, topic, partition, "last stable offset"),
      });
    }
    watermarks.set(topic, byPartition);
  }
  return watermarks;
}

/**
 * The plan of every partition of the topics from their watermarks and the group's committed
 * offsets; pure. `tableOffsets` win over the group's; a topic of `recreatedTopics` has neither.
 */
export function offsetPlan(
  input: OffsetPlanInput & { watermarks: TopicPartitionWatermarks; groupOffsets: TopicPartitionOffsets },
): OffsetPlan {
  const { topics, consumerGroup, watermarks, groupOffsets } = input;
  const tableOffsets = input.tableOffsets ?? new Map();
  const recreated = input.recreatedTopics ?? new Set<string>();
  const plan: OffsetPlan = { consumerGroup, partitions: [], lost: [], ahead: [], offsetsToRead: 0n };
  for (const { topic, partitions } of [...topics].sort((a, b) =>
    a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0,
  )) {
    for (let partition = 0; partition < partitions; partition++) {
      const listed = watermarks.get(topic)?.get(partition);
      if (listed === undefined) throw new KafkaError(`no watermarks listed for ${topic} partition ${partition}`);
      const resume = input.resumeFrom?.get(topic);
      const offsets: PartitionOffsets = {
        ...listed,
        groupOffset:
          recreated.has(topic) || (resume !== undefined && resume !== "group")
            ? null
            : (groupOffsets.get(topic)?.get(partition) ?? null),
        tableOffset:
          recreated.has(topic) || resume !== undefined ? null : (tableOffsets.get(topic)?.get(partition) ?? null),
        ...(resume === "latest" ? { startAtEnd: true } : {}),
      };
      const { plan: partitionPlan, lost, ahead } = planPartition(topic, partition, offsets);
      plan.partitions.push(partitionPlan);
      plan.offsetsToRead += partitionPlan.stopOffset - partitionPlan.startOffset;
      if (lost) plan.lost.push(lost);
      if (ahead) plan.ahead.push(ahead);
    }
  }
  return plan;
}

/** ListOffsets for every partition: timestamp -2 is the log start, -1 the end (read_uncommitted: high watermark, read_committed: last stable offset). */
async function listOffsets(
  cluster: KafkaCluster,
  topics: readonly TopicPartitions[],
  timestamp: -1n | -2n,
  isolationLevel: 0 | 1,
): Promise<TopicPartitionOffsets> {
  const what =
    timestamp === -2n ? "log start offsets" : isolationLevel === 1 ? "last stable offsets" : "high watermarks";
  const listed = await cluster.run(
    `listing the ${what} of ${topics.map((t) => t.topic).join(", ")}`,
    (admin) =>
      admin.listOffsets({
        topics: topics.map(({ topic, partitions }) => ({
          name: topic,
          partitions: range(partitions).map((partitionIndex) => ({ partitionIndex, timestamp })),
        })),
        isolationLevel,
      }),
    { topics: topics.map((t) => t.topic) },
  );
  const offsets: TopicPartitionOffsets = new Map();
  for (const { name, partitions } of listed) {
    let byPartition = offsets.get(name);
    if (!byPartition) {
      byPartition = new Map();
      offsets.set(name, byPartition);
    }
    for (const { partitionIndex, offset } of partitions) byPartition.set(partitionIndex, offset);
  }
  return offsets;
}

function required(offsets: TopicPartitionOffsets, topic: string, partition: number, what: string): bigint {
  const offset = offsets.get(topic)?.get(partition);
  if (offset === undefined || offset < 0n) {
    throw new KafkaError(`the broker returned no ${what} for ${topic} partition ${partition}`);
  }
  return offset;
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/**
 * The plan restricted to the partitions a group member was assigned (topic -> partitions): a
 * member of a job's consumer group reads, checks and acknowledges only those.
 */
export function assignedOnly(plan: OffsetPlan, assigned: ReadonlyMap<string, readonly number[]>): OffsetPlan {
  const owns = (p: { topic: string; partition: number }) => assigned.get(p.topic)?.includes(p.partition) ?? false;
  const partitions = plan.partitions.filter(owns);
  return {
    consumerGroup: plan.consumerGroup,
    partitions,
    lost: plan.lost.filter(owns),
    ahead: plan.ahead.filter(owns),
    offsetsToRead: partitions.reduce((sum, p) => sum + (p.stopOffset - p.startOffset), 0n),
  };
}
