// One binding's batch -> its tables, each one Iceberg commit (shape the rows, write the data
// files, locate the old rows of upserted keys, write their deletion vectors, commit): the
// dead-letter table first, the binding's own table last, each with
// the offsets it absorbed in its snapshot summary. Upsert bindings retire the previous row of
// every key with a deletion vector (RowDelta); append bindings add every message (FastAppend).
// An upsert commit that meets another writer's (a member of the job's cluster:) plans its
// deletes again on that writer's snapshot, and RowDelta merges both writers' DVs of a data file
// into one (spec: one DV per data file per snapshot); when that snapshot holds a newer row of a
// key this round wrote a row for (change-order.ts), the whole round is planned again.
//
// What writes rows (Arrow's column builders, the Parquet writer, the upsert key index) loads with
// the first round that writes a file (rowWriting below): a round with nothing new only compares
// positions, and a sync that finds nothing to read starts without those modules.

import { DEAD_LETTER_SCHEMA } from "../decode/dead-letter.ts";
import { millisToMicros, type OpType } from "../decode/system-columns.ts";
import { type Catalog, identifierToString, isCatalogError } from "../iceberg/catalog/catalog.ts";
import {
  bindPartitionSpec,
  PartitionFieldError,
  partitionSpecUpdates,
} from "../iceberg/commit/update-partition-spec.ts";
import type { WrittenFile } from "../iceberg/data-writer.ts";
import { IcebergError } from "../iceberg/errors.ts";
import type { ColumnBatchBuilder } from "../iceberg/parquet/column-batch.ts";
import { type PartitionSpec, unpartitioned } from "../iceberg/spec/partition-spec.ts";
import type { Schema } from "../iceberg/spec/schema.ts";
import type { Snapshot } from "../iceberg/spec/snapshot.ts";
import { currentSchema, currentSnapshot } from "../iceberg/spec/table-metadata.ts";
import { FLOE_JOB } from "../iceberg/spec/table-properties.ts";
import { Table } from "../iceberg/table.ts";
import {
  type RequestedWriteSettings,
  resolveWriteSettings,
  writeSettingsProperties,
} from "../iceberg/write-settings.ts";
import type { Binding, Job } from "../job/job.ts";
import { deadLetterTableName } from "../job/topics.ts";
import type { TopicPartitionOffsets } from "../kafka/commit-offsets.ts";
import { dedupBatch, OP_DELETE, OP_TYPE } from "../upsert/batch-dedup.ts";
import type { KeyIndex } from "../upsert/key-index.ts";
import { planDeletes, recordCommit, type WrittenRows } from "../upsert/plan-deletes.ts";
import type { BindingBatch, RejectReason } from "./binding-batch.ts";
import type { WinnerOrdering } from "./change-order.ts";
import type { SyncEventBody } from "./events.ts";
import { faultPoint } from "./fault-points.ts";
import type { Freshness } from "./freshness.ts";
import { dedupKeyColumns, hashRowKeys } from "./key-hashes.ts";
import type { KeyIndexActivity, KeyIndexStore } from "./key-index-store.ts";
import { type ClaimMember, ConcurrentSyncError, claimOffsets, type OffsetClaim } from "./offset-claim.ts";
import { advancePosition, type KafkaPosition, samePosition, type TopicIds } from "./snapshot-offsets.ts";

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
  /**
   * Upsert rounds planned again, with new data files, because another writer (a member of the
   * job's cluster:) committed a newer row of a key they had written a row for (change-order.ts).
   */
  replans?: number;
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
  /** From the messages' produce timestamps to this commit (freshness.ts); absent when none had one. */
  freshness?: Freshness;
}

/**
 * The tables a binding lands in; writeBinding fills in the tables it creates and the offsets it
 * commits, so later commits of the same sync find them.
 */
export interface BindingTables {
  job: Job;
  catalog: Catalog;
  /** The binding's table, once it exists. */
  table: Table | undefined;
  deadLetterTable: Table | undefined;
  /** The position each table held when this sync planned, then that of its own last commit. */
  tablePosition: KafkaPosition;
  deadLetterPosition: KafkaPosition;
  /** The dead-letter table had no trusted position and this sync resumes: its next round records one, bad messages or not. */
  deadLetterResumed?: boolean;
  stateDir: string;
  /** The upsert key index of the binding's table as its last commit left it, for the next. */
  keyIndexStore?: KeyIndexStore | undefined;
  /** The topics' ids as planned: recorded with the offsets, and a change of id restarts a topic's offsets. */
  topicIds: TopicIds;
  /** Receives the dead-letters and table-committed events of the sync. */
  emit: (event: SyncEventBody) => void;
  /** The group member the sync runs as, if any: its snapshots say so. */
  member?: ClaimMember | undefined;
}

/**
 * Commits one round of a topic's messages: its dead letters, then its rows with the offsets read.
 * Emits table-committed when the round absorbed messages or committed a snapshot.
 */
export async function writeBinding(
  tables: BindingTables,
  batch: BindingBatch,
  readOffsets: TopicPartitionOffsets,
): Promise<TableReport> {
  return (await beginWriteBinding(tables, batch, readOffsets))();
}

/**
 * writeBinding in two steps, so that a sync reads on while a round's files are encoded and
 * committed. This first step settles the round's schema (creating or evolving the table, which
 * the next round's batch starts from), commits its dead letters and shapes an append round's
 * rows into columns, after which the batch's records are no longer needed. It resolves to the
 * second step: encode, upload, commit the table, report. No other round of the binding's tables
 * may begin before that second step has settled.
 */
export async function beginWriteBinding(
  tables: BindingTables,
  batch: BindingBatch,
  readOffsets: TopicPartitionOffsets,
): Promise<() => Promise<TableReport>> {
  const finish = await commitRound(tables, batch, readOffsets);
  const produceTimes = batch.produceTimes;
  return async () => {
    const report = await finish();
    const freshness = produceTimes.freshness(Date.now());
    if (freshness) report.freshness = freshness;
    if (report.messagesRead > 0 || report.snapshotId !== null) tables.emit({ type: "table-committed", report });
    return report;
  };
}

async function commitRound(
  tables: BindingTables,
  batch: BindingBatch,
  readOffsets: TopicPartitionOffsets,
): Promise<() => Promise<TableReport>> {
  const started = performance.now();
  const { job } = tables;
  const { binding, counters } = batch;
  const report: TableReport = {
    topic: batch.topic,
    table: `${job.namespace}.${binding.table}`,
    mode: binding.mode,
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

  if (batch.rejected.length > 0 || tables.deadLetterResumed) {
    await commitDeadLetters(tables, batch, readOffsets);
    tables.deadLetterResumed = false;
    await faultPoint("after-dead-letter-commit");
  }

  batch.inference.settle();
  let table = tables.table;
  if (!table && batch.rows.count === 0) {
    // Nothing to land and nowhere to record offsets: the consumer group carries them.
    report.durationMs = performance.now() - started;
    return async () => report;
  }
  const changes = batch.inference.changes();
  if (!table) {
    const spec = partitionSpecOf(binding, batch.inference.schema, `${job.namespace}.${binding.table}`);
    table = await createTable(tables, binding.table, batch.inference.schema, spec);
    tables.table = table;
    report.created = true;
    report.columnsAdded = batch.inference.schema.fields.map((f) => f.name);
  } else if (changes.length > 0) {
    await table.updateSchema((change) => {
      for (const c of changes) {
        if (c.kind === "add-column") change.addColumn(c.field.name, c.field.type, c.field.doc, c.parent);
        else change.widenColumn(c.name, c.to, c.parent);
      }
    });
    report.columnsAdded = changes.flatMap((c) =>
      c.kind === "add-column" ? [[...(c.parent ?? []), c.field.name].join(".")] : [],
    );
    await faultPoint("after-schema-change");
  }
  if (!report.created && binding.partitionBy) await evolvePartitionSpec(table, binding);

  const committed = tables.tablePosition;
  if (batch.rows.count === 0 && samePosition(advancePosition(committed, readOffsets, tables.topicIds), committed)) {
    // Nothing read (or nothing new past what the table holds): a commit would only add an empty
    // snapshot to the table at every scheduled sync.
    report.durationMs = performance.now() - started;
    return async () => report;
  }
  if (!report.created) await recordWriteSettings(tables, table);
  const { RowBatch, KeyIndexStore, winnerOrdering } = await rowWriting();
  const schema = currentSchema(table.metadata);
  const rows = batch.rows;
  const hashes = binding.dedupKeys.length > 0 ? hashRowKeys(rows, binding.dedupKeys, schema) : undefined;

  const claim: OffsetClaim = {
    table: table.name,
    job: job.name,
    startedFrom: committed,
    read: readOffsets,
    topicIds: tables.topicIds,
    member: tables.member,
  };
  // What this sync now claims: where it started, advanced by what it committed. Not the table's
  // position, which can hold another writer's offsets of partitions this sync is still reading
  // from where it started: the next batch's claim would then take that writer's messages again.
  const committedReport = (snapshot: Snapshot): TableReport => {
    tables.tablePosition = advancePosition(committed, readOffsets, tables.topicIds);
    report.snapshotId = snapshot.snapshotId.toString();
    report.durationMs = performance.now() - started;
    return report;
  };
  if (binding.mode === "append") {
    const rowBatch = new RowBatch(schema, rows.count, rows.typed);
    for (let i = 0; i < rows.count; i++) rowBatch.append(rows, i, rows.records[i] === null ? "d" : "c", hashes);
    // The rows are columns now: the records (one object per message) go before the round is
    // encoded, so that they and the next round's do not share the heap.
    const recordCount = rows.count;
    rows.records.length = 0;
    rows.keys.length = 0;
    return async () => {
      const files = (await writeRows(tables, table, rowBatch.builder)).map((w) => w.file);
      await faultPoint("after-data-files");
      const snapshot = await claimOffsets(table.newFastAppend().appendFile(...files), claim).commit();
      await faultPoint("after-table-commit");
      report.dataFilesAdded = files.length;
      report.recordsAdded = recordCount;
      return committedReport(snapshot);
    };
  }
  let snapshot: Snapshot;
  {
    // Kept between this sync's commits only when a commit and its save both succeed.
    const kept = tables.keyIndexStore;
    tables.keyIndexStore = undefined;
    const store = kept?.indexes(table, binding.dedupKeys)
      ? kept
      : new KeyIndexStore(tables.stateDir, table, binding.dedupKeys);
    const tombstones = new Uint8Array(rows.count);
    const changeDeletes = rows.changes?.deletes;
    for (let i = 0; i < rows.count; i++) tombstones[i] = rows.records[i] === null || changeDeletes?.[i] ? 1 : 0;
    const ordering = winnerOrdering(binding, rows);
    let index = await store.open(table);
    for (let plan = 1; ; plan++) {
      try {
        const landed = await commitUpsert(
          tables,
          batch,
          table,
          store,
          index,
          { hashes: hashes!, tombstones, ordering },
          claim,
        );
        snapshot = landed.snapshot;
        Object.assign(report, landed.counts);
        break;
      } catch (error) {
        // Another writer (a member of the job's cluster:) committed a newer row of a key this
        // round had written a row for: plan the round again on the table as it is now.
        if (!(error instanceof WinnersChanged) || plan >= MAX_UPSERT_PLANS) throw error;
        report.replans = plan;
        index = await store.bringTo(error.index, table, currentSnapshot(table.metadata));
      }
    }
    tables.keyIndexStore = store;
    report.keyIndex = store.takeActivity();
  }
  const upsertReport = committedReport(snapshot);
  return async () => upsertReport;
}

/** Plans of one upsert round before it gives up: each further one follows a newer row of another writer. */
const MAX_UPSERT_PLANS = 5;

/**
 * The stale messages of a round changed when a commit attempt met another writer's commit: the
 * data files written hold rows that must not land. Retrying the commit cannot help; planning the
 * round again on the new table can (commitRound does, with new data files).
 */
class WinnersChanged extends Error {
  override name = "WinnersChanged";
  readonly retryable = true;
  /** The key index as brought to that commit's parent. */
  readonly index: KeyIndex;
  constructor(table: string, index: KeyIndex) {
    super(`${table}: another writer committed newer rows of keys this round wrote; planning the round again`);
    this.index = index;
  }
}

/** A round's messages as an upsert sees them: key hashes, tombstones and how a key's messages are ordered. */
interface UpsertMessages {
  hashes: Uint32Array;
  tombstones: Uint8Array;
  ordering: WinnerOrdering | undefined;
}

/**
 * Lands one upsert round on `opened`'s snapshot: the winners of the batch (by the ordering, less
 * those older than the table's row of their key), their data files, and the deletion vectors of
 * the rows they replace, planned again on the parent of every commit attempt. Throws
 * WinnersChanged when a new parent makes other messages stale than those whose rows were written.
 */
async function commitUpsert(
  tables: BindingTables,
  batch: BindingBatch,
  table: Table,
  store: KeyIndexStore,
  opened: KeyIndex,
  messages: UpsertMessages,
  claim: OffsetClaim,
) {
  const { RowBatch, staleChanges, withoutStale, sameStale } = await rowWriting();
  const { binding, rows } = batch;
  const { hashes, tombstones, ordering } = messages;
  const schema = currentSchema(table.metadata);
  let index = opened;
  const positions = ordering?.positions;
  // Which message of a key wins does not depend on the table; whether it updates or creates
  // does, and so do the rows it retires and the winners older than the table's row: all are
  // found again below on the parent of every commit attempt. The _op_type written into the data
  // files is the first attempt's.
  let winners = dedupBatch(hashes, tombstones, index, positions);
  const stale =
    ordering && (await staleChanges(table, schema, index, hashes, winners, ordering, currentSnapshot(table.metadata)));
  winners = withoutStale(winners, stale);
  let deletes = planDeletes(index, hashes, winners);
  // `_floe_id` caches the key hash that the dedup columns give. Where every dedup key is a
  // column, the key index is built and caught up from those columns (key-index-store.ts), so
  // the cache is never read; a 128-bit hash does not compress and would be most of the file.
  // It is written only where it is the one place that holds a row's key (a decoded key's field).
  const floeIds = dedupKeyColumns(binding.dedupKeys, schema) === undefined ? hashes : undefined;
  const rowBatch = new RowBatch(schema, winners.messages.length, rows.typed);
  const rowMessages: number[] = [];
  for (let w = 0; w < winners.messages.length; w++) {
    if (winners.ops[w] === OP_DELETE) continue;
    const i = winners.messages[w]!;
    rowBatch.append(rows, i, OP_TYPE[winners.ops[w]!] as OpType, floeIds);
    rowMessages.push(i);
  }
  const written = await writeRows(tables, table, rowBatch.builder);
  const files = written.map((w) => w.file);
  const planned = index.snapshotId;
  const delta = table.newRowDelta().addRows(...files);
  delta.deleteRowsPlannedOn(async (_base, parent) => {
    if ((parent?.snapshotId ?? null) !== planned) {
      // Another writer committed since the index was opened: its rows are live rows too, and
      // the deletion vectors it added are merged into this commit's (row-delta.ts).
      index = await store.bringTo(index, table, parent);
      const all = dedupBatch(hashes, tombstones, index, positions);
      const now = ordering && (await staleChanges(table, schema, index, hashes, all, ordering, parent));
      if (!sameStale(stale, now)) throw new WinnersChanged(table.name, index);
      winners = withoutStale(all, stale);
      deletes = planDeletes(index, hashes, winners);
    }
    return deletes.files;
  });
  await faultPoint("after-data-files");
  const snapshot = await claimOffsets(delta, claim).commit();
  await faultPoint("after-table-commit");
  recordCommit(index, hashes, winners, writtenRows(written, rowMessages), snapshot.snapshotId);
  await store.save(index);
  return {
    snapshot,
    counts: {
      dataFilesAdded: files.length,
      recordsAdded: rowMessages.length,
      deletionVectorsAdded: Number(snapshot.summary["added-dvs"] ?? 0),
      positionsDeleted: deletes.positionsDeleted,
      duplicatesRetired: deletes.duplicatesRetired,
    },
  };
}

/** The write settings the job file states (target_file_size_bytes, compression); the others come from the table. */
function requestedSettings(tables: BindingTables): RequestedWriteSettings {
  const { targetFileSizeBytes, compression } = tables.job.destination;
  return { targetFileSizeBytes, compression };
}

/**
 * Sets on the table the write settings the job file states where the table says otherwise, before
 * any file is written, so that other engines' writes and compactions follow the job too.
 */
async function recordWriteSettings(tables: BindingTables, table: Table): Promise<void> {
  const { changes } = resolveWriteSettings(requestedSettings(tables), table.metadata.properties);
  if (Object.keys(changes).length > 0) await table.setProperties(changes);
}

async function writeRows(tables: BindingTables, table: Table, builder: ColumnBatchBuilder): Promise<WrittenFile[]> {
  if (builder.rowCount === 0) return [];
  const { writeDataFileRows } = await rowWriting();
  return writeDataFileRows(table, builder.build(), requestedSettings(tables));
}

/** The modules that write rows, loaded by the first round that needs them (see the header). */
async function rowWriting() {
  const [
    { writeDataFileRows },
    { ColumnBatchBuilder },
    { RowBatch },
    { KeyIndexStore },
    { staleChanges, withoutStale, sameStale, winnerOrdering },
  ] = await Promise.all([
    import("../iceberg/data-writer.ts"),
    import("../iceberg/parquet/column-batch.ts"),
    import("./row-batch.ts"),
    import("./key-index-store.ts"),
    import("./change-order.ts"),
  ]);
  return {
    writeDataFileRows,
    ColumnBatchBuilder,
    RowBatch,
    KeyIndexStore,
    staleChanges,
    withoutStale,
    sameStale,
    winnerOrdering,
  };
}

/** Row r of a file holds row rows[r] of the batch, the message at rowMessages[rows[r]]. */
function writtenRows(written: readonly WrittenFile[], rowMessages: readonly number[]): WrittenRows[] {
  return written.map(({ file, rows }) => ({ path: file.filePath, messages: rows.map((r) => rowMessages[r]!) }));
}

/** The partition spec a new table of the binding gets: its partition_by over the schema, else none. */
function partitionSpecOf(binding: Binding, schema: Schema, table: string): PartitionSpec {
  if (!binding.partitionBy || binding.partitionBy.length === 0) return unpartitioned;
  try {
    return bindPartitionSpec(schema, binding.partitionBy);
  } catch (error) {
    throw partitionByError(error, binding, table);
  }
}

/**
 * A table whose default spec is not the binding's partition_by evolves to it (spec "Partition
 * Evolution"): new files follow the new spec, the files written before keep theirs.
 */
async function evolvePartitionSpec(table: Table, binding: Binding): Promise<void> {
  try {
    if (partitionSpecUpdates(table.metadata, binding.partitionBy!).updates.length === 0) return;
    await table.updateSpec(binding.partitionBy!);
  } catch (error) {
    throw partitionByError(error, binding, table.name);
  }
}

/** A partition field the table's columns do not allow, named by its place in the job file. */
function partitionByError(error: unknown, binding: Binding, table: string): unknown {
  if (!(error instanceof PartitionFieldError)) return error;
  return new IcebergError(
    "validation",
    `streams.${binding.topic}.partition_by.${error.index}: ${error.message} in table ${table}`,
    { cause: error },
  );
}

async function createTable(
  tables: BindingTables,
  name: string,
  schema: Schema,
  spec: PartitionSpec = unpartitioned,
): Promise<Table> {
  const { job, catalog } = tables;
  const identifier = { namespace: [job.namespace], name };
  try {
    return new Table(
      catalog,
      await catalog.createTable(identifier, {
        schema,
        spec,
        properties: {
          [FLOE_JOB.key]: job.name,
          ...writeSettingsProperties(resolveWriteSettings(requestedSettings(tables), {}).settings),
        },
      }),
    );
  } catch (error) {
    // The table did not exist when this sync planned: another writer created it meanwhile, and
    // may have committed to it the messages this sync read.
    if (!isCatalogError(error, "already-exists")) throw error;
    throw new ConcurrentSyncError(
      `${identifierToString(identifier)}: another writer created the table while this sync ran; nothing of this sync was committed to it. Is another floe sync of job ${job.name} running? Run again once it is done.`,
    );
  }
}

/** Dead letters are committed before the binding's table: its offsets must never run ahead of them. */
async function commitDeadLetters(tables: BindingTables, batch: BindingBatch, readOffsets: TopicPartitionOffsets) {
  if (tables.deadLetterTable) await recordWriteSettings(tables, tables.deadLetterTable);
  else tables.deadLetterTable = await createTable(tables, deadLetterTableName(batch.binding.table), DEAD_LETTER_SCHEMA);
  const table = tables.deadLetterTable;
  const { ColumnBatchBuilder } = await rowWriting();
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
  const files = (await writeRows(tables, table, builder)).map((w) => w.file);
  const claim: OffsetClaim = {
    table: table.name,
    job: tables.job.name,
    startedFrom: tables.deadLetterPosition,
    read: readOffsets,
    topicIds: tables.topicIds,
    member: tables.member,
  };
  const snapshot = await claimOffsets(table.newFastAppend().appendFile(...files), claim).commit();
  // As for the binding's table: this sync's own claim advanced, not the table's position.
  tables.deadLetterPosition = advancePosition(claim.startedFrom, readOffsets, tables.topicIds);
  // A resumed dead-letter table commits its position with no bad message: nothing to report.
  if (batch.rejected.length === 0) return;
  const reasons: Partial<Record<RejectReason, number>> = {};
  for (const m of batch.rejected) reasons[m.reason] = (reasons[m.reason] ?? 0) + 1;
  tables.emit({
    type: "dead-letters",
    topic: batch.topic,
    table: `${tables.job.namespace}.${deadLetterTableName(batch.binding.table)}`,
    count: batch.rejected.length,
    reasons,
    snapshotId: snapshot.snapshotId.toString(),
  });
}
