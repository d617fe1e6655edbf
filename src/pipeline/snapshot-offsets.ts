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
//
// Snapshot expiry (Spark's expire_snapshots(retain_last => 1) after a rewrite_data_files) can
// remove every snapshot that carries them. So each floe commit also records its position as
// table properties, set in the same atomic commit as its snapshot, with the id and sequence
// number of that snapshot. Resolution: the newest ancestor's summary; else the properties, when
// the snapshot that recorded them is an ancestor or was expired; properties recorded by a
// snapshot that is still in the metadata but no longer an ancestor of the current one (a
// rollback), or by one whose sequence number the current ancestry skips over, describe rows the
// table no longer holds and are not trusted. A table with live rows and no trusted position is
// refused (PositionUnknownError) until the user says where to resume.
//
// Why two records of one position, and neither can go:
// - The summary is per snapshot, so it says where every snapshot of the ancestry stands: a
//   rollback to an older floe snapshot resumes from that snapshot's own offsets, and a commit's
//   claim (offset-claim.ts) checks the offsets of the exact parent it lands on. The properties
//   are one per table (the last floe commit's): alone, every rollback would be untrusted, and
//   the claim could not tell the position of a parent other than the newest.
// - The properties survive what removes the summaries: another engine's compaction (which copies
//   no floe.* key) followed by an expiry of every older snapshot. Without them such a table would
//   hold live rows and no position.
// - floe's own compaction and manifest rewrite copy the position's summary keys into their
//   replace snapshot (maintain.ts): the current snapshot then records the position itself, so
//   that an expiry may remove every older snapshot. Without the copy, the snapshot recording the
//   position would have to outlive the snapshots between it and the current one, or the broken
//   ancestry would make the properties' recording snapshot a non-ancestor: untrusted.
import type { Snapshot } from "../iceberg/spec/snapshot.ts";
import { ancestors, currentSnapshot, snapshotById, type TableMetadata } from "../iceberg/spec/table-metadata.ts";
import {
  FLOE_KAFKA_OFFSETS,
  FLOE_KAFKA_SEQUENCE_NUMBER,
  FLOE_KAFKA_SNAPSHOT_ID,
  FLOE_KAFKA_TOPIC_IDS,
} from "../iceberg/spec/table-properties.ts";
import type { TopicPartitionOffsets } from "../kafka/commit-offsets.ts";

/** Summary key: JSON `{"<topic>": {"<partition>": "<next offset>"}}`. */
export const OFFSETS_SUMMARY_KEY = "floe.kafka.offsets";
/** Summary key: JSON `{"<topic>": "<topic id>"}` for the topics of OFFSETS_SUMMARY_KEY whose id is known. */
export const TOPIC_IDS_SUMMARY_KEY = "floe.kafka.topic-ids";

/** Table properties recording the position of the last floe commit: same JSON as the summary keys. */
export const OFFSETS_PROPERTY = FLOE_KAFKA_OFFSETS.key;
export const TOPIC_IDS_PROPERTY = FLOE_KAFKA_TOPIC_IDS.key;
/** The snapshot that recorded OFFSETS_PROPERTY, and its sequence number. */
export const RECORDED_BY_PROPERTY = FLOE_KAFKA_SNAPSHOT_ID.key;
export const RECORDED_SEQUENCE_PROPERTY = FLOE_KAFKA_SEQUENCE_NUMBER.key;

/**
 * A table holds rows but no position floe can trust: resuming from the group's offsets or the
 * log start could land messages twice or skip some, so the user chooses.
 */
export class PositionUnknownError extends Error {
  override name = "PositionUnknownError";
  readonly retryable = false;
  readonly tables: readonly string[];

  constructor(untrusted: readonly { table: string; reason: string }[]) {
    super(
      `${untrusted.map((u) => `${u.table}: ${u.reason}`).join("; ")}. floe does not guess where to resume: ` +
        "run the sync once with --resume-from group (the consumer group's committed offsets, else the log start), " +
        "--resume-from earliest (the log start: messages the table already holds land again) or " +
        "--resume-from latest (the end of the log: messages not yet in the table are skipped); " +
        "the position is then recorded and later syncs need no flag",
    );
    this.tables = untrusted.map((u) => u.table);
  }
}

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

export function offsetsFromSummary(text: string, where: string, what = "snapshot summary"): TopicPartitionOffsets {
  const offsets: TopicPartitionOffsets = new Map();
  for (const [topic, partitions] of Object.entries(summaryJson(text, where, OFFSETS_SUMMARY_KEY, what))) {
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

/** The position the table holds now (see resolvePosition); none when it holds none floe can trust. */
export function committedPosition(metadata: TableMetadata, where: string): KafkaPosition {
  return positionAt(metadata, currentSnapshot(metadata), where).position;
}

/** What a table's metadata says of its position as of one snapshot. */
export interface ResolvedPosition {
  /** Empty when nothing trusted records one. */
  position: KafkaPosition;
  /** "summary": an ancestor's summary; "property": the table properties (their snapshot expired); "none": nothing recorded. */
  source: "summary" | "property" | "none" | "untrusted";
  /** The snapshot that recorded the position, when still in the metadata. */
  recordedBy?: Snapshot;
  /** The id of that snapshot, also when expired. */
  recordedById?: bigint;
  /** Why a recorded position is not trusted (source "untrusted"). */
  untrusted?: string;
}

/**
 * The position as of `snapshot` (the parent a commit lands on, or the current snapshot): the
 * newest ancestor's summary, else the table properties when their recording snapshot is an
 * ancestor or expired.
 */
export function positionAt(metadata: TableMetadata, snapshot: Snapshot | undefined, where: string): ResolvedPosition {
  // Walked lazily: the newest floe snapshot is usually the current one or close to it.
  const chain: Snapshot[] = [];
  for (const s of ancestors(metadata, snapshot)) {
    const text = s.summary[OFFSETS_SUMMARY_KEY];
    chain.push(s);
    if (text === undefined) continue;
    const position = readPosition(text, s.summary[TOPIC_IDS_SUMMARY_KEY], where, "snapshot summary");
    return { position, source: "summary", recordedBy: s, recordedById: s.snapshotId };
  }
  const properties = metadata.properties;
  const text = properties[OFFSETS_PROPERTY];
  const recordedByText = properties[RECORDED_BY_PROPERTY];
  if (text === undefined || recordedByText === undefined) return { position: noPosition(), source: "none" };
  const recordedById = parseBigInt(recordedByText, where, RECORDED_BY_PROPERTY);
  const recorded = snapshotById(metadata, recordedById);
  const untrusted = (untrusted: string): ResolvedPosition => ({
    position: noPosition(),
    source: "untrusted",
    ...(recorded ? { recordedBy: recorded } : {}),
    recordedById,
    untrusted,
  });
  if (recorded !== undefined) {
    if (!chain.some((s) => s.snapshotId === recordedById)) {
      return untrusted(
        `its position (table property ${OFFSETS_PROPERTY}) was recorded by snapshot ${recordedById}, which is no longer an ancestor of the current snapshot ${snapshot?.snapshotId ?? "(none)"}: the table was rolled back past floe's commits`,
      );
    }
  } else {
    // Expired. Sequence numbers strictly decrease along the ancestry: an ancestor older than the
    // recording snapshot, with no ancestor at its sequence number, means it was not an ancestor.
    const sequenceText = properties[RECORDED_SEQUENCE_PROPERTY];
    const sequence =
      sequenceText === undefined ? undefined : parseBigInt(sequenceText, where, RECORDED_SEQUENCE_PROPERTY);
    if (
      sequence !== undefined &&
      chain.some((s) => s.sequenceNumber < sequence) &&
      !chain.some((s) => s.sequenceNumber === sequence)
    ) {
      return untrusted(
        `its position (table property ${OFFSETS_PROPERTY}) was recorded by snapshot ${recordedById} (sequence number ${sequence}), which is not in the ancestry of the current snapshot ${snapshot?.snapshotId ?? "(none)"}: the table was rolled back past floe's commits`,
      );
    }
  }
  const position = readPosition(text, properties[TOPIC_IDS_PROPERTY], where, "table property");
  return { position, source: "property", ...(recorded ? { recordedBy: recorded } : {}), recordedById };
}

/**
 * Why the table's current position cannot be trusted, or undefined when it can: recorded but
 * not trusted, or not recorded at all while the table holds live rows (its floe snapshots
 * expired before positions were kept as properties, or another engine wrote the rows).
 */
export function untrustedPosition(metadata: TableMetadata, where: string): string | undefined {
  const resolved = positionAt(metadata, currentSnapshot(metadata), where);
  if (resolved.source === "untrusted") return resolved.untrusted;
  if (resolved.source !== "none") return undefined;
  const current = currentSnapshot(metadata);
  if (current === undefined) return undefined;
  const records = current.summary["total-records"];
  const deleted = current.summary["total-position-deletes"];
  if (records !== undefined && /^\d+$/.test(records)) {
    const live = BigInt(records) - (deleted !== undefined && /^\d+$/.test(deleted) ? BigInt(deleted) : 0n);
    if (live <= 0n) return undefined;
    return `the table holds ${live} live row(s) but neither a snapshot summary of its ancestry nor its table properties record floe's Kafka position (snapshots expired, or rows written by another engine)`;
  }
  return "the table has a current snapshot but neither a snapshot summary of its ancestry nor its table properties record floe's Kafka position (snapshots expired, or rows written by another engine)";
}

/** The table properties that record `position`, committed with snapshot `snapshotId` at `sequenceNumber`. */
export function positionToProperties(
  position: KafkaPosition,
  snapshotId: bigint,
  sequenceNumber: bigint,
): Record<string, string> {
  const summary = positionToSummary(position);
  return {
    [OFFSETS_PROPERTY]: summary[OFFSETS_SUMMARY_KEY]!,
    // Always written, "{}" when no id is known: an older commit's ids must not outlive its offsets.
    [TOPIC_IDS_PROPERTY]: summary[TOPIC_IDS_SUMMARY_KEY] ?? "{}",
    [RECORDED_BY_PROPERTY]: snapshotId.toString(),
    [RECORDED_SEQUENCE_PROPERTY]: sequenceNumber.toString(),
  };
}

function readPosition(offsets: string, ids: string | undefined, where: string, what: string): KafkaPosition {
  const topicIds = new Map<string, string>();
  if (ids !== undefined) {
    for (const [topic, id] of Object.entries(summaryJson(ids, where, TOPIC_IDS_SUMMARY_KEY, what))) {
      if (typeof id === "string") topicIds.set(topic, id);
    }
  }
  return { offsets: offsetsFromSummary(offsets, where, what), topicIds };
}

function parseBigInt(text: string, where: string, key: string): bigint {
  if (!/^-?\d+$/.test(text)) throw new Error(`${where}: table property ${key} is not an integer: ${text}`);
  return BigInt(text);
}

export function noPosition(): KafkaPosition {
  return { offsets: new Map(), topicIds: new Map() };
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

function summaryJson(text: string, where: string, key: string, what: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${where}: ${what} ${key} is not JSON`);
  }
}
