// One sync: plan -> read -> decode/shape -> write -> commit
// -> ack -> report. The high watermarks listed at plan time are where the sync stops. Every
// table commit carries the offsets it absorbed; the consumer group is committed after the
// tables, so a crash anywhere repeats nothing and loses nothing at the next sync.
import type { Job } from "../config/job.ts";
import type { SkippedTopic } from "../config/topics.ts";
import { AlreadyExistsError, type Catalog } from "../iceberg/catalog/catalog.ts";
import { loadCatalog } from "../iceberg/catalog/load-catalog.ts";
import { currentSchema } from "../iceberg/spec/table-metadata.ts";
import { commitGroupOffsets, type TopicPartitionOffsets } from "../kafka/commit-offsets.ts";
import { KafkaCluster } from "../kafka/connection.ts";
import { type LostMessages, MessagesLostError, OffsetsAheadError } from "../kafka/plan.ts";
import { type ReadStatus, readPartitions } from "../kafka/read.ts";
import { catalogConfig, kafkaConnectionOptions } from "./connect.ts";
import { faultPoint } from "./fault-points.ts";
import { planSync, type RecreatedTopic } from "./plan-sync.ts";
import { committedPosition, type KafkaPosition, offsetsOfTopic } from "./snapshot-offsets.ts";
import { StreamBatch } from "./stream-batch.ts";
import { type TableReport, writeStream } from "./write-stream.ts";

export interface SyncOptions {
  /** Where the upsert key indexes live. */
  stateDir: string;
  /** Go on although messages expired unread (retention): the loss is reported, never silent. */
  acceptDataLoss?: boolean;
  /** Stops reading; what was read is committed. */
  signal?: AbortSignal;
  onProgress?: (event: SyncProgress) => void;
  /** A commit lands at least every this many messages read (default 250,000). */
  maxMessagesPerCommit?: number;
}

// Measured with bench/sync.ts (1M messages of ~150 bytes): 100k, 250k and 500k messages per
// commit sync at the same rate, with peak RSS of about 560, 720 and 960 MB (append).
export const DEFAULT_MAX_MESSAGES_PER_COMMIT = 250_000;

export type SyncProgress =
  | { kind: "planned"; messages: bigint; topics: number }
  | { kind: "read"; messages: number }
  | { kind: "committed"; table: string };

export interface SyncReport {
  job: string;
  /** complete: every planned message landed; partial: reading stopped early (broker loss, signal) and what was read landed. */
  status: "complete" | "partial";
  readStatus: ReadStatus;
  readError?: string;
  /** Why the consumer group was not committed after a read that stopped early; the tables were. */
  groupCommitError?: string;
  skippedTopics: readonly SkippedTopic[];
  lostMessages: LostMessages[];
  /** Topics deleted and re-created since the last sync: read from their log start. */
  recreatedTopics: RecreatedTopic[];
  tables: TableReport[];
  messagesRead: number;
  durationMs: number;
}

export async function runSync(job: Job, options: SyncOptions): Promise<SyncReport> {
  const started = performance.now();
  const cluster = await KafkaCluster.connect(kafkaConnectionOptions(job.source));
  let catalog: Catalog | undefined;
  try {
    const connected = await loadCatalog(catalogConfig(job.destination));
    catalog = connected;
    const { targets, skipped, offsets: plan, topicIds, recreated } = await planSync(job, cluster, connected);
    const namespace = [job.namespace];
    if (!(await connected.namespaceExists(namespace))) {
      try {
        await connected.createNamespace(namespace);
      } catch (error) {
        // Created meanwhile by another sync of the job: it is there, as wanted.
        if (!(error instanceof AlreadyExistsError)) throw error;
      }
    }
    // A resume offset past the end of the log: the topic was re-created or truncated, and the
    // offsets the tables hold name other messages. Nothing is read there, so going on would
    // report a complete sync and later skip the new messages below the old offsets.
    if (plan.ahead.length > 0) throw new OffsetsAheadError(plan.ahead);
    if (plan.lost.length > 0 && !options.acceptDataLoss) throw new MessagesLostError(plan.lost);
    options.onProgress?.({ kind: "planned", messages: plan.offsetsToRead, topics: targets.length });

    // Each topic's messages are committed in bounded batches: a commit lands at least every
    // maxMessagesPerCommit messages, with the offsets reached so far, so that memory stays
    // bounded and a long sync that dies keeps what it committed.
    const writeTargets = new Map(
      targets.map((t) => [
        t.selection.topic,
        {
          job,
          catalog: connected,
          table: t.table,
          deadLetterTable: t.deadLetterTable,
          tablePosition: t.table ? committedPosition(t.table.metadata, t.table.name) : noPosition(),
          deadLetterPosition: t.deadLetterTable
            ? committedPosition(t.deadLetterTable.metadata, t.deadLetterTable.name)
            : noPosition(),
          stateDir: options.stateDir,
          topicIds,
        },
      ]),
    );
    const reports = new Map<string, TableReport>();
    const delivered: TopicPartitionOffsets = new Map();
    // A re-created topic's tables record every partition from where it starts now, read or not:
    // their offsets of the deleted topic must not survive in a partition nothing was read from.
    for (const p of plan.partitions.filter((p) => recreated.some((r) => r.topic === p.topic))) {
      delivered.set(p.topic, (delivered.get(p.topic) ?? new Map<number, bigint>()).set(p.partition, p.startOffset));
    }
    const newBatches = () =>
      new Map(
        targets.map(({ selection }) => {
          const { table, deadLetterTable } = writeTargets.get(selection.topic)!;
          const deadLetters =
            deadLetterTable &&
            offsetsOfTopic(
              committedPosition(deadLetterTable.metadata, deadLetterTable.name),
              selection.topic,
              topicIds.get(selection.topic),
            );
          return [
            selection.topic,
            new StreamBatch(
              selection,
              table && { schema: currentSchema(table.metadata), lastColumnId: table.metadata.lastColumnId },
              deadLetters ?? new Map(),
            ),
          ];
        }),
      );
    let batches = newBatches();
    let buffered = 0;
    const commitBatches = async () => {
      for (const { selection } of targets) {
        const topic = selection.topic;
        const readOffsets: TopicPartitionOffsets = new Map([[topic, new Map(delivered.get(topic))]]);
        const report = await writeStream(writeTargets.get(topic)!, batches.get(topic)!, readOffsets);
        const before = reports.get(topic);
        reports.set(topic, before ? mergeReports(before, report) : report);
        options.onProgress?.({ kind: "committed", table: report.table });
      }
      batches = newBatches();
      buffered = 0;
    };

    let read = 0;
    const maxMessagesPerCommit = options.maxMessagesPerCommit ?? DEFAULT_MAX_MESSAGES_PER_COMMIT;
    const result = await readPartitions(
      cluster,
      plan.partitions.filter((p) => p.stopOffset > p.startOffset),
      async (batch) => {
        const stream = batches.get(batch.topic)!;
        for (const message of batch.messages) stream.add(message);
        const offsets = delivered.get(batch.topic) ?? new Map<number, bigint>();
        offsets.set(batch.partition, batch.nextOffset);
        delivered.set(batch.topic, offsets);
        read += batch.messages.length;
        buffered += batch.messages.length;
        options.onProgress?.({ kind: "read", messages: read });
        if (buffered >= maxMessagesPerCommit) await commitBatches();
      },
      { maxThreads: job.maxThreads, ...(options.signal ? { signal: options.signal } : {}) },
    );
    await commitBatches();

    // The group gets every planned partition, read or not: one with nothing to read gets the
    // offset it started from (the table's), so that a group left behind by a sync killed between
    // its table commits and its group commit catches up even when no new message comes.
    const acknowledged: TopicPartitionOffsets = new Map();
    for (const p of plan.partitions) {
      const offsets = acknowledged.get(p.topic) ?? new Map<number, bigint>();
      offsets.set(p.partition, delivered.get(p.topic)?.get(p.partition) ?? p.startOffset);
      acknowledged.set(p.topic, offsets);
    }
    const tables = targets.map(({ selection }) => reports.get(selection.topic)!);
    let groupCommitError: string | undefined;
    await faultPoint("before-group-commit");
    try {
      await commitGroupOffsets(cluster, job.consumerGroup, acknowledged);
    } catch (error) {
      // A read that stopped on a broker loss is usually followed by a group commit that fails
      // the same way. The tables hold what was read and their offsets (they win at the next
      // sync): a sync stopped by a rebalance or a broker loss commits what it has and reports it
      // as partial, and the next sync resumes; it is not a failed sync.
      if (result.status === "complete") throw error;
      groupCommitError = error instanceof Error ? error.message : String(error);
    }

    return {
      job: job.name,
      status: result.status === "complete" ? "complete" : "partial",
      readStatus: result.status,
      ...(result.error ? { readError: result.error.message } : {}),
      ...(groupCommitError === undefined ? {} : { groupCommitError }),
      skippedTopics: skipped,
      lostMessages: plan.lost,
      recreatedTopics: recreated,
      tables,
      messagesRead: result.messages,
      durationMs: performance.now() - started,
    };
  } finally {
    await catalog?.close();
    await cluster.close();
  }
}

function noPosition(): KafkaPosition {
  return { offsets: new Map(), topicIds: new Map() };
}

/** Two commits' reports of one table in one sync, added up. */
function mergeReports(a: TableReport, b: TableReport): TableReport {
  return {
    ...b,
    messagesRead: a.messagesRead + b.messagesRead,
    bytesRead: a.bytesRead + b.bytesRead,
    dataFilesAdded: a.dataFilesAdded + b.dataFilesAdded,
    deletionVectorsAdded: a.deletionVectorsAdded + b.deletionVectorsAdded,
    recordsAdded: a.recordsAdded + b.recordsAdded,
    positionsDeleted: a.positionsDeleted + b.positionsDeleted,
    deadLetters: a.deadLetters + b.deadLetters,
    skipped: a.skipped + b.skipped,
    tombstonesIgnored: a.tombstonesIgnored + b.tombstonesIgnored,
    created: a.created || b.created,
    columnsAdded: [...a.columnsAdded, ...b.columnsAdded],
    snapshotId: b.snapshotId ?? a.snapshotId,
    durationMs: a.durationMs + b.durationMs,
  };
}
