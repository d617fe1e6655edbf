// What happened to a key index since it was last saved, in order: the body of a journal frame
// (key-index-journal.ts), so that saving after a commit writes the keys that commit touched, not
// the whole index.
//
// Three operations change which row is a key's live row, and replaying them in order on the index
// as saved gives the index as it is now:
//   upsert       words: UPSERT, key hash words 0..2, path reference, row position
//   remove       words: REMOVE, key hash words 0..2
//   remove file  words: REMOVE_FILE, path reference
// The words of the key hash are those the index keeps (key-index.ts). A path reference is an
// index into `paths`, the data files named so far. Paths, not the index's
// file ordinals: an ordinal is handed out again once its file is gone, so a logged ordinal could
// name a later file by the time the log is written.
//
// A log has room for a number of bytes; past it, it stops and says it is full (the caller then
// writes the whole index), so that a catch-up that re-keys a compacted table of millions of rows
// does not hold a log as large as the index.
import { KEY_HASH_WORDS } from "./key-hash.ts";
import { INDEX_HASH_WORDS, type KeyIndex } from "./key-index.ts";

const UPSERT = 1;
const REMOVE = 2;
const REMOVE_FILE = 3;
const UPSERT_WORDS = 1 + INDEX_HASH_WORDS + 2;
const REMOVE_WORDS = 1 + INDEX_HASH_WORDS;
const REMOVE_FILE_WORDS = 2;
const PATH = 1 + INDEX_HASH_WORDS;
const POSITION = PATH + 1;

export class KeyIndexChanges {
  /** The data files that the operations name, by path reference. */
  readonly paths: string[] = [];
  #references = new Map<string, number>();
  #words = new Uint32Array(1024);
  #length = 0;
  #pathBytes = 0;
  readonly #room: number;
  #full = false;
  // A commit's rows are upserted file by file: most upserts name the path the previous one did.
  #lastPath: string | undefined;
  #lastReference = 0;

  /** `room`: the bytes (byteLength) the log may take before it stops recording. */
  constructor(room = Number.POSITIVE_INFINITY) {
    this.#room = room;
  }

  /** Whether the log ran out of room and dropped what it held: only a whole save records the index now. */
  get full(): boolean {
    return this.#full;
  }

  /** The operations' words, in order. */
  get words(): Uint32Array {
    return this.#words.subarray(0, this.#length);
  }

  /** Bytes the operations and paths take in a journal frame, near enough to decide whether to write one. */
  get byteLength(): number {
    return this.#length * 4 + this.#pathBytes;
  }

  upsert(hashes: Uint32Array, at: number, path: string, position: number): void {
    if (this.#full) return;
    const reference = this.#reference(path);
    const w = this.#reserve(UPSERT_WORDS);
    if (w < 0) return;
    const words = this.#words;
    words[w] = UPSERT;
    for (let i = 0; i < INDEX_HASH_WORDS; i++) words[w + 1 + i] = hashes[at + i]!;
    words[w + PATH] = reference;
    // The index holds positions up to 2^32 - 1 and refuses any other before it logs.
    words[w + POSITION] = position;
  }

  remove(hashes: Uint32Array, at: number): void {
    if (this.#full) return;
    const w = this.#reserve(REMOVE_WORDS);
    if (w < 0) return;
    const words = this.#words;
    words[w] = REMOVE;
    for (let i = 0; i < INDEX_HASH_WORDS; i++) words[w + 1 + i] = hashes[at + i]!;
  }

  removeFile(path: string): void {
    if (this.#full) return;
    const reference = this.#reference(path);
    const w = this.#reserve(REMOVE_FILE_WORDS);
    if (w < 0) return;
    this.#words[w] = REMOVE_FILE;
    this.#words[w + 1] = reference;
  }

  #reference(path: string): number {
    if (path === this.#lastPath) return this.#lastReference;
    let reference = this.#references.get(path);
    if (reference === undefined) {
      reference = this.paths.length;
      this.paths.push(path);
      // A frame stores a path as its UTF-8 bytes, at most three per UTF-16 unit, after a length word.
      this.#pathBytes += 4 + path.length * 3;
      this.#references.set(path, reference);
    }
    this.#lastPath = path;
    this.#lastReference = reference;
    return reference;
  }

  /** Where `words` more words go, or -1 when they would pass the room: the log is then full and empty. */
  #reserve(words: number): number {
    const at = this.#length;
    if ((at + words) * 4 + this.#pathBytes > this.#room) {
      this.#full = true;
      this.#words = new Uint32Array(0);
      this.#length = 0;
      this.paths.length = 0;
      this.#references.clear();
      this.#pathBytes = 0;
      this.#lastPath = undefined;
      return -1;
    }
    if (at + words > this.#words.length) {
      const larger = new Uint32Array(Math.max(this.#words.length * 2, at + words));
      larger.set(this.#words);
      this.#words = larger;
    }
    this.#length = at + words;
    return at;
  }
}

/**
 * Replays logged operations on `index`. Throws a RangeError on words that no KeyIndexChanges
 * writes (an unknown operation, a path reference outside `paths`, a cut-off operation), having
 * applied the operations before them: the caller drops the index.
 */
export function applyChanges(index: KeyIndex, paths: readonly string[], words: Uint32Array): void {
  const hash = new Uint32Array(KEY_HASH_WORDS);
  const pathOf = (reference: number) => {
    const path = paths[reference];
    if (path === undefined) throw new RangeError(`path reference ${reference} of ${paths.length}`);
    return path;
  };
  for (let w = 0; w < words.length; ) {
    const op = words[w]!;
    const size =
      op === UPSERT ? UPSERT_WORDS : op === REMOVE ? REMOVE_WORDS : op === REMOVE_FILE ? REMOVE_FILE_WORDS : 0;
    if (size === 0 || w + size > words.length) throw new RangeError(`operation ${op} at word ${w} of ${words.length}`);
    if (op === REMOVE_FILE) {
      index.removeFile(pathOf(words[w + 1]!));
    } else {
      for (let i = 0; i < INDEX_HASH_WORDS; i++) hash[i] = words[w + 1 + i]!;
      if (op === REMOVE) index.remove(hash, 0);
      else index.upsert(hash, 0, index.files.intern(pathOf(words[w + PATH]!)), words[w + POSITION]!);
    }
    w += size;
  }
}
