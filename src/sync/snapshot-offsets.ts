// The Kafka offsets a table has absorbed, kept in the snapshot summary of the commit that
// absorbed them (the Iceberg snapshot is the single point of truth). The
// next sync starts from them, whatever the consumer group says: a crash between the Iceberg
// commit and the group commit then neither loses nor repeats a message.
//
// A snapshot written by another writer (a compaction, a Spark job) carries no floe offsets, so
// the offsets are those of the newest ancestor of the current snapshot that has them.
import type { Snapshot } from "../iceberg/spec/snapshot.ts";
import { ancestors, currentSnapshot, type TableMetadata } from "../iceberg/spec/table-metadata.ts";
import type { TopicPartitionOffsets } from "../kafka/commit-offsets.ts";

/** Summary key: JSON `{"<topic>": {"<partition>": "<next offset>"}}`. */
export const OFFSETS_SUMMARY_KEY = "floe.kafka.offsets";

export function offsetsToSummary(offsets: TopicPartitionOffsets): string {
  const json: Record<string, Record<string, string>> = {};
  for (const [topic, partitions] of [...offsets].sort(([a], [b]) => (a < b ? -1 : 1))) {
    json[topic] = Object.fromEntries([...partitions].sort(([a], [b]) => a - b).map(([p, o]) => [p, o.toString()]));
  }
  return JSON.stringify(json);
}

export function offsetsFromSummary(text: string, where: string): TopicPartitionOffsets {
  const offsets: TopicPartitionOffsets = new Map();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${where}: snapshot summary ${OFFSETS_SUMMARY_KEY} is not JSON`);
  }
  for (const [topic, partitions] of Object.entries(json as Record<string, Record<string, string>>)) {
    offsets.set(topic, new Map(Object.entries(partitions).map(([p, o]) => [Number(p), BigInt(o)])));
  }
  return offsets;
}

/** The offsets of the newest snapshot in the current snapshot's ancestry that records them. */
export function committedOffsets(metadata: TableMetadata, where: string): TopicPartitionOffsets {
  return offsetsAt(metadata, currentSnapshot(metadata), where).offsets;
}

/** The offsets recorded by `snapshot` or its newest ancestor that records them, and that snapshot. */
export function offsetsAt(
  metadata: TableMetadata,
  snapshot: Snapshot | undefined,
  where: string,
): { offsets: TopicPartitionOffsets; recordedBy?: Snapshot } {
  for (const s of ancestors(metadata, snapshot)) {
    const text = s.summary[OFFSETS_SUMMARY_KEY];
    if (text !== undefined) return { offsets: offsetsFromSummary(text, where), recordedBy: s };
  }
  return { offsets: new Map() };
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
