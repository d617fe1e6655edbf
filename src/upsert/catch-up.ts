// Bringing a key index from the snapshot it reflects to the table's current one, or building it from
// nothing, out of changes the caller reads from the table: which data files went, which rows of the
// files that stay a deletion vector retired, and the key hashes of the files that came (from their
// key columns, or their `_floe_id` column) with their deletion vectors. Reading Parquet, manifests and
// Puffin files is the caller's part; this is the bookkeeping. Added files come one at a time (CatchUp),
// so that a rebuild never needs every file's hashes at once.
//
// Between two live rows of one key, the one updated last is the key's row, and the other stays a
// shadowed row until a commit retires it. "Last" is the row's last-updated sequence number (v3 row
// lineage) when the files say: a copy-on-write rewrite or a compaction copies an old row into a new
// file, and the copy must not win over a row written in between; otherwise commit order, the later
// file (the later position within a file) winning.
import { KEY_HASH_WORDS } from "./key-hash.ts";
import { containsSorted, KeyIndex } from "./key-index.ts";

/** A data file to index: the key hash of each of its rows, and the rows its deletion vector retired. */
export interface DataFileKeys {
  /** The data file's location, exactly as the table metadata spells it. */
  path: string;
  /** Key hash of every row, in row order, KEY_HASH_WORDS words each. */
  keyHashes: Uint32Array;
  /** Positions in its current deletion vector, in any order; absent when it has none. */
  deletedPositions?: ArrayLike<number> | BigInt64Array | undefined;
  /** Rows without a key (their hash words are meaningless), in any order: not indexed. */
  unkeyedRows?: ArrayLike<number>;
  /** The file's data sequence number: when its rows were last updated, unless rowSequenceNumbers says. */
  sequenceNumber?: number;
  /**
   * Each row's `_last_updated_sequence_number` where the file stores one (v3 row lineage: a row that
   * a compaction or a copy-on-write copied keeps its original's), NaN where it inherits the file's.
   */
  rowSequenceNumbers?: Float64Array | undefined;
}

/** Rows that a deletion vector retired in a data file that stays in the table. */
export interface DeletedRows {
  path: string;
  /** Positions newly deleted, in any order; its whole deletion vector will do as well. */
  positions: ArrayLike<number> | BigInt64Array;
}

/** The net change of the table between the snapshot the index reflects and `snapshotId`. */
export interface TableChanges {
  snapshotId: bigint;
  /** Data files no longer in the table (compaction, overwrite, another writer's delete). */
  removedFiles: readonly string[];
  /** Deletion vectors added or grown on data files that are in the table before and after. */
  deletedRows: readonly DeletedRows[];
  /** Data files new to the table, in commit order (ascending data sequence number): on a key found in
   * two of them, the later file wins. */
  addedFiles: readonly DataFileKeys[];
}

export interface CatchUpReport {
  /** Entries dropped because their data file went or a deletion vector retired their row. */
  entriesDropped: number;
  /** Live rows of the added files now in the index. */
  rowsIndexed: number;
  /**
   * Live rows whose key already had a live row: the table holds two rows of one key, which an upsert
   * table must not (another engine inserted a row of a key floe wrote). The later row wins; the
   * earlier one joins index.shadowedRows, for the next commit to retire.
   */
  duplicateKeys: number;
  /** Live rows of the added files without a key (a null dedup value): no upsert can name them. */
  rowsWithoutKey: number;
}

/**
 * Applies a table's changes to an index one added file at a time, so that the caller can read the
 * files one by one (or a few ahead) and hold no more than those in memory: removals first, then
 * each added file in commit order, then finish.
 */
export class CatchUp {
  readonly index: KeyIndex;
  readonly report: CatchUpReport = { entriesDropped: 0, rowsIndexed: 0, duplicateKeys: 0, rowsWithoutKey: 0 };

  /** Sequence numbers of the rows of files added in this run, by ordinal. */
  readonly #sequences = new Map<number, { file: number; rows: Float64Array | undefined }>();
  readonly #sequenceOf: (path: string) => number | undefined;

  /**
   * Drops what `removedFiles` and `deletedRows` took from the table. `sequenceOf`: the data sequence
   * number of a data file the index already holds, to order a duplicate against its row.
   */
  constructor(
    index: KeyIndex,
    removedFiles: readonly string[],
    deletedRows: readonly DeletedRows[],
    sequenceOf: (path: string) => number | undefined = () => undefined,
  ) {
    this.index = index;
    this.#sequenceOf = sequenceOf;
    for (const path of removedFiles) this.report.entriesDropped += index.removeFile(path);
    const deleted = new Map<number, Float64Array>();
    for (const { path, positions } of deletedRows) {
      const ordinal = index.files.ordinalOf(path);
      if (ordinal !== undefined) deleted.set(ordinal, sortedPositions(positions));
    }
    if (deleted.size > 0) this.report.entriesDropped += index.removeRows(deleted);
    // A shadowed row that went meanwhile (its file removed, a DV on it) needs no retiring any more.
    index.shadowedRows = index.shadowedRows.filter(
      ({ file, position }) =>
        index.files.live[file] === 1 && !(deleted.has(file) && containsSorted(deleted.get(file)!, position)),
    );
  }

  /** Indexes the live rows of a data file new to the table; files come in commit order. */
  add(file: DataFileKeys): void {
    const { index, report } = this;
    // Already indexed (a commit of ours whose index update was not saved): index it anew, so that its
    // rows do not count as duplicates of themselves.
    report.entriesDropped += index.removeFile(file.path);
    // Its shadowed rows are found again below; a dead ordinal may be handed to another file.
    if (index.shadowedRows.length > 0)
      index.shadowedRows = index.shadowedRows.filter((r) => index.files.live[r.file] === 1);
    const ordinal = index.files.intern(file.path);
    const fileSequence = file.sequenceNumber ?? Number.NaN;
    const rowSequences = file.rowSequenceNumbers;
    this.#sequences.set(ordinal, { file: fileSequence, rows: rowSequences });
    const rows = file.keyHashes.length / KEY_HASH_WORDS;
    const skip = new Uint8Array(rows);
    for (let i = 0; i < (file.deletedPositions?.length ?? 0); i++) skip[Number(file.deletedPositions![i]!)] = 1;
    const unkeyed = file.unkeyedRows ?? [];
    for (let i = 0; i < unkeyed.length; i++) {
      if (skip[unkeyed[i]!] === 0) report.rowsWithoutKey++;
      skip[unkeyed[i]!] = 1;
    }
    for (const row of insertionOrder(file.keyHashes, rows)) {
      if (skip[row] === 1) continue;
      if (index.upsert(file.keyHashes, row, ordinal, row)) {
        report.duplicateKeys++;
        const other = { file: index.replacedFile, position: index.replacedPosition };
        const rowSequence =
          rowSequences !== undefined && !Number.isNaN(rowSequences[row]!) ? rowSequences[row]! : fileSequence;
        if (this.#sequenceAt(other.file, other.position) > rowSequence) {
          // The row found earlier was updated later (this one is an older row's copy): it stays the key's.
          index.upsert(file.keyHashes, row, other.file, other.position);
          index.shadowedRows.push({ file: ordinal, position: row });
        } else {
          index.shadowedRows.push(other);
        }
      }
      report.rowsIndexed++;
    }
  }

  /** The last-updated sequence number of a row in the index; NaN when unknown (compares as neither later nor earlier). */
  #sequenceAt(ordinal: number, position: number): number {
    const added = this.#sequences.get(ordinal);
    if (added === undefined) return this.#sequenceOf(this.index.files.path(ordinal)) ?? Number.NaN;
    const row = added.rows?.[position];
    return row !== undefined && !Number.isNaN(row) ? row : added.file;
  }

  /** The index now reflects `snapshotId`. */
  finish(snapshotId: bigint): CatchUpReport {
    this.index.snapshotId = snapshotId;
    return this.report;
  }
}

/** Applies `changes` to `index`, which afterwards reflects changes.snapshotId. */
export function catchUp(index: KeyIndex, changes: TableChanges): CatchUpReport {
  const run = new CatchUp(index, changes.removedFiles, changes.deletedRows);
  for (const file of changes.addedFiles) run.add(file);
  return run.finish(changes.snapshotId);
}

/** A new index of the live data files of the table at `snapshotId`, given in commit order. */
export function rebuildKeyIndex(
  scope: string,
  snapshotId: bigint,
  liveFiles: readonly DataFileKeys[],
): { index: KeyIndex; report: CatchUpReport } {
  let rows = 0;
  for (const file of liveFiles) rows += file.keyHashes.length / KEY_HASH_WORDS;
  const index = new KeyIndex(scope, null, rows);
  const report = catchUp(index, { snapshotId, removedFiles: [], deletedRows: [], addedFiles: liveFiles });
  return { index, report };
}

/**
 * The rows of a file in the order of their keys' home slots in the index (a stable counting sort
 * on the top 16 bits of the first hash word, the bits a home slot starts with): the inserts then
 * walk the index's memory forwards instead of jumping about it, about twice as fast at 10M keys.
 * Stable, so of two rows of one key the later position is still inserted last.
 */
function insertionOrder(hashes: Uint32Array, rows: number): Uint32Array {
  const starts = new Uint32Array(65537);
  for (let row = 0; row < rows; row++) starts[(hashes[row * KEY_HASH_WORDS]! >>> 16) + 1]!++;
  for (let b = 1; b < starts.length; b++) starts[b]! += starts[b - 1]!;
  const order = new Uint32Array(rows);
  for (let row = 0; row < rows; row++) order[starts[hashes[row * KEY_HASH_WORDS]! >>> 16]!++] = row;
  return order;
}

function sortedPositions(positions: ArrayLike<number> | BigInt64Array): Float64Array {
  const sorted = new Float64Array(positions.length);
  for (let i = 0; i < positions.length; i++) sorted[i] = Number(positions[i]!);
  return sorted.sort();
}
