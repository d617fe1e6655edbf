// The upsert key index of a table, kept beside the job: the hash of each key -> the data file and
// row position of its live row, which the key's next deletion vector needs; loaded from its file,
// caught up from the snapshots committed since it was saved (by another writer, a compaction, or a
// sync that died between its commit and saving the index), or rebuilt from the live data files
// when it cannot be caught up. It is a cache of the table, never the truth: a missing or foreign
// file only costs a rebuild.
//
// Saving appends what changed since the last save to the index's journal (key-index-journal.ts):
// a commit writes the keys it touched, not the whole index. The index file is written whole when
// the index was rebuilt, or when the journal would pass JOURNAL_SHARE of the index file, so
// loading reads at most that much more than the index and the disk holds under 40 bytes a key.
// Between the commits of one sync the store keeps the index in memory (`open` reuses it).
//
// A row's key comes from its dedup columns, hashed as a message's dedup values are (key-hashes.ts),
// not from its `_floe_id`: rows that another engine wrote have none (a Spark INSERT or MERGE) or a
// stale one (a Spark UPDATE of a dedup column copies the old `_floe_id`), and the columns are what
// a reader sees. Only a table keyed on a field of a decoded Kafka key (`_kafka_key.<field>`), which
// no column stores, takes the key from `_floe_id`; its rows without one cannot be indexed.
//
// Reading is bounded: only the key columns of each data file (its footer, then their column chunks,
// by ranged reads for a large file: iceberg/scan/data-file-columns.ts), a fixed number of files in flight
// (READ_CONCURRENCY), applied to the index one file at a time in commit order, so that a rebuild
// holds the index plus a few files' keys, never the whole table's.
import { mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { FLOE_ID } from "../decode/system-columns.ts";
import { IcebergError } from "../iceberg/errors.ts";
import { readDataFileColumns } from "../iceberg/scan/data-file-columns.ts";
import { deletedPositionsOf, readDeletedPositions } from "../iceberg/scan/deleted-positions.ts";
import { type FileSnapshot, type LiveFile, planFiles } from "../iceberg/scan/plan-files.ts";
import type { DataFile } from "../iceberg/spec/manifest.ts";
import { findField } from "../iceberg/spec/schema.ts";
import type { Snapshot } from "../iceberg/spec/snapshot.ts";
import { ancestors, currentSchema, currentSnapshot, snapshotById } from "../iceberg/spec/table-metadata.ts";
import type { NestedField } from "../iceberg/spec/types.ts";
import type { Table } from "../iceberg/table.ts";
import { type DedupKey, dedupKeyText } from "../job/dedup-key.ts";
import { CatchUp, type CatchUpReport, type DataFileKeys, type DeletedRows } from "../upsert/catch-up.ts";
import { KEY_HASH_WORDS, keyHashes, parseKeyHash, readKeyHashBytes } from "../upsert/key-hash.ts";
import { KeyIndex, MAX_POSITION } from "../upsert/key-index.ts";
import { KeyIndexChanges } from "../upsert/key-index-changes.ts";
import {
  appendKeyIndexChanges,
  frameBytes,
  loadJournaledKeyIndex,
  type SavedKeyIndex,
  saveWholeKeyIndex,
} from "../upsert/key-index-journal.ts";
import { dedupKeyColumns, hashStoredKeys } from "./key-hashes.ts";

/** Data files (and deletion vectors) read at once while catching up or rebuilding. */
export const READ_CONCURRENCY = 4;
/**
 * Part of the scope of a saved index: how rows get their keys. An index saved by a floe that took
 * keys from `_floe_id` alone lacks the rows of other engines, and loads as absent (one rebuild).
 */
const KEY_DERIVATION = "keys-from-dedup-columns";
/** The journal may grow to this share of the index file (or JOURNAL_MIN_BYTES) before the index is written whole. */
const JOURNAL_SHARE = 0.4;
const JOURNAL_MIN_BYTES = 1 << 20;

/** What bringing the index to a snapshot did: for the sync's report and the tests. */
export interface KeyIndexActivity {
  /** How the index was brought to the snapshot: loaded as saved, caught up, or rebuilt from the live files. */
  how: "loaded" | "caught-up" | "rebuilt";
  /** Data files whose key columns were read. */
  dataFilesRead: number;
  /** Bytes read of those files (ranged reads: the footer and the key column chunks). */
  bytesRead: number;
  /** Rows found again in the table that share a key with a later row: retired by the next commit. */
  duplicateKeys: number;
  /** Live rows that no upsert can name: a null dedup value, or no readable `_floe_id` where only it holds the key. */
  rowsWithoutKey: number;
}

export class KeyIndexStore {
  readonly path: string;
  readonly #scope: string;
  readonly #dedupKeys: readonly DedupKey[];
  readonly #concurrency: number;
  /** One record per bringTo since the last takeActivity, oldest first. */
  #activity: KeyIndexActivity[] = [];
  /** The index as loaded or last saved, and where its next journal frame goes. */
  #saved: SavedKeyIndex | undefined;

  constructor(stateDir: string, table: Table, dedupKeys: readonly DedupKey[], concurrency = READ_CONCURRENCY) {
    this.path = join(stateDir, `${table.name}.keyindex`);
    this.#scope = keyIndexScope(table, dedupKeys);
    this.#dedupKeys = dedupKeys;
    this.#concurrency = concurrency;
  }

  /** Whether this store indexes `table` by `dedupKeys`: a store kept between commits must. */
  indexes(table: Table, dedupKeys: readonly DedupKey[]): boolean {
    return this.#scope === keyIndexScope(table, dedupKeys);
  }

  /**
   * The index as of the table's current snapshot: the one this store last saved when there is
   * one, else the one saved on disk, caught up.
   */
  async open(table: Table): Promise<KeyIndex> {
    this.#saved ??= this.#recording(await loadJournaledKeyIndex(this.path, this.#scope));
    return this.bringTo(this.#saved?.index, table, currentSnapshot(table.metadata));
  }

  /** What bringing the index to each parent did since the last call. */
  takeActivity(): KeyIndexActivity[] {
    return this.#activity.splice(0);
  }

  /**
   * `index` (when given) brought to `target`, a snapshot of the table's metadata: caught up from
   * the snapshots in between when the one it reflects is an ancestor of `target`, otherwise
   * rebuilt. Used when a sync's commit must land on a parent that another writer committed.
   */
  async bringTo(index: KeyIndex | undefined, table: Table, target: Snapshot | undefined): Promise<KeyIndex> {
    try {
      return await this.#bringTo(index, table, target);
    } catch (error) {
      // Catching up changes the index in place: one that failed half way reflects no snapshot.
      if (index && this.#saved?.index === index) this.#saved = undefined;
      throw error;
    }
  }

  async #bringTo(index: KeyIndex | undefined, table: Table, target: Snapshot | undefined): Promise<KeyIndex> {
    if (!target) return new KeyIndex(this.#scope, null);
    const targetId = target.snapshotId;
    if (index && index.snapshotId === targetId) {
      this.#activity.push({ how: "loaded", dataFilesRead: 0, bytesRead: 0, duplicateKeys: 0, rowsWithoutKey: 0 });
      return index;
    }
    const now = await planFiles(table, target);
    // Catching up replays what happened after the index's snapshot, so only from an ancestor of
    // the target: after a rollback the index's snapshot may still be in the metadata, but its
    // removed files and DVs are live again, and only a rebuild sees them.
    const then =
      index?.snapshotId != null && [...ancestors(table.metadata, target)].some((s) => s.snapshotId === index.snapshotId)
        ? snapshotById(table.metadata, index.snapshotId)
        : undefined;
    const reader = new KeyReader(table, now, this.#dedupKeys);
    let run: CatchUp;
    let files: LiveFile<DataFile>[];
    if (index && then) {
      const before = await planFiles(table, then);
      run = new CatchUp(
        index,
        [...before.dataFiles.keys()].filter((path) => !now.dataFiles.has(path)),
        await changedDeletionVectors(table, before, now, this.#concurrency),
        (path) => {
          const sequence = now.dataFiles.get(path)?.entry.sequenceNumber;
          return sequence === undefined ? undefined : Number(sequence);
        },
      );
      files = [...now.dataFiles.values()].filter(({ entry }) => !before.dataFiles.has(entry.file.filePath));
    } else {
      files = [...now.dataFiles.values()];
      run = new CatchUp(new KeyIndex(this.#scope, null, liveRows(now)), [], []);
    }
    // Commit order (ascending data sequence number): on a key found in two files, the later wins.
    files.sort((a, b) => Number(a.entry.sequenceNumber! - b.entry.sequenceNumber!));
    for await (const keys of inOrder(files, this.#concurrency, ({ entry }) =>
      reader.read(entry.file, entry.sequenceNumber!),
    )) {
      run.add(keys);
    }
    const report: CatchUpReport = run.finish(targetId);
    this.#activity.push({
      how: index && then ? "caught-up" : "rebuilt",
      dataFilesRead: reader.filesRead,
      bytesRead: reader.bytesRead,
      duplicateKeys: report.duplicateKeys,
      rowsWithoutKey: report.rowsWithoutKey,
    });
    return run.index;
  }

  /**
   * Saves `index`: its changes since the last save appended to the journal when `index` is the
   * index this store loaded or saved, else the whole index. If saving fails the store forgets
   * what it saved, so the next open loads from disk what did land.
   */
  async save(index: KeyIndex): Promise<void> {
    const saved = this.#saved;
    this.#saved = undefined;
    const changes = index.changes;
    if (saved?.index === index && changes && !changes.full) {
      if (saved.journalBytes + frameBytes(changes) <= journalLimit(saved)) {
        this.#saved = this.#recording(await appendKeyIndexChanges(saved, this.path));
        return;
      }
    }
    await mkdir(dirname(this.path), { recursive: true });
    this.#saved = this.#recording(await saveWholeKeyIndex(index, this.path));
  }

  /** `saved`, its index recording changes up to what its journal has room for. */
  #recording(saved: SavedKeyIndex | undefined): SavedKeyIndex | undefined {
    if (saved) saved.index.changes = new KeyIndexChanges(journalLimit(saved) - saved.journalBytes);
    return saved;
  }
}

/** The bytes the journal of `saved` may reach before the index is written whole instead. */
function journalLimit(saved: SavedKeyIndex): number {
  return Math.max(JOURNAL_MIN_BYTES, saved.file.byteLength * JOURNAL_SHARE);
}

/**
 * What a saved index indexes. A recreated table (new uuid) or other dedup keys make a saved
 * index foreign. The keys as the job file writes them: an index saved before they were parsed
 * keeps its scope.
 */
function keyIndexScope(table: Table, dedupKeys: readonly DedupKey[]): string {
  return `${table.metadata.tableUuid}|${dedupKeys.map(dedupKeyText).join(",")}|${KEY_DERIVATION}`;
}

/** The live rows of a snapshot by its manifests: the index is sized once for them. */
function liveRows(plan: FileSnapshot): number {
  let rows = 0;
  for (const { entry } of plan.dataFiles.values()) rows += Number(entry.file.recordCount);
  for (const { entry } of plan.deletionVectors.values()) rows -= Number(entry.file.recordCount);
  return Math.max(0, rows);
}

/**
 * `read` of each item, at most `concurrency` in flight, yielded in the items' order: reading runs
 * ahead of the consumer by a bounded number of items while it applies them one at a time.
 */
export async function* inOrder<T, R>(
  items: readonly T[],
  concurrency: number,
  read: (item: T) => Promise<R>,
): AsyncGenerator<R> {
  const pending: Promise<R>[] = [];
  let next = 0;
  const start = () => {
    const promise = read(items[next++]!);
    // Awaited in turn below; a failure ahead of the one awaited must not count as unhandled meanwhile.
    promise.catch(() => {});
    pending.push(promise);
  };
  while (next < items.length && pending.length < concurrency) start();
  while (pending.length > 0) {
    const result = await pending.shift()!;
    if (next < items.length) start();
    yield result;
  }
}

async function changedDeletionVectors(
  table: Table,
  before: FileSnapshot,
  now: FileSnapshot,
  concurrency: number,
): Promise<DeletedRows[]> {
  const changed = [...now.deletionVectors].filter(([path, dv]) => {
    const old = before.deletionVectors.get(path);
    return before.dataFiles.has(path) && (!old || old.entry.file.filePath !== dv.entry.file.filePath);
  });
  const rows: DeletedRows[] = [];
  for await (const deleted of inOrder(changed, concurrency, async ([path, dv]) => ({
    path,
    positions: (await readDeletedPositions(table.io, dv.entry.file)).toArray(),
  }))) {
    rows.push(deleted);
  }
  return rows;
}

/** Reads the keys of a snapshot's data files, counting what it read. */
class KeyReader {
  filesRead = 0;
  bytesRead = 0;
  readonly #table: Table;
  readonly #plan: FileSnapshot;
  /** The dedup columns, or undefined when `_floe_id` is the only place that holds a row's key. */
  readonly #keyColumns: NestedField[] | undefined;
  readonly #floeId: NestedField | undefined;

  constructor(table: Table, plan: FileSnapshot, dedupKeys: readonly DedupKey[]) {
    this.#table = table;
    this.#plan = plan;
    const schema = currentSchema(table.metadata);
    this.#keyColumns = dedupKeyColumns(dedupKeys, schema);
    this.#floeId = findField(schema, FLOE_ID);
    if (!this.#keyColumns && !this.#floeId) {
      throw new Error(`${table.name}: no ${FLOE_ID} column, so its rows cannot be matched by key`);
    }
  }

  /** The key hashes of a data file's rows, its deleted rows, and when its rows were last updated. */
  async read(file: DataFile, sequenceNumber: bigint): Promise<DataFileKeys> {
    const path = file.filePath;
    if (file.recordCount > BigInt(MAX_POSITION) + 1n) {
      throw new IcebergError(
        "unsupported",
        `${this.#table.name}: data file ${path} holds ${file.recordCount} rows; an upsert table's key index addresses at most ${MAX_POSITION + 1} rows a file (rewrite it into smaller files)`,
      );
    }
    const current = currentSchema(this.#table.metadata);
    // The row lineage column is no field of the table schema; a file that lacks it reads as nulls.
    const schema = { ...current, fields: [...current.fields, LAST_UPDATED_SEQUENCE_NUMBER] };
    const fields = this.#keyColumns ?? [this.#floeId!];
    const { rowCount, columns } = await readDataFileColumns(
      this.#table.io,
      file,
      schema,
      [...fields.map((f) => f.id), LAST_UPDATED_SEQUENCE_NUMBER.id],
      this,
    );
    this.filesRead++;
    const values = fields.map((f) => columns.get(f.id)!);
    const { hashes, unkeyed } = this.#keyColumns
      ? hashStoredKeys(rowCount, values, this.#keyColumns)
      : floeIds(values[0]!);
    // Its DV, or in a table upgraded from v2 its position delete files: deleted rows are not indexed.
    const deletedPositions = (await deletedPositionsOf(this.#table.io, this.#plan, path))?.toArray();
    return {
      path,
      keyHashes: hashes,
      deletedPositions,
      unkeyedRows: unkeyed,
      sequenceNumber: Number(sequenceNumber),
      rowSequenceNumbers: rowSequences(columns.get(LAST_UPDATED_SEQUENCE_NUMBER.id)!),
    };
  }
}

/**
 * `_last_updated_sequence_number` (spec "Row Lineage", reserved field id 2147483539; `_row_id` is 2147483540): null in a
 * file means the row inherits the file's data sequence number; a row a writer copied keeps its own.
 */
const LAST_UPDATED_SEQUENCE_NUMBER: NestedField = {
  id: 2147483539,
  name: "_last_updated_sequence_number",
  required: false,
  type: "long",
};

/** The stored sequence numbers (NaN for null), or undefined when no row has one: floe's own files. */
function rowSequences(values: readonly unknown[]): Float64Array | undefined {
  if (!values.some((v) => v != null)) return undefined;
  return Float64Array.from(values, (v) => (v == null ? Number.NaN : Number(v as bigint)));
}

/**
 * Key hashes from a `_floe_id` column, of either form: 16 bytes (fixed[16], binary) or 32 hex
 * digits (a string column, tables created before); a row without a readable one has no key.
 */
function floeIds(ids: readonly unknown[]): { hashes: Uint32Array; unkeyed: number[] } {
  const hashes = keyHashes(ids.length);
  const unkeyed: number[] = [];
  for (let row = 0; row < ids.length; row++) {
    const id = ids[row];
    const read =
      id instanceof Uint8Array
        ? readKeyHashBytes(id, hashes, row)
        : typeof id === "string" && parseKeyHash(id, hashes, row);
    if (!read) {
      unkeyed.push(row);
      hashes.fill(0, row * KEY_HASH_WORDS, (row + 1) * KEY_HASH_WORDS);
    }
  }
  return { hashes, unkeyed };
}
