// One sync: plan -> read -> decode/shape -> write -> commit -> ack, as typed events (events.ts)
// under a run id; the report is their fold (sync-report.ts). The high watermarks listed at plan
// time are where the sync stops. Every table commit carries the offsets it absorbed; the
// consumer group is committed after the tables, so a crash anywhere repeats nothing and loses
// nothing at the next sync.
//
// The source and the catalog are the caller's (connect.ts opens them for a job): a long-running
// process keeps them for many syncs, and tests pass an in-memory source and the embedded catalog.
import type { Job, StreamSettings } from "../config/job.ts";
import { AlreadyExistsError, type Catalog } from "../iceberg/catalog/catalog.ts";
import { currentSchema } from "../iceberg/spec/table-metadata.ts";
import type { TopicPartitionOffsets } from "../kafka/commit-offsets.ts";
import { MessagesLostError, OffsetsAheadError } from "../kafka/plan.ts";
import { SchemaRegistryClient } from "../registry/client.ts";
import { classifyError } from "./classify-error.ts";
import type { SyncEvent, SyncEventBody, SyncFinished } from "./events.ts";
import { faultPoint } from "./fault-points.ts";
import { planSync } from "./plan-sync.ts";
import { RegistryDecoders } from "./registry-decoders.ts";
import { newRunId } from "./run-id.ts";
import { committedPosition, offsetsOfTopic, PositionUnknownError } from "./snapshot-offsets.ts";
import type { SyncSource } from "./source.ts";
import { StreamBatch } from "./stream-batch.ts";
import { DEFAULT_MAX_MESSAGES_PER_COMMIT, type SyncOptions } from "./sync-options.ts";
import { reduceSyncEvent, type SyncReport } from "./sync-report.ts";
import { type StreamTarget, writeStream } from "./write-stream.ts";

export type { SyncOptions } from "./sync-options.ts";
export type { SyncReport } from "./sync-report.ts";

/** Where a sync reads and writes; the caller opens and closes them. */
export interface SyncConnections {
  readonly source: SyncSource;
  readonly catalog: Catalog;
}

type Emit = (event: SyncEventBody) => void;

/** Runs one sync of `job`; resolves to its report, or rejects once its `failed` event is out. */
export async function runSync(job: Job, connections: SyncConnections, options: SyncOptions): Promise<SyncReport> {
  const runId = options.runId ?? newRunId();
  const started = performance.now();
  let report: SyncReport | undefined;
  const emit: Emit = (body) => {
    const event = { ...body, runId, at: Date.now() } as SyncEvent;
    report = reduceSyncEvent(report, event);
    options.onEvent?.(event);
  };
  emit({ type: "started", job: job.name });
  try {
    const outcome = await sync(job, connections, options, emit);
    emit({ type: "finished", ...outcome, durationMs: performance.now() - started });
  } catch (error) {
    emit({ type: "failed", error: classifyError(error), durationMs: performance.now() - started });
    throw error;
  }
  return report!;
}

async function sync(
  job: Job,
  { source, catalog }: SyncConnections,
  options: SyncOptions,
  emit: Emit,
): Promise<Omit<SyncFinished, "type" | "runId" | "at" | "durationMs">> {
  const {
    targets,
    skipped,
    offsets: plan,
    topicIds,
    recreated,
    untrusted,
  } = await planSync(job, source, catalog, options.resumeFrom === undefined ? {} : { resumeFrom: options.resumeFrom });
  emit({
    type: "planned",
    tables: targets.map(({ selection, table }) => ({
      topic: selection.topic,
      table: `${job.namespace}.${selection.table}`,
      mode: selection.stream.mode,
      exists: table !== undefined,
    })),
    partitions: plan.partitions,
    messagesToRead: plan.offsetsToRead,
    skippedTopics: skipped,
    lostMessages: plan.lost,
    recreatedTopics: recreated,
  });
  // A table with rows and no position floe can trust: resuming from the group or the log start
  // could land its messages twice or skip some; the user says where (--resume-from).
  if (untrusted.length > 0 && options.resumeFrom === undefined) throw new PositionUnknownError(untrusted);
  await ensureNamespace(catalog, [job.namespace]);
  // A resume offset past the end of the log: the topic was re-created or truncated, and the
  // offsets the tables hold name other messages. Nothing is read there, so going on would
  // report a complete sync and later skip the new messages below the old offsets.
  if (plan.ahead.length > 0) throw new OffsetsAheadError(plan.ahead);
  if (plan.lost.length > 0 && !options.acceptDataLoss) throw new MessagesLostError(plan.lost);

  // Each topic's messages are committed in bounded batches: a commit lands at least every
  // maxMessagesPerCommit messages, with the offsets reached so far, so that memory stays
  // bounded and a long sync that dies keeps what it committed.
  const writeTargets = new Map(
    targets.map((t): [string, StreamTarget] => [
      t.selection.topic,
      {
        job,
        catalog,
        table: t.table,
        deadLetterTable: t.deadLetterTable,
        tablePosition: t.tablePosition,
        deadLetterPosition: t.deadLetterPosition,
        deadLetterResumed: t.resumed.deadLetterTable,
        stateDir: options.stateDir,
        topicIds,
        emit,
      },
    ]),
  );
  // One registry client for the sync: a schema id names the same schema in every topic.
  const registry = job.source.schemaRegistry;
  const decoders =
    registry !== undefined && targets.some((t) => usesRegistry(t.selection.stream))
      ? new RegistryDecoders(new SchemaRegistryClient(registry))
      : undefined;
  const delivered: TopicPartitionOffsets = new Map();
  // A re-created topic's tables record every partition from where it starts now, read or not:
  // their offsets of the deleted topic must not survive in a partition nothing was read from. So
  // do the tables of a topic resumed where the user chose: later syncs resume from what they record.
  const restarted = new Set([
    ...recreated.map((r) => r.topic),
    ...targets.filter((t) => t.resumed.table || t.resumed.deadLetterTable).map((t) => t.selection.topic),
  ]);
  for (const p of plan.partitions.filter((p) => restarted.has(p.topic))) {
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
            usesRegistry(selection.stream) ? decoders : undefined,
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
      await writeStream(writeTargets.get(topic)!, batches.get(topic)!, readOffsets);
    }
    batches = newBatches();
    buffered = 0;
  };

  let read = 0;
  const readFromPartition = new Map<string, number>();
  const stopOffsets = new Map(plan.partitions.map((p) => [`${p.partition}:${p.topic}`, p.stopOffset]));
  const maxMessagesPerCommit = options.maxMessagesPerCommit ?? DEFAULT_MAX_MESSAGES_PER_COMMIT;
  const result = await source.readPartitions(
    plan.partitions.filter((p) => p.stopOffset > p.startOffset),
    async (batch) => {
      const stream = batches.get(batch.topic)!;
      await stream.prepare(batch.messages);
      for (const message of batch.messages) stream.add(message);
      const offsets = delivered.get(batch.topic) ?? new Map<number, bigint>();
      offsets.set(batch.partition, batch.nextOffset);
      delivered.set(batch.topic, offsets);
      const key = `${batch.partition}:${batch.topic}`;
      const fromPartition = (readFromPartition.get(key) ?? 0) + batch.messages.length;
      readFromPartition.set(key, fromPartition);
      read += batch.messages.length;
      buffered += batch.messages.length;
      emit({
        type: "partition-progress",
        topic: batch.topic,
        partition: batch.partition,
        nextOffset: batch.nextOffset,
        stopOffset: stopOffsets.get(key)!,
        messages: fromPartition,
        messagesRead: read,
      });
      if (buffered >= maxMessagesPerCommit) await commitBatches();
      return undefined;
    },
    { maxThreads: job.maxThreads, ...(options.signal ? { signal: options.signal } : {}) },
  );
  // A read refused for want of an ACL ends the sync with nothing more committed and the group's
  // offsets where they were: unlike a broker lost mid-read, a rerun meets the same refusal, so
  // committing what was read would land some topics and partitions and leave the rest unread.
  if (result.error && classifyError(result.error).kind === "auth") throw result.error;
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
  let groupCommitError: string | undefined;
  await faultPoint("before-group-commit");
  try {
    await source.commitGroupOffsets(job.consumerGroup, acknowledged);
  } catch (error) {
    // A read that stopped on a broker loss is usually followed by a group commit that fails
    // the same way. The tables hold what was read and their offsets (they win at the next
    // sync): a sync stopped by a rebalance or a broker loss commits what it has and reports it
    // as partial, and the next sync resumes; it is not a failed sync.
    if (result.status === "complete") throw error;
    groupCommitError = error instanceof Error ? error.message : String(error);
  }
  return {
    status: result.status === "complete" ? "complete" : "partial",
    readStatus: result.status,
    ...(result.error ? { readError: result.error.message } : {}),
    ...(groupCommitError === undefined ? {} : { groupCommitError }),
    messagesRead: result.messages,
  };
}

async function ensureNamespace(catalog: Catalog, namespace: readonly string[]): Promise<void> {
  if (await catalog.namespaceExists(namespace)) return;
  try {
    await catalog.createNamespace(namespace);
  } catch (error) {
    // Created meanwhile by another sync of the job: it is there, as wanted.
    if (!(error instanceof AlreadyExistsError)) throw error;
  }
}

function usesRegistry(stream: StreamSettings): boolean {
  return stream.format !== "json" || stream.keyFormat !== "bytes";
}
