// The Kafka offsets a table has absorbed, kept in the snapshot summary of the commit that
// absorbed them (the Iceberg snapshot is the single point of truth). The
// next sync starts from them, whatever the consumer group says: a crash between the Iceberg
// commit and the group commit then neither loses nor repeats a message.
//
// Offsets count the messages of one topic, not of a name: a topic deleted and re-created starts
// again at 0. So the summary also records each topic's id (KIP-516) beside its offsets, and
// offsets recorded under another id than the topic's current one are of a deleted topic: the
// topic starts over at its log start. The ids have their own summary key, so that summaries
// written before it (offsets only) still read, as offsets of unknown identity that are trusted.
//
// A snapshot written by another writer (a compaction, a Spark job) carries no floe offsets, so
// the offsets are those of the newest ancestor of the current snapshot that has them.
import type { Snapshot } from "../iceberg/spec/snapshot.ts";
import { ancestors, currentSnapshot, type TableMetadata } from "../iceberg/spec/table-metadata.ts";
import type { TopicPartitionOffsets } from "../kafka/commit-offsets.ts";

/** Summary key: JSON `{"<topic>": {"<partition>": "<next offset>"}}`. */
export const OFFSETS_SUMMARY_KEY = "floe.kafka.offsets";
/** Summary key: JSON `{"<topic>": "<topic id>"}` for the topics of OFFSETS_SUMMARY_KEY whose id is known. */
export const TOPIC_IDS_SUMMARY_KEY = "floe.kafka.topic-ids";

/** Topic name -> topic id (KIP-516). */
export type TopicIds = ReadonlyMap<string, string>;

/** What one snapshot records of Kafka: the next offset per partition, and the id of the topic they count. */
export interface KafkaPosition {
  offsets: TopicPartitionOffsets;
  /** A topic absent here has offsets of unknown identity (written before ids were kept, or the cluster gave none). */
  topicIds: Map<string, string>;
}

export function offsetsToSummary(offsets: TopicPartitionOffsets): string {
  const json: Record<string, Record<string, string>> = {};
  for (const [topic, partitions] of [...offsets].sort(([a], [b]) => (a < b ? -1 : 1))) {
    json[topic] = Object.fromEntries([...partitions].sort(([a], [b]) => a - b).map(([p, o]) => [p, o.toString()]));
  }
  return JSON.stringify(json);
}

export function offsetsFromSummary(text: string, where: string): TopicPartitionOffsets {
  const offsets: TopicPartitionOffsets = new Map();
  for (const [topic, partitions] of Object.entries(summaryJson(text, where, OFFSETS_SUMMARY_KEY))) {
    offsets.set(
      topic,
      new Map(Object.entries(partitions as Record<string, string>).map(([p, o]) => [Number(p), BigInt(o)])),
    );
  }
  return offsets;
}

/** The summary properties that record a position: the offsets, and the ids when any is known. */
export function positionToSummary(position: KafkaPosition): Record<string, string> {
  const summary: Record<string, string> = { [OFFSETS_SUMMARY_KEY]: offsetsToSummary(position.offsets) };
  const ids = [...position.topicIds]
    .filter(([topic]) => position.offsets.has(topic))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  if (ids.length > 0) summary[TOPIC_IDS_SUMMARY_KEY] = JSON.stringify(Object.fromEntries(ids));
  return summary;
}

/** Whether two positions record the same offsets and ids (a commit of `a` over `b` would record nothing new). */
export function samePosition(a: KafkaPosition, b: KafkaPosition): boolean {
  return JSON.stringify(positionToSummary(a)) === JSON.stringify(positionToSummary(b));
}

/** The position of the newest snapshot in the current snapshot's ancestry that records offsets. */
export function committedPosition(metadata: TableMetadata, where: string): KafkaPosition {
  return positionAt(metadata, currentSnapshot(metadata), where).position;
}

/** The position recorded by `snapshot` or by its newest ancestor that records one, and that snapshot. */
export function positionAt(
  metadata: TableMetadata,
  snapshot: Snapshot | undefined,
  where: string,
): { position: KafkaPosition; recordedBy?: Snapshot } {
  for (const s of ancestors(metadata, snapshot)) {
    const text = s.summary[OFFSETS_SUMMARY_KEY];
    if (text === undefined) continue;
    const ids = s.summary[TOPIC_IDS_SUMMARY_KEY];
    const topicIds = new Map<string, string>();
    if (ids !== undefined) {
      for (const [topic, id] of Object.entries(summaryJson(ids, where, TOPIC_IDS_SUMMARY_KEY))) {
        if (typeof id === "string") topicIds.set(topic, id);
      }
    }
    return { position: { offsets: offsetsFromSummary(text, where), topicIds }, recordedBy: s };
  }
  return { position: { offsets: new Map(), topicIds: new Map() } };
}

/** The offsets of the newest snapshot in the current snapshot's ancestry that records them. */
export function committedOffsets(metadata: TableMetadata, where: string): TopicPartitionOffsets {
  return committedPosition(metadata, where).offsets;
}

/**
 * The id under which the position records `topic`, when it is not `topicId`: the recorded offsets
 * are then of a topic of that name since deleted. Undefined when either id is unknown.
 */
export function replacedTopicId(
  position: KafkaPosition,
  topic: string,
  topicId: string | undefined,
): string | undefined {
  const recorded = position.topicIds.get(topic);
  return recorded !== undefined && topicId !== undefined && recorded !== topicId ? recorded : undefined;
}

/** The position's offsets of `topic` as it is now (id `topicId`); none when they are of a deleted topic of that name. */
export function offsetsOfTopic(
  position: KafkaPosition,
  topic: string,
  topicId: string | undefined,
): Map<number, bigint> | undefined {
  return replacedTopicId(position, topic, topicId) === undefined ? position.offsets.get(topic) : undefined;
}

/**
 * The position after `read` was absorbed: its partitions replace those of `previous`, except that
 * a topic whose id in `topicIds` differs from the recorded one starts over (its recorded offsets,
 * every partition, are of the deleted topic). Each topic of the result takes its id from `topicIds`.
 */
export function advancePosition(
  previous: KafkaPosition,
  read: TopicPartitionOffsets,
  topicIds: TopicIds,
): KafkaPosition {
  const offsets: TopicPartitionOffsets = new Map();
  for (const [topic, partitions] of previous.offsets) {
    if (replacedTopicId(previous, topic, topicIds.get(topic)) === undefined) offsets.set(topic, new Map(partitions));
  }
  const merged = mergeOffsets(offsets, read);
  const ids = new Map<string, string>();
  for (const topic of merged.keys()) {
    const id = topicIds.get(topic) ?? previous.topicIds.get(topic);
    if (id !== undefined) ids.set(topic, id);
  }
  return { offsets: merged, topicIds: ids };
}

/** `previous` with the partitions of `advanced` replaced: a summary always carries every partition. */
export function mergeOffsets(previous: TopicPartitionOffsets, advanced: TopicPartitionOffsets): TopicPartitionOffsets {
  const merged: TopicPartitionOffsets = new Map([...previous].map(([t, p]) => [t, new Map(p)]));
  for (const [topic, partitions] of advanced) {
    const into = merged.get(topic) ?? new Map<number, bigint>();
    for (const [partition, offset] of partitions) into.set(partition, offset);
    merged.set(topic, into);
  }
  return merged;
}

function summaryJson(text: string, where: string, key: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${where}: snapshot summary ${key} is not JSON`);
  }
}
