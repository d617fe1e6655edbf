// A table commit absorbs one topic's messages from the offsets the table held when this sync
// read them up to the offsets it read. If another writer (a second sync of the same job, or a
// copy of it started elsewhere) committed offsets of those partitions meanwhile, its snapshot
// already holds some of these messages: landing ours too would hold them twice. So at every
// commit attempt, against the parent that attempt commits on, the parent's offsets of every
// partition this commit absorbs must be the ones the sync started from, partition by
// partition, and recorded under the same topic id (the check the Iceberg Kafka Connect sink
// makes on every commit); and the position the new snapshot records is the parent's with this
// commit's partitions advanced, never a stale copy of another writer's.
import type { SnapshotProducer } from "../iceberg/commit/snapshot-producer.ts";
import type { TopicPartitionOffsets } from "../kafka/commit-offsets.ts";
import {
  advancePosition,
  type KafkaPosition,
  positionAt,
  positionToSummary,
  type TopicIds,
} from "./snapshot-offsets.ts";

/** Summary key of the job that wrote a snapshot. */
export const JOB_SUMMARY_KEY = "floe.job";

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
}

/** Makes `producer` land only on a parent whose offsets are claim.startedFrom, recording claim.read. */
export function claimOffsets<P extends SnapshotProducer>(producer: P, claim: OffsetClaim): P {
  return producer
    .validate((base, parent) => {
      const { position, recordedBy } = positionAt(base, parent, claim.table);
      const moved: string[] = [];
      for (const [topic, partitions] of claim.read) {
        const id = position.topicIds.get(topic);
        const startedId = claim.startedFrom.topicIds.get(topic);
        if (id !== startedId)
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
    .setFromParent((base, parent) =>
      positionToSummary(advancePosition(positionAt(base, parent, claim.table).position, claim.read, claim.topicIds)),
    )
    .set(JOB_SUMMARY_KEY, claim.job);
}
