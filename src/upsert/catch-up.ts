// Bringing a key index from the snapshot it reflects to the table's current one, or building it from
// nothing, out of changes the caller reads from the table: which data files went, which rows of the
// files that stay a deletion vector retired, and the key hashes of the files that came (from their
// `_floe_id` column or their key columns) with their deletion vectors. Reading Parquet, manifests and
// Puffin files is the caller's part; this is the bookkeeping.
import { KEY_HASH_WORDS } from "./key-hash.ts";
import { KeyIndex } from "./key-index.ts";

/** A data file to index: the key hash of each of its rows, and the rows its deletion vector retired. */
export interface DataFileKeys {
  /** The data file's location, exactly as the table metadata spells it. */
  path: string;
  /** Key hash of every row, in row order, KEY_HASH_WORDS words each. */
  keyHashes: Uint32Array;
  /** Positions in its current deletion vector, in any order; absent when it has none. */
  deletedPositions?: ArrayLike<number> | BigInt64Array;
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
   * table must not. The later row wins; a non-zero count is worth reporting.
   */
  duplicateKeys: number;
}

/** Applies `changes` to `index`, which afterwards reflects changes.snapshotId. */
export function catchUp(index: KeyIndex, changes: TableChanges): CatchUpReport {
  let entriesDropped = 0;
  for (const path of changes.removedFiles) entriesDropped += index.removeFile(path);
  const deleted = new Map<number, Float64Array>();
  for (const { path, positions } of changes.deletedRows) {
    const ordinal = index.files.ordinalOf(path);
    if (ordinal !== undefined) deleted.set(ordinal, sortedPositions(positions));
  }
  if (deleted.size > 0) entriesDropped += index.removeRows(deleted);

  let rowsIndexed = 0;
  let duplicateKeys = 0;
  for (const file of changes.addedFiles) {
    // Already indexed (a commit of ours whose index update was not saved): index it anew, so that its
    // rows do not count as duplicates of themselves.
    entriesDropped += index.removeFile(file.path);
    const ordinal = index.files.intern(file.path);
    const deletedPositions = sortedPositions(file.deletedPositions ?? []);
    const rows = file.keyHashes.length / KEY_HASH_WORDS;
    let nextDeleted = 0;
    for (let row = 0; row < rows; row++) {
      while (nextDeleted < deletedPositions.length && deletedPositions[nextDeleted]! < row) nextDeleted++;
      if (deletedPositions[nextDeleted] === row) continue;
      if (index.upsert(file.keyHashes, row, ordinal, row)) duplicateKeys++;
      rowsIndexed++;
    }
  }
  index.snapshotId = changes.snapshotId;
  return { entriesDropped, rowsIndexed, duplicateKeys };
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

function sortedPositions(positions: ArrayLike<number> | BigInt64Array): Float64Array {
  const sorted = new Float64Array(positions.length);
  for (let i = 0; i < positions.length; i++) sorted[i] = Number(positions[i]!);
  return sorted.sort();
}
