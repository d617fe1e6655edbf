// The journal of a saved key index: the changes of each save since the index file was last
// written whole, appended, so that a commit writes what it changed instead of O(keys) bytes.
//
//   header (20 bytes)
//     0   4  magic "FKIJ"
//     4   4  format version
//     8   4  CRC-32 of the index file this journal continues (its last four bytes)
//     12  4  byte length of that index file
//     16  4  CRC-32 (zlib) of the 16 bytes before it
//   then frames, each
//     0   4  frame byte length, this word and the CRC included
//     4   4  flags: bit 0 set when the frame starts from a snapshot, bit 1 when it ends at one
//     8   8  snapshot id the index reflected before the frame (int64)
//     16  8  snapshot id it reflects after (int64)
//     24  4  path count
//     28  4  operation word count
//     32     per path a u32 byte length and the path (UTF-8), zero padding to a multiple of 4, the
//            operation words (key-index-changes.ts)
//     end-4  CRC-32 of every byte of the frame before it
//
// Numbers are in the machine's byte order, as in the index file. A journal belongs to one index
// file: one that names another (the index was written whole since) is empty. Frames apply in
// order, each from the snapshot the one before ended at; replay stops at the first frame that is
// torn, corrupt or out of chain, and the index is then that of the last good frame: older, never
// wrong. The caller catches it up from the table, as after any save a crash prevented.
import { open, readFile, rm } from "node:fs/promises";
import { crc32 } from "node:zlib";
import type { KeyIndex } from "./key-index.ts";
import { applyChanges, KeyIndexChanges } from "./key-index-changes.ts";
import { decodeKeyIndex, type IndexFileIdentity, indexFileIdentity, saveKeyIndex } from "./key-index-file.ts";

const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
const MAGIC = new DataView(new TextEncoder().encode("FKIJ").buffer).getUint32(0, LITTLE_ENDIAN);
/** Version 2 frames hold three hash words and a one-word position (key-index-changes.ts). */
const VERSION = 2;
const HEADER_BYTES = 20;
const FRAME_HEADER_BYTES = 32;
const FROM_SNAPSHOT = 1;
const TO_SNAPSHOT = 2;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A saved index as loaded or last saved: what the next save appends to. */
export interface SavedKeyIndex {
  index: KeyIndex;
  file: IndexFileIdentity;
  /** Bytes of the journal that hold good frames of `file` (0 for none); anything after is cut off by the next append. */
  journalBytes: number;
  /** The snapshot the saved form reflects: where the next frame starts. */
  snapshotId: bigint | null;
}

export function journalPath(indexPath: string): string {
  return `${indexPath}.journal`;
}

/**
 * The index saved at `path` with its journal replayed, if the index file is intact and of `scope`.
 * The returned index records its changes from here on (`index.changes`).
 */
export async function loadJournaledKeyIndex(path: string, scope: string): Promise<SavedKeyIndex | undefined> {
  const bytes = await readIfPresent(path);
  const index = bytes && decodeKeyIndex(bytes, scope);
  if (!index) return undefined;
  const file = indexFileIdentity(bytes);
  const journal = await readIfPresent(journalPath(path));
  const journalBytes = journal ? replayJournal(index, file, journal) : 0;
  if (journalBytes < 0) return undefined;
  index.changes = new KeyIndexChanges();
  return { index, file, journalBytes, snapshotId: index.snapshotId };
}

/**
 * Writes the index whole, then empties its journal; returns the new saved form. A crash between
 * the two leaves a journal that names the old index file: it reads as empty.
 */
export async function saveWholeKeyIndex(index: KeyIndex, path: string): Promise<SavedKeyIndex> {
  const file = await saveKeyIndex(index, path);
  await rm(journalPath(path), { force: true });
  index.changes = new KeyIndexChanges();
  return { index, file, journalBytes: 0, snapshotId: index.snapshotId };
}

/**
 * Appends the changes `saved.index` recorded since `saved` as one frame, cutting off whatever
 * follows the good frames (a frame a crash tore), and flushes it; returns the new saved form.
 */
export async function appendKeyIndexChanges(saved: SavedKeyIndex, path: string): Promise<SavedKeyIndex> {
  const { index } = saved;
  const changes = index.changes;
  if (!changes) throw new Error("the index records no changes to append");
  const frame = encodeFrame(saved.snapshotId, index.snapshotId, changes);
  const at = saved.journalBytes === 0 ? HEADER_BYTES : saved.journalBytes;
  // Writes at a position: a handle opened for appending would ignore it.
  const handle = await open(journalPath(path), "r+").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return open(journalPath(path), "w+");
    throw error;
  });
  try {
    if (saved.journalBytes === 0) await handle.write(encodeHeader(saved.file), 0, HEADER_BYTES, 0);
    await handle.write(frame, 0, frame.length, at);
    await handle.truncate(at + frame.length);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  index.changes = new KeyIndexChanges();
  return { index, file: saved.file, journalBytes: at + frame.length, snapshotId: index.snapshotId };
}

/** Bytes a frame of `changes` takes, near enough to decide between appending and writing whole. */
export function frameBytes(changes: KeyIndexChanges): number {
  return FRAME_HEADER_BYTES + changes.byteLength + 8;
}

function encodeHeader(file: IndexFileIdentity): Uint8Array {
  const bytes = new Uint8Array(HEADER_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, LITTLE_ENDIAN);
  view.setUint32(4, VERSION, LITTLE_ENDIAN);
  view.setUint32(8, file.crc, LITTLE_ENDIAN);
  view.setUint32(12, file.byteLength, LITTLE_ENDIAN);
  view.setUint32(16, crc32(bytes.subarray(0, 16)), LITTLE_ENDIAN);
  return bytes;
}

function encodeFrame(from: bigint | null, to: bigint | null, changes: KeyIndexChanges): Uint8Array {
  const paths = changes.paths.map((p) => utf8.encode(p));
  const pathBytes = paths.reduce((sum, p) => sum + 4 + p.length, 0);
  const wordsAt = align4(FRAME_HEADER_BYTES + pathBytes);
  const words = changes.words;
  const bytes = new Uint8Array(wordsAt + words.length * 4 + 4);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, bytes.length, LITTLE_ENDIAN);
  view.setUint32(4, (from === null ? 0 : FROM_SNAPSHOT) | (to === null ? 0 : TO_SNAPSHOT), LITTLE_ENDIAN);
  view.setBigInt64(8, from ?? 0n, LITTLE_ENDIAN);
  view.setBigInt64(16, to ?? 0n, LITTLE_ENDIAN);
  view.setUint32(24, paths.length, LITTLE_ENDIAN);
  view.setUint32(28, words.length, LITTLE_ENDIAN);
  let at = FRAME_HEADER_BYTES;
  for (const path of paths) {
    view.setUint32(at, path.length, LITTLE_ENDIAN);
    bytes.set(path, at + 4);
    at += 4 + path.length;
  }
  new Uint32Array(bytes.buffer, wordsAt, words.length).set(words);
  const end = bytes.length - 4;
  view.setUint32(end, crc32(bytes.subarray(0, end)), LITTLE_ENDIAN);
  return bytes;
}

/**
 * Applies the good frames of `journal` to `index`, the index file `file` decoded. Returns the
 * bytes they take (0 when the journal continues another index file), or -1 when a frame passed
 * its CRC but did not apply: the index is then half changed and must be dropped.
 */
function replayJournal(index: KeyIndex, file: IndexFileIdentity, journal: Uint8Array): number {
  const view = new DataView(journal.buffer, journal.byteOffset, journal.byteLength);
  if (journal.length < HEADER_BYTES) return 0;
  if (view.getUint32(16, LITTLE_ENDIAN) !== crc32(journal.subarray(0, 16))) return 0;
  if (view.getUint32(0, LITTLE_ENDIAN) !== MAGIC || view.getUint32(4, LITTLE_ENDIAN) !== VERSION) return 0;
  if (view.getUint32(8, LITTLE_ENDIAN) !== file.crc || view.getUint32(12, LITTLE_ENDIAN) !== file.byteLength) return 0;
  let good = HEADER_BYTES;
  while (good + FRAME_HEADER_BYTES + 4 <= journal.length) {
    const length = view.getUint32(good, LITTLE_ENDIAN);
    if (length < FRAME_HEADER_BYTES + 4 || length % 4 !== 0 || good + length > journal.length) break;
    const end = good + length - 4;
    if (view.getUint32(end, LITTLE_ENDIAN) !== crc32(journal.subarray(good, end))) break;
    const flags = view.getUint32(good + 4, LITTLE_ENDIAN);
    const from = flags & FROM_SNAPSHOT ? view.getBigInt64(good + 8, LITTLE_ENDIAN) : null;
    if (from !== index.snapshotId) break;
    try {
      const paths: string[] = [];
      let at = good + FRAME_HEADER_BYTES;
      for (let n = view.getUint32(good + 24, LITTLE_ENDIAN); n > 0; n--) {
        const pathLength = view.getUint32(at, LITTLE_ENDIAN);
        if (at + 4 + pathLength > end) throw new RangeError("path overruns the frame");
        paths.push(fromUtf8.decode(journal.subarray(at + 4, at + 4 + pathLength)));
        at += 4 + pathLength;
      }
      const wordsAt = align4(at);
      const wordCount = view.getUint32(good + 28, LITTLE_ENDIAN);
      if (wordsAt + wordCount * 4 !== end) throw new RangeError("operation words do not fill the frame");
      const start = journal.byteOffset + wordsAt;
      const words =
        start % 4 === 0
          ? new Uint32Array(journal.buffer, start, wordCount)
          : new Uint32Array(journal.slice(wordsAt, end).buffer);
      applyChanges(index, paths, words);
    } catch (error) {
      // A frame that passed its CRC but was not written by appendKeyIndexChanges.
      if (error instanceof RangeError || error instanceof TypeError) return -1;
      throw error;
    }
    index.snapshotId = flags & TO_SNAPSHOT ? view.getBigInt64(good + 16, LITTLE_ENDIAN) : null;
    good += length;
  }
  return good;
}

async function readIfPresent(path: string): Promise<Uint8Array | undefined> {
  try {
    return await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function align4(n: number): number {
  return Math.ceil(n / 4) * 4;
}
