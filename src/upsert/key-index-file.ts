// A key index saved to local disk, so that a restart does not rescan the table's key columns.
//
//   offset  size
//   0       4     magic "FKIX"
//   4       4     format version
//   8       4     flags: bit 0 set when a snapshot id follows
//   12      4     scope byte length
//   16      8     snapshot id (int64)
//   24      4     data file count
//   28      4     entry count
//   32            scope (UTF-8), then per data file a u32 byte length and its path (UTF-8),
//                 zero padding to a multiple of 4, then the entries (ENTRY_WORDS u32 each: key hash
//                 words 0..2, file ordinal 1..count into the data files, row position)
//   end - 4 4     CRC-32 (zlib) of every byte before it
//
// Numbers are in the byte order of the machine that wrote the file, so the entries load with one
// copy; the file is a local cache, and one from a machine of the other byte order fails the magic
// check like any foreign file. Whatever is wrong with a file — missing, truncated, corrupt (CRC),
// foreign, another version or another scope — it loads as absent and the caller rebuilds: never as
// wrong data. Version 1 held seven words an entry (four hash words, a two-word position); such a
// file loads as absent like any other version, and the next sync rebuilds it from the table.
// It is written to a temporary name and renamed, so a crash leaves the old file or the new.
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { crc32 } from "node:zlib";
import { ENTRY_WORDS, KeyIndex } from "./key-index.ts";

const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
/** "FKIX" as the bytes of a native u32. */
const MAGIC = new DataView(new TextEncoder().encode("FKIX").buffer).getUint32(0, LITTLE_ENDIAN);
const VERSION = 2;
const HAS_SNAPSHOT = 1;
const HEADER_BYTES = 32;
const CRC_BYTES = 4;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A saved index file, known by its CRC and length: what a journal of it names (key-index-journal.ts). */
export interface IndexFileIdentity {
  crc: number;
  byteLength: number;
}

export function indexFileIdentity(bytes: Uint8Array): IndexFileIdentity {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { crc: view.getUint32(bytes.length - CRC_BYTES, LITTLE_ENDIAN), byteLength: bytes.length };
}

export async function saveKeyIndex(index: KeyIndex, path: string): Promise<IndexFileIdentity> {
  const scope = utf8.encode(index.scope);
  const files = index.files.paths().map((p) => utf8.encode(p));
  const filesBytes = files.reduce((sum, f) => sum + 4 + f.length, 0);
  const entriesAt = align4(HEADER_BYTES + scope.length + filesBytes);
  const entryWords = index.size * ENTRY_WORDS;
  const bytes = new Uint8Array(entriesAt + entryWords * 4 + CRC_BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, MAGIC, LITTLE_ENDIAN);
  view.setUint32(4, VERSION, LITTLE_ENDIAN);
  view.setUint32(8, index.snapshotId === null ? 0 : HAS_SNAPSHOT, LITTLE_ENDIAN);
  view.setUint32(12, scope.length, LITTLE_ENDIAN);
  view.setBigInt64(16, index.snapshotId ?? 0n, LITTLE_ENDIAN);
  view.setUint32(24, files.length, LITTLE_ENDIAN);
  view.setUint32(28, index.size, LITTLE_ENDIAN);
  bytes.set(scope, HEADER_BYTES);
  let at = HEADER_BYTES + scope.length;
  for (const file of files) {
    view.setUint32(at, file.length, LITTLE_ENDIAN);
    bytes.set(file, at + 4);
    at += 4 + file.length;
  }
  index.exportEntries(new Uint32Array(bytes.buffer, entriesAt, entryWords));
  const end = bytes.length - CRC_BYTES;
  view.setUint32(end, crc32(bytes.subarray(0, end)), LITTLE_ENDIAN);

  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, bytes, { flush: true });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  return indexFileIdentity(bytes);
}

/** The index saved at `path` if it is intact and indexes `scope`, else undefined. */
export async function loadKeyIndex(path: string, scope: string): Promise<KeyIndex | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return decodeKeyIndex(bytes, scope);
}

/** Parses a saved index; undefined for anything that is not an intact index of `scope`. */
export function decodeKeyIndex(bytes: Uint8Array, scope: string): KeyIndex | undefined {
  if (bytes.length < HEADER_BYTES + CRC_BYTES) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = bytes.length - CRC_BYTES;
  if (view.getUint32(0, LITTLE_ENDIAN) !== MAGIC || view.getUint32(4, LITTLE_ENDIAN) !== VERSION) return undefined;
  if (view.getUint32(end, LITTLE_ENDIAN) !== crc32(bytes.subarray(0, end))) return undefined;
  try {
    const scopeLength = view.getUint32(12, LITTLE_ENDIAN);
    if (fromUtf8.decode(bytes.subarray(HEADER_BYTES, HEADER_BYTES + scopeLength)) !== scope) return undefined;
    const snapshotId = view.getUint32(8, LITTLE_ENDIAN) & HAS_SNAPSHOT ? view.getBigInt64(16, LITTLE_ENDIAN) : null;
    const paths: string[] = [];
    let at = HEADER_BYTES + scopeLength;
    for (let n = view.getUint32(24, LITTLE_ENDIAN); n > 0; n--) {
      const length = view.getUint32(at, LITTLE_ENDIAN);
      paths.push(fromUtf8.decode(bytes.subarray(at + 4, at + 4 + length)));
      at += 4 + length;
    }
    const entriesAt = align4(at);
    const entriesBytes = view.getUint32(28, LITTLE_ENDIAN) * ENTRY_WORDS * 4;
    if (entriesAt + entriesBytes !== end) return undefined;
    // A Uint32Array needs 4-byte alignment in its buffer; a Buffer from the pool may lack it.
    const start = bytes.byteOffset + entriesAt;
    const entries =
      start % 4 === 0
        ? new Uint32Array(bytes.buffer, start, entriesBytes / 4)
        : new Uint32Array(bytes.slice(entriesAt, end).buffer);
    return KeyIndex.fromEntries(scope, snapshotId, paths, entries);
  } catch (error) {
    // Lengths that overrun the file, invalid UTF-8, an entry naming no data file or repeating a key:
    // a file that passed its CRC but was not written by saveKeyIndex.
    if (error instanceof RangeError || error instanceof TypeError) return undefined;
    throw error;
  }
}

function align4(n: number): number {
  return Math.ceil(n / 4) * 4;
}
