// The key index: key hash -> (data file, row position) of the live row of every key in an upsert
// table, so that an upsert finds the row its deletion vector must retire. It is a cache of the table,
// never the truth: it records the snapshot it reflects, and catch-up.ts brings it forward.
//
// Layout: one open-addressing table with linear probing in a single Uint32Array, ENTRY_WORDS words
// per slot (the first INDEX_HASH_WORDS words of the key hash, the data file ordinal, the row
// position), so that a probe touches one cache line, not one per array, and no key costs a JS object.
// Why 96 of the key hash's 128 bits: they decide which row an upsert retires, so a collision would
// retire another key's row. Two keys of n share 96 bits with a chance of about n^2 / 2^97 (10^10 keys:
// below 10^-9); to hit a given key's row a producer needs a second preimage, 2^96 work; a pair found
// by the birthday bound (2^48 work) has two keys of the producer's own choosing, whose rows it could
// delete with a tombstone anyway. The fourth word would cost a fifth more memory and disk per key.
// A row position takes one word: a data file of 2^32 rows or more is refused (its key column alone
// would take 64 GiB to read). A key's home slot is the
// top bits of its first hash word: slot order is then hash order whatever the capacity, so a rehash
// or a load from a saved index inserts in nearly ascending slot order, walking memory forwards.
// Deletion shifts the rest of the cluster back (no tombstones, probes stay short). A removed data
// file is dropped in O(1) through DataFileTable: its entries read as absent and their slots are
// reused by the same key or reclaimed at the next rehash.
import { DataFileTable, NO_FILE } from "./data-file-table.ts";
import { KEY_HASH_WORDS } from "./key-hash.ts";
import type { KeyIndexChanges } from "./key-index-changes.ts";

/** Key hash words an entry keeps: words 0..2 of the key hash. */
export const INDEX_HASH_WORDS = 3;
/** Words per entry, in a slot and in a saved index: 3 hash words, file ordinal, row position. */
export const ENTRY_WORDS = 5;
const FILE = 3;
const POSITION = 4;
/** The largest row position an entry holds. */
export const MAX_POSITION = 2 ** 32 - 1;

/** Rehash when live plus reclaimable entries would pass this share of the slots. */
const MAX_LOAD = 0.75;
const MIN_CAPACITY = 16;
/** Home slots come from one 32-bit hash word. */
const MAX_CAPACITY = 2 ** 32;

/** Where the live row of a key is. */
export interface RowLocation {
  file: string;
  position: number;
}

export class KeyIndex {
  /** What the index indexes (the caller's words: table uuid and dedup keys): a saved index of
   * anything else loads as absent. */
  readonly scope: string;
  /** The table snapshot the index reflects; null before the table's first snapshot. */
  snapshotId: bigint | null;
  readonly files = new DataFileTable();
  #slots: Uint32Array;
  #mask: number;
  #shift: number;
  #size = 0;
  /** Entries of removed data files still occupying slots. */
  #reclaimable = 0;
  /** Where the live row that the last upsert displaced was (valid when it returned true). */
  #replacedFile = NO_FILE;
  #replacedPosition = 0;
  /**
   * Live rows of the table that are not their key's live row: the earlier of two rows of one key
   * that catching up found (another engine inserted a row of a key the table held). Nothing but
   * a deletion vector makes the table hold one row per key again, so the next commit retires
   * them (plan-deletes.ts). Kept in memory only: the index is saved after that commit.
   */
  shadowedRows: { file: number; position: number }[] = [];
  /** When set, receives every change to which row is a key's live row, for the journal of a saved index. */
  changes: KeyIndexChanges | undefined;

  constructor(scope: string, snapshotId: bigint | null = null, expectedKeys = 0) {
    this.scope = scope;
    this.snapshotId = snapshotId;
    const capacity = capacityFor(expectedKeys, MAX_LOAD);
    this.#slots = new Uint32Array(capacity * ENTRY_WORDS);
    this.#mask = capacity - 1;
    this.#shift = 32 - Math.log2(capacity);
  }

  /** Number of keys with a live row. */
  get size(): number {
    return this.#size;
  }

  /** Bytes held by the slots: the index's memory but for the file table. */
  get byteLength(): number {
    return this.#slots.byteLength;
  }

  /**
   * The slot of key hash number `index` of `hashes` if its row is live, else -1; read it with
   * fileAt and positionAt. Allocation-free. A slot number is good until the next change to the index.
   */
  find(hashes: Uint32Array, index: number): number {
    const slot = this.#probe(hashes, index * KEY_HASH_WORDS);
    return slot >= 0 && this.files.live[this.#slots[slot * ENTRY_WORDS + FILE]!] === 1 ? slot : -1;
  }

  /** Data file ordinal of a slot that find returned. */
  fileAt(slot: number): number {
    return this.#slots[slot * ENTRY_WORDS + FILE]!;
  }

  /** Row position of a slot that find returned. */
  positionAt(slot: number): number {
    return this.#slots[slot * ENTRY_WORDS + POSITION]!;
  }

  /** Where the live row of key hash number `index` is, if it has one. */
  lookup(hashes: Uint32Array, index: number): RowLocation | undefined {
    const slot = this.find(hashes, index);
    if (slot < 0) return undefined;
    return { file: this.files.path(this.fileAt(slot)), position: this.positionAt(slot) };
  }

  /**
   * Records that the live row of key hash number `index` is at `position` of data file `file` (an
   * ordinal from files.intern). Returns whether the key had a live row before.
   */
  upsert(hashes: Uint32Array, index: number, file: number, position: number): boolean {
    if (!(position >= 0 && position <= MAX_POSITION && Number.isInteger(position))) {
      throw new RangeError(`row position ${position} is not an integer from 0 to ${MAX_POSITION}`);
    }
    if (this.files.live[file] !== 1) throw new RangeError(`no data file has ordinal ${file}`);
    const at = index * KEY_HASH_WORDS;
    let slot = this.#probe(hashes, at);
    let hadLiveRow = false;
    if (slot >= 0) {
      const previous = this.#slots[slot * ENTRY_WORDS + FILE]!;
      hadLiveRow = this.files.live[previous] === 1;
      if (hadLiveRow) {
        this.#replacedFile = previous;
        this.#replacedPosition = this.positionAt(slot);
      }
      if (!hadLiveRow) this.#reclaimable--;
      this.files.dropEntry(previous);
    } else {
      if (this.#size + this.#reclaimable + 1 > (this.#mask + 1) * MAX_LOAD) {
        this.#rehash();
        slot = this.#probe(hashes, at);
      }
      slot = ~slot;
      copyWords(hashes, at, this.#slots, slot * ENTRY_WORDS, INDEX_HASH_WORDS);
    }
    if (!hadLiveRow) this.#size++;
    this.files.addEntry(file);
    this.changes?.upsert(hashes, at, this.files.path(file), position);
    const w = slot * ENTRY_WORDS;
    this.#slots[w + FILE] = file;
    this.#slots[w + POSITION] = position;
    return hadLiveRow;
  }

  /** The data file ordinal of the live row that the last upsert returning true displaced. */
  get replacedFile(): number {
    return this.#replacedFile;
  }

  /** The row position of the live row that the last upsert returning true displaced. */
  get replacedPosition(): number {
    return this.#replacedPosition;
  }

  /** Forgets key hash number `index`; returns whether it had a live row. */
  remove(hashes: Uint32Array, index: number): boolean {
    const slot = this.#probe(hashes, index * KEY_HASH_WORDS);
    if (slot < 0) return false;
    this.changes?.remove(hashes, index * KEY_HASH_WORDS);
    const file = this.#slots[slot * ENTRY_WORDS + FILE]!;
    const wasLive = this.files.live[file] === 1;
    if (wasLive) this.#size--;
    else this.#reclaimable--;
    this.files.dropEntry(file);
    this.#vacate(slot);
    return wasLive;
  }

  /** Drops every entry of a data file (compaction or another writer removed it) in O(1); returns how many. */
  removeFile(path: string): number {
    const ordinal = this.files.remove(path);
    if (ordinal === undefined) return 0;
    this.changes?.removeFile(path);
    const entries = this.files.entries(ordinal);
    this.#size -= entries;
    this.#reclaimable += entries;
    return entries;
  }

  /**
   * Drops the entries whose (file ordinal, position) is in `deleted` (ascending positions per ordinal):
   * rows that a deletion vector retired in a data file that stays. One pass over the slots, for
   * catching up with another writer; returns how many entries went.
   */
  removeRows(deleted: ReadonlyMap<number, Float64Array>): number {
    const affected = new Uint8Array(this.files.ordinalLimit);
    for (const ordinal of deleted.keys()) affected[ordinal] = 1;
    const slots = this.#slots;
    // Collect first, remove after: removing shifts entries within the slots being walked.
    let doomed = new Uint32Array(64 * KEY_HASH_WORDS);
    let count = 0;
    for (let w = 0; w < slots.length; w += ENTRY_WORDS) {
      const file = slots[w + FILE]!;
      if (affected[file] !== 1 || this.files.live[file] !== 1) continue;
      if (!containsSorted(deleted.get(file)!, slots[w + POSITION]!)) continue;
      if ((count + 1) * KEY_HASH_WORDS > doomed.length) {
        const larger = new Uint32Array(doomed.length * 2);
        larger.set(doomed);
        doomed = larger;
      }
      copyWords(slots, w, doomed, count * KEY_HASH_WORDS, INDEX_HASH_WORDS);
      count++;
    }
    for (let i = 0; i < count; i++) this.remove(doomed, i);
    return count;
  }

  /**
   * Writes the live entries into `out` (size * ENTRY_WORDS words), ENTRY_WORDS words each in slot
   * order, with file ordinals renumbered 1..n in the order of files.paths(): removed files leave no gap.
   */
  exportEntries(out: Uint32Array): void {
    const renumbered = new Uint32Array(this.files.ordinalLimit);
    for (let ordinal = 1, next = 1; ordinal < renumbered.length; ordinal++) {
      if (this.files.live[ordinal] === 1) renumbered[ordinal] = next++;
    }
    const slots = this.#slots;
    let to = 0;
    for (let w = 0; w < slots.length; w += ENTRY_WORDS) {
      const file = slots[w + FILE]!;
      if (file === NO_FILE || this.files.live[file] !== 1) continue;
      copyWords(slots, w, out, to, ENTRY_WORDS);
      out[to + FILE] = renumbered[file]!;
      to += ENTRY_WORDS;
    }
  }

  /**
   * An index of `entries` (as exportEntries writes them, all keys distinct) over data files `paths`
   * (ordinal i + 1 is paths[i]). Throws a RangeError on an ordinal outside the paths.
   */
  static fromEntries(
    scope: string,
    snapshotId: bigint | null,
    paths: readonly string[],
    entries: Uint32Array,
  ): KeyIndex {
    const count = entries.length / ENTRY_WORDS;
    const index = new KeyIndex(scope, snapshotId, count);
    for (const path of paths) index.files.intern(path);
    const slots = index.#slots;
    for (let from = 0; from < entries.length; from += ENTRY_WORDS) {
      const file = entries[from + FILE]!;
      if (file === NO_FILE || file > paths.length) throw new RangeError(`entry ${from / ENTRY_WORDS} has file ${file}`);
      const slot = ~index.#probe(entries, from);
      if (slot < 0) throw new RangeError(`entry ${from / ENTRY_WORDS} repeats a key`);
      copyWords(entries, from, slots, slot * ENTRY_WORDS, ENTRY_WORDS);
      index.files.addEntry(file);
    }
    index.#size = count;
    return index;
  }

  /**
   * The slot holding the hash whose first INDEX_HASH_WORDS words are at `at` of `hashes` (a key
   * hash or an entry), live or not; if absent, ~slot of the empty slot where it would go.
   */
  #probe(hashes: Uint32Array, at: number): number {
    const h0 = hashes[at]!;
    const h1 = hashes[at + 1]!;
    const h2 = hashes[at + 2]!;
    const slots = this.#slots;
    const mask = this.#mask;
    for (let slot = h0 >>> this.#shift; ; slot = (slot + 1) & mask) {
      const w = slot * ENTRY_WORDS;
      if (slots[w + FILE] === NO_FILE) return ~slot;
      if (slots[w] === h0 && slots[w + 1] === h1 && slots[w + 2] === h2) return slot;
    }
  }

  /** Empties `slot` and shifts back the entries after it that would otherwise be cut off from home. */
  #vacate(slot: number): void {
    const slots = this.#slots;
    const mask = this.#mask;
    let hole = slot;
    for (let next = (slot + 1) & mask; slots[next * ENTRY_WORDS + FILE] !== NO_FILE; next = (next + 1) & mask) {
      const from = next * ENTRY_WORDS;
      const home = slots[from]! >>> this.#shift;
      // The entry may move into the hole unless its home lies after the hole (cyclically).
      if (((next - home) & mask) >= ((next - hole) & mask)) {
        slots.copyWithin(hole * ENTRY_WORDS, from, from + ENTRY_WORDS);
        hole = next;
      }
    }
    slots[hole * ENTRY_WORDS + FILE] = NO_FILE;
  }

  /** Moves the live entries into fresh slots, twice as many unless reclaiming removed files' entries
   * leaves room enough; entries of removed files are dropped. */
  #rehash(): void {
    const old = this.#slots;
    // Half full at most afterwards, so that a rehash buys room for as many inserts as it moved entries.
    const capacity = Math.max(this.#mask + 1, capacityFor(this.#size, MAX_LOAD / 2));
    this.#slots = new Uint32Array(capacity * ENTRY_WORDS);
    this.#mask = capacity - 1;
    this.#shift = 32 - Math.log2(capacity);
    const slots = this.#slots;
    for (let from = 0; from < old.length; from += ENTRY_WORDS) {
      const file = old[from + FILE]!;
      if (file === NO_FILE) continue;
      if (this.files.live[file] !== 1) {
        this.files.dropEntry(file);
        continue;
      }
      const slot = ~this.#probe(old, from);
      copyWords(old, from, slots, slot * ENTRY_WORDS, ENTRY_WORDS);
    }
    this.#reclaimable = 0;
  }
}

/** The fewest slots, a power of two, that hold `keys` keys at no more than `load`. */
function capacityFor(keys: number, load: number): number {
  let capacity = MIN_CAPACITY;
  while (keys > capacity * load) capacity *= 2;
  if (capacity > MAX_CAPACITY) throw new RangeError(`a key index holds at most ${MAX_CAPACITY * MAX_LOAD} keys`);
  return capacity;
}

// A loop, not subarray + set: a view object per entry would be the only allocation of the hot paths.
function copyWords(from: Uint32Array, fromAt: number, to: Uint32Array, toAt: number, words: number): void {
  for (let i = 0; i < words; i++) to[toAt + i] = from[fromAt + i]!;
}

/** Whether `values`, sorted ascending, holds `value` (a binary search). */
export function containsSorted(values: Float64Array, value: number): boolean {
  let low = 0;
  let high = values.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const v = values[middle]!;
    if (v < value) low = middle + 1;
    else if (v > value) high = middle - 1;
    else return true;
  }
  return false;
}
