// From a batch's winners to deletion vectors, and from the commit back to the key index.
//
// planDeletes finds, through the index, the live row of every key that a winner updates or deletes,
// and groups those positions by data file: the input of one deletion vector per file (the caller
// merges each with the file's current DV). It leaves the index alone, so a commit that fails or
// must be retried after catching up has nothing to undo. Once the snapshot is committed,
// recordCommit points the index at the new rows and forgets the deleted keys.
import { type BatchWinners, OP_CREATE, OP_DELETE } from "./batch-dedup.ts";
import type { KeyIndex } from "./key-index.ts";

export interface DataFileDeletes {
  /** The data file's location, exactly as the table metadata spells it. */
  path: string;
  /** Row positions to delete, ascending, distinct. */
  positions: Float64Array;
}

export interface DeletePlan {
  /** Data files that lose rows, in ordinal order. */
  files: DataFileDeletes[];
  /** Positions in all files. */
  positionsDeleted: number;
  /** Of those, the index's shadowed rows: the earlier of two live rows of one key. */
  duplicatesRetired: number;
}

/**
 * The rows that `winners` of the batch with key hashes `hashes` retire, per data file, and the
 * index's shadowed rows: a commit is the only way to leave one row per key in the table.
 */
export function planDeletes(index: KeyIndex, hashes: Uint32Array, winners: BatchWinners): DeletePlan {
  const { messages, ops } = winners;
  const shadowed = index.shadowedRows.filter((r) => index.files.live[r.file] === 1);
  // One pass finds the rows, a counting sort on the file ordinal groups them.
  const fileOf = new Uint32Array(messages.length + shadowed.length);
  const positionOf = new Float64Array(messages.length + shadowed.length);
  const perFile = new Uint32Array(index.files.ordinalLimit + 1);
  let found = 0;
  for (let w = 0; w < messages.length; w++) {
    if (ops[w] === OP_CREATE) continue;
    const slot = index.find(hashes, messages[w]!);
    if (slot < 0) continue; // a tombstone of a key the table lacks
    const file = index.fileAt(slot);
    fileOf[found] = file;
    positionOf[found] = index.positionAt(slot);
    perFile[file + 1]!++;
    found++;
  }
  // Never the live row of a key: upsert moved each of these out of the index.
  for (const { file, position } of shadowed) {
    fileOf[found] = file;
    positionOf[found] = position;
    perFile[file + 1]!++;
    found++;
  }
  // perFile[f] becomes where file f's positions start; perFile[f + 1] where they end, once filled.
  for (let f = 1; f < perFile.length; f++) perFile[f]! += perFile[f - 1]!;
  const positions = new Float64Array(found);
  for (let i = 0; i < found; i++) positions[perFile[fileOf[i]!]!++] = positionOf[i]!;

  const files: DataFileDeletes[] = [];
  for (let file = 1, start = 0; file < perFile.length - 1; file++) {
    const end = perFile[file]!;
    if (end > start) files.push({ path: index.files.path(file), positions: positions.subarray(start, end).sort() });
    start = end;
  }
  return { files, positionsDeleted: found, duplicatesRetired: shadowed.length };
}

/** The rows of one new data file: row r holds batch message messages[r]. */
export interface WrittenRows {
  path: string;
  messages: Uint32Array;
}

/**
 * Brings the index to the snapshot that committed `winners` (and the DVs of planDeletes): each
 * written row becomes its key's live row, each deleted key leaves the index, no row is shadowed.
 */
export function recordCommit(
  index: KeyIndex,
  hashes: Uint32Array,
  winners: BatchWinners,
  written: readonly WrittenRows[],
  snapshotId: bigint,
): void {
  for (let w = 0; w < winners.messages.length; w++) {
    if (winners.ops[w] === OP_DELETE) index.remove(hashes, winners.messages[w]!);
  }
  for (const file of written) {
    const ordinal = index.files.intern(file.path);
    for (let row = 0; row < file.messages.length; row++) index.upsert(hashes, file.messages[row]!, ordinal, row);
  }
  index.shadowedRows = [];
  index.snapshotId = snapshotId;
}
