// A table commit absorbs one topic's messages from the offsets the table held when this sync
// read them up to the offsets it read. If another writer (a second sync of the same job, or a
// copy of it started elsewhere) committed offsets of those partitions meanwhile, its snapshot
// already holds some of these messages: landing ours too would hold them twice. So at every
// commit attempt, against the parent that attempt commits on, the parent's offsets of every
// partition this commit absorbs must be the ones the sync started from, partition by
// partition, and recorded under the same topic id, or, where the table recorded none of the
// topic when the sync started, under the id the sync read (the check the Iceberg Kafka Connect
// sink makes on every commit); and the position the new snapshot records is the parent's with this
// commit's partitions advanced, never a stale copy of another writer's.
//
// The parent's position is resolved as planning resolves it (the newest ancestor's summary, else
// the table properties; see snapshot-offsets.ts), so the check holds after another engine
// expired the snapshots that recorded it; and the commit records the new position both in its
// summary and as table properties set in the same atomic commit.
import type { SnapshotProducer } from "../iceberg/commit/snapshot-producer.ts";
import type { Snapshot } from "../iceberg/spec/snapshot.ts";
import type { TableMetadata } from "../iceberg/spec/table-metadata.ts";
import type { TopicPartitionOffsets } from "../kafka/commit-offsets.ts";
import {
  advancePosition,
  type KafkaPosition,
  PositionUnknownError,
  positionAt,
  positionToProperties,
  positionToSummary,
  type TopicIds,
} from "./snapshot-offsets.ts";

/** Summary key of the job that wrote a snapshot. */
export const JOB_SUMMARY_KEY = "floe.job";
/** Summary keys of the group member (and its generation) that wrote a snapshot, under the job's `cluster:`. */
export const MEMBER_SUMMARY_KEY = "floe.member";
export const GENERATION_SUMMARY_KEY = "floe.generation";

/** Another writer committed this job's messages while this sync ran: retrying cannot help, a new sync can. */
export class ConcurrentSyncError extends Error {
  override name = "ConcurrentSyncError";
  readonly retryable = false;
}

export interface OffsetClaim {
  /** The table, for messages. */
  table: string;
  job: string;
  /** The position the table held when this sync read from it (absent partition: none recorded). */
  startedFrom: KafkaPosition;
  /** Offsets this commit advances the table to. */
  read: TopicPartitionOffsets;
  /** The ids of the topics as this sync read them. */
  topicIds: TopicIds;
  /** The consumer group member this sync runs as (the job's `cluster:`), recorded in the summary. */
  member?: ClaimMember | undefined;
}

export interface ClaimMember {
  memberId: string;
  generationId: number;
}

/** Makes `producer` land only on a parent whose offsets are claim.startedFrom, recording claim.read. */
export function claimOffsets<P extends SnapshotProducer>(producer: P, claim: OffsetClaim): P {
  const advanced = (base: TableMetadata, parent: Snapshot | undefined) =>
    advancePosition(positionAt(base, parent, claim.table).position, claim.read, claim.topicIds);
  if (claim.member) {
    producer
      .set(MEMBER_SUMMARY_KEY, claim.member.memberId)
      .set(GENERATION_SUMMARY_KEY, String(claim.member.generationId));
  }
  return producer
    .validate((base, parent) => {
      const { position, recordedBy, untrusted } = positionAt(base, parent, claim.table);
      // Rolled back while this sync ran: the position it started from describes rows the
      // table no longer holds (a sync told where to resume started from no position).
      if (untrusted !== undefined && claim.startedFrom.offsets.size > 0) {
        throw new PositionUnknownError([{ table: claim.table, reason: untrusted }]);
      }
      const moved: string[] = [];
      for (const [topic, partitions] of claim.read) {
        const id = position.topicIds.get(topic);
        const startedId = claim.startedFrom.topicIds.get(topic);
        // A table that held no position of the topic when this sync started may since record the
        // very topic this sync read (another member's first commit of its own partitions): the
        // partitions below decide. Any other id change means the topic was re-created meanwhile.
        const recordedSinceAsRead = startedId === undefined && id === claim.topicIds.get(topic);
        if (id !== startedId && !recordedSinceAsRead)
          moved.push(`${topic} recorded as topic id ${id ?? "none"}, this sync started from ${startedId ?? "none"}`);
        for (const partition of partitions.keys()) {
          const expected = claim.startedFrom.offsets.get(topic)?.get(partition);
          const found = position.offsets.get(topic)?.get(partition);
          if (found !== expected) {
            moved.push(
              `${topic} partition ${partition} at ${found ?? "none"}, this sync started from ${expected ?? "none"}`,
            );
          }
        }
      }
      if (moved.length === 0) return;
      const by = recordedBy?.summary[JOB_SUMMARY_KEY];
      throw new ConcurrentSyncError(
        `${claim.table}: another writer committed these messages while this sync ran (snapshot ${recordedBy?.snapshotId}` +
          `${by === undefined ? "" : ` of job ${by}`}, committed ${recordedBy ? new Date(Number(recordedBy.timestampMs)).toISOString() : "?"}): ` +
          `${moved.join("; ")}. This commit did not land; is another floe sync of job ${claim.job} running? Run again once it is done.`,
      );
    })
    .setFromParent((base, parent) => positionToSummary(advanced(base, parent)))
    .setTablePropertiesFromParent((base, parent) =>
      positionToProperties(advanced(base, parent), producer.snapshotId, base.lastSequenceNumber + 1n),
    )
    .set(JOB_SUMMARY_KEY, claim.job);
}
