// One topic's batch -> its tables, each one Iceberg commit (shape the rows, write the data
// files, locate the old rows of upserted keys, write their deletion vectors, commit): the
// dead-letter table first, the topic's own table last, each with
// the offsets it absorbed in its snapshot summary. Upsert streams retire the previous row of
// every key with a deletion vector (RowDelta); append streams add every message (FastAppend).
import type { Job } from "../config/job.ts";
import { deadLetterTableName } from "../config/topics.ts";
import { DEAD_LETTER_SCHEMA } from "../decode/dead-letter.ts";
import { millisToMicros, type OpType } from "../decode/system-columns.ts";
import { AlreadyExistsError, type Catalog, identifierToString } from "../iceberg/catalog/catalog.ts";
import { writeDataFiles } from "../iceberg/data-writer.ts";
import { ColumnBatchBuilder } from "../iceberg/parquet/column-batch.ts";
import type { DataFile } from "../iceberg/spec/manifest.ts";
import { unpartitioned } from "../iceberg/spec/partition-spec.ts";
import type { Schema } from "../iceberg/spec/schema.ts";
import type { Snapshot } from "../iceberg/spec/snapshot.ts";
import { currentSchema } from "../iceberg/spec/table-metadata.ts";
import { Table } from "../iceberg/table.ts";
import type { TopicPartitionOffsets } from "../kafka/commit-offsets.ts";
import { dedupBatch, OP_DELETE, OP_TYPE } from "../upsert/batch-dedup.ts";
import { planDeletes, recordCommit, type WrittenRows } from "../upsert/plan-deletes.ts";
import type { SyncEventBody } from "./events.ts";
import { faultPoint } from "./fault-points.ts";
import { hashRowKeys } from "./key-hashes.ts";
import { type KeyIndexActivity, KeyIndexStore } from "./key-index-store.ts";
import { ConcurrentSyncError, claimOffsets, type OffsetClaim } from "./offset-claim.ts";
import { RowBatch } from "./row-batch.ts";
import { advancePosition, type KafkaPosition, samePosition, type TopicIds } from "./snapshot-offsets.ts";
import type { RejectReason, StreamBatch } from "./stream-batch.ts";

export interface TableReport {
  topic: string;
  table: string;
  mode: "upsert" | "append";
  messagesRead: number;
  bytesRead: number;
  dataFilesAdded: number;
  deletionVectorsAdded: number;
  recordsAdded: number;
  positionsDeleted: number;
  /**
   * Of positionsDeleted, rows that shared a key with a later row (another engine inserted a row of
   * a key the table held): retired so that the table holds one row per key again.
   */
  duplicatesRetired?: number;
  /** How the upsert key index was brought to each parent this round committed on (upsert only). */
  keyIndex?: KeyIndexActivity[];
  deadLetters: number;
  skipped: number;
  tombstonesIgnored: number;
  /** The table did not exist before this sync. */
  created: boolean;
  columnsAdded: string[];
  snapshotId: string | null;
  durationMs: number;
}

/**
 * Where a topic lands; writeStream fills in the tables it creates and the offsets it commits, so
 * later commits of the same sync find them.
 */
export interface StreamTarget {
  job: Job;
  catalog: Catalog;
  /** The topic's table, once it exists. */
  table: Table | undefined;
  deadLetterTable: Table | undefined;
  /** The position each table held when this sync planned, then that of its own last commit. */
  tablePosition: KafkaPosition;
  deadLetterPosition: KafkaPosition;
  /** The dead-letter table had no trusted position and this sync resumes: its next round records one, bad messages or not. */
  deadLetterResumed?: boolean;
  stateDir: string;
  /** The topics' ids as planned: recorded with the offsets, and a change of id restarts a topic's offsets. */
  topicIds: TopicIds;
  /** Receives the dead-letters and table-committed events of the sync. */
  emit: (event: SyncEventBody) => void;
}

/**
 * Commits one round of a topic's messages: its dead letters, then its rows with the offsets read.
 * Emits table-committed when the round absorbed messages or committed a snapshot.
 */
export async function writeStream(
  target: StreamTarget,
  batch: StreamBatch,
  readOffsets: TopicPartitionOffsets,
): Promise<TableReport> {
  const report = await commitRound(target, batch, readOffsets);
  if (report.messagesRead > 0 || report.snapshotId !== null) target.emit({ type: "table-committed", report });
  return report;
}

async function commitRound(
  target: StreamTarget,
  batch: StreamBatch,
  readOffsets: TopicPartitionOffsets,
): Promise<TableReport> {
  const started = performance.now();
  const { job } = target;
  const { selection, counters } = batch;
  const report: TableReport = {
    topic: batch.topic,
    table: `${job.namespace}.${selection.table}`,
    mode: selection.stream.mode,
    messagesRead: counters.messages,
    bytesRead: counters.bytes,
    dataFilesAdded: 0,
    deletionVectorsAdded: 0,
    recordsAdded: 0,
    positionsDeleted: 0,
    deadLetters: batch.rejected.length,
    skipped: counters.skipped,
    tombstonesIgnored: counters.tombstonesIgnored,
    created: false,
    columnsAdded: [],
    snapshotId: null,
    durationMs: 0,
  };

  if (batch.rejected.length > 0 || target.deadLetterResumed) {
    await commitDeadLetters(target, batch, readOffsets);
    target.deadLetterResumed = false;
    await faultPoint("after-dead-letter-commit");
  }

  batch.inference.settle();
  let table = target.table;
  if (!table && batch.rows.count === 0) {
    // Nothing to land and nowhere to record offsets: the consumer group carries them.
    report.durationMs = performance.now() - started;
    return report;
  }
  const changes = batch.inference.changes();
  if (!table) {
    table = await createTable(target, selection.table, batch.inference.schema);
    target.table = table;
    report.created = true;
    report.columnsAdded = batch.inference.schema.fields.map((f) => f.name);
  } else if (changes.length > 0) {
    await table.updateSchema((change) => {
      for (const c of changes) {
        if (c.kind === "add-column") change.addColumn(c.field.name, c.field.type, c.field.doc);
        else change.widenColumn(c.name, c.to);
      }
    });
    report.columnsAdded = changes.flatMap((c) => (c.kind === "add-column" ? [c.field.name] : []));
    await faultPoint("after-schema-change");
  }

  const committed = target.tablePosition;
  if (batch.rows.count === 0 && samePosition(advancePosition(committed, readOffsets, target.topicIds), committed)) {
    // Nothing read (or nothing new past what the table holds): a commit would only add an empty
    // snapshot to the table at every scheduled sync.
    report.durationMs = performance.now() - started;
    return report;
  }
  const schema = currentSchema(table.metadata);
  const stream = selection.stream;
  const rows = batch.rows;
  const hashes = stream.dedupKeys.length > 0 ? hashRowKeys(rows, stream.dedupKeys, schema) : undefined;

  const claim: OffsetClaim = {
    table: table.name,
    job: job.name,
    startedFrom: committed,
    read: readOffsets,
    topicIds: target.topicIds,
  };
  let snapshot: Snapshot;
  if (stream.mode === "append") {
    const rowBatch = new RowBatch(schema, rows.count, rows.typed);
    for (let i = 0; i < rows.count; i++) rowBatch.append(rows, i, rows.records[i] === null ? "d" : "c", hashes);
    const files = await writeRows(target, table, rowBatch.builder);
    await faultPoint("after-data-files");
    snapshot = await claimOffsets(table.newFastAppend().appendFile(...files), claim).commit();
    await faultPoint("after-table-commit");
    report.dataFilesAdded = files.length;
    report.recordsAdded = rows.count;
  } else {
    const store = new KeyIndexStore(target.stateDir, table, stream.dedupKeys);
    let index = await store.open(table);
    const tombstones = new Uint8Array(rows.count);
    for (let i = 0; i < rows.count; i++) tombstones[i] = rows.records[i] === null ? 1 : 0;
    // Which message of a key wins does not depend on the table; whether it updates or creates
    // does, and so do the rows it retires: both are found again below on the parent of every
    // commit attempt. The _op_type written into the data files is the first attempt's.
    let winners = dedupBatch(hashes!, tombstones, index);
    let deletes = planDeletes(index, hashes!, winners);
    const rowBatch = new RowBatch(schema, winners.messages.length, rows.typed);
    const rowMessages: number[] = [];
    for (let w = 0; w < winners.messages.length; w++) {
      if (winners.ops[w] === OP_DELETE) continue;
      const i = winners.messages[w]!;
      rowBatch.append(rows, i, OP_TYPE[winners.ops[w]!] as OpType, hashes);
      rowMessages.push(i);
    }
    const files = await writeRows(target, table, rowBatch.builder);
    const planned = index.snapshotId;
    const upserted = table;
    const delta = table.newRowDelta().addRows(...files);
    delta.deleteRowsPlannedOn(async (_base, parent) => {
      if ((parent?.snapshotId ?? null) !== planned) {
        // Another writer committed since the index was opened: its rows are live rows too.
        index = await store.bringTo(index, upserted, parent);
        winners = dedupBatch(hashes!, tombstones, index);
        deletes = planDeletes(index, hashes!, winners);
      }
      return deletes.files;
    });
    await faultPoint("after-data-files");
    snapshot = await claimOffsets(delta, claim).commit();
    await faultPoint("after-table-commit");
    recordCommit(index, hashes!, winners, writtenRows(files, rowMessages), snapshot.snapshotId);
    await store.save(index);
    report.dataFilesAdded = files.length;
    report.recordsAdded = rowMessages.length;
    report.deletionVectorsAdded = Number(snapshot.summary["added-dvs"] ?? 0);
    report.positionsDeleted = deletes.positionsDeleted;
    report.duplicatesRetired = deletes.duplicatesRetired;
    report.keyIndex = store.activity;
  }
  // What this sync now claims: where it started, advanced by what it committed. Not the table's
  // position, which can hold another writer's offsets of partitions this sync is still reading
  // from where it started: the next batch's claim would then take that writer's messages again.
  target.tablePosition = advancePosition(committed, readOffsets, target.topicIds);
  report.snapshotId = snapshot.snapshotId.toString();
  report.durationMs = performance.now() - started;
  return report;
}

async function writeRows(target: StreamTarget, table: Table, builder: ColumnBatchBuilder): Promise<DataFile[]> {
  if (builder.rowCount === 0) return [];
  return writeDataFiles(table, builder.build(), { targetFileSizeBytes: target.job.destination.targetFileSizeBytes });
}

/** Row r of the k-th file holds the message at rowMessages[sum of earlier files' rows + r]. */
function writtenRows(files: readonly DataFile[], rowMessages: readonly number[]): WrittenRows[] {
  let start = 0;
  return files.map((file) => {
    const count = Number(file.recordCount);
    const messages = Uint32Array.from(rowMessages.slice(start, start + count));
    start += count;
    return { path: file.filePath, messages };
  });
}

async function createTable(target: StreamTarget, name: string, schema: Schema): Promise<Table> {
  const { job, catalog } = target;
  const identifier = { namespace: [job.namespace], name };
  try {
    return new Table(
      catalog,
      await catalog.createTable(identifier, {
        schema,
        spec: unpartitioned,
        properties: {
          "floe.job": job.name,
          "write.parquet.compression-codec": job.destination.compression,
          "write.target-file-size-bytes": String(job.destination.targetFileSizeBytes),
        },
      }),
    );
  } catch (error) {
    // The table did not exist when this sync planned: another writer created it meanwhile, and
    // may have committed to it the messages this sync read.
    if (!(error instanceof AlreadyExistsError)) throw error;
    throw new ConcurrentSyncError(
      `${identifierToString(identifier)}: another writer created the table while this sync ran; nothing of this sync was committed to it. Is another floe sync of job ${job.name} running? Run again once it is done.`,
    );
  }
}

/** Dead letters are committed before the topic's table: its offsets must never run ahead of them. */
async function commitDeadLetters(target: StreamTarget, batch: StreamBatch, readOffsets: TopicPartitionOffsets) {
  target.deadLetterTable ??= await createTable(target, deadLetterTableName(batch.selection.table), DEAD_LETTER_SCHEMA);
  const table = target.deadLetterTable;
  const builder = new ColumnBatchBuilder(currentSchema(table.metadata));
  const writtenAt = millisToMicros(Date.now());
  for (const m of batch.rejected) {
    builder.appendRow({
      _kafka_key: m.key,
      _kafka_value: m.value,
      _kafka_partition: m.partition,
      _kafka_offset: m.offset,
      _kafka_timestamp: millisToMicros(m.timestamp),
      _error_kind: m.reason,
      _error: m.detail,
      _floe_timestamp: writtenAt,
    });
  }
  const files = await writeRows(target, table, builder);
  const claim: OffsetClaim = {
    table: table.name,
    job: target.job.name,
    startedFrom: target.deadLetterPosition,
    read: readOffsets,
    topicIds: target.topicIds,
  };
  const snapshot = await claimOffsets(table.newFastAppend().appendFile(...files), claim).commit();
  // As for the stream's table: this sync's own claim advanced, not the table's position.
  target.deadLetterPosition = advancePosition(claim.startedFrom, readOffsets, target.topicIds);
  // A resumed dead-letter table commits its position with no bad message: nothing to report.
  if (batch.rejected.length === 0) return;
  const reasons: Partial<Record<RejectReason, number>> = {};
  for (const m of batch.rejected) reasons[m.reason] = (reasons[m.reason] ?? 0) + 1;
  target.emit({
    type: "dead-letters",
    topic: batch.topic,
    table: `${target.job.namespace}.${deadLetterTableName(batch.selection.table)}`,
    count: batch.rejected.length,
    reasons,
    snapshotId: snapshot.snapshotId.toString(),
  });
}
