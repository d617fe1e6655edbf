// The data files a key index points into, each known by a small ordinal so that an index entry holds
// 4 bytes instead of a path. A file leaves the table in O(1) (compaction can drop hundreds at once):
// its ordinal turns dead, the index treats its entries as absent and reclaims their slots lazily, and
// the ordinal is handed out again only once no entry refers to it any more.

/** Never handed out: an index slot whose file ordinal is 0 is empty. */
export const NO_FILE = 0;

export class DataFileTable {
  /** 1 while the ordinal's file is in the table: the index reads it on every probe that finds a key. */
  live = new Uint8Array(16);
  /** Index entries per ordinal, the dead files' included until their slots are reclaimed. */
  #entries = new Uint32Array(16);
  #paths: (string | undefined)[] = [undefined];
  #ordinals = new Map<string, number>();
  /** Dead ordinals that no entry refers to any more. */
  #free: number[] = [];

  /** Number of files in the table. */
  get size(): number {
    return this.#ordinals.size;
  }

  /** One past the largest ordinal ever handed out: arrays indexed by ordinal need this length. */
  get ordinalLimit(): number {
    return this.#paths.length;
  }

  ordinalOf(path: string): number | undefined {
    return this.#ordinals.get(path);
  }

  /** The ordinal of `path`, added to the table if it is not there. */
  intern(path: string): number {
    const known = this.#ordinals.get(path);
    if (known !== undefined) return known;
    const ordinal = this.#free.pop() ?? this.#paths.length;
    if (ordinal === this.#paths.length) {
      this.#paths.push(path);
      if (ordinal >= this.live.length) this.#grow(ordinal * 2);
    } else {
      this.#paths[ordinal] = path;
    }
    this.#ordinals.set(path, ordinal);
    this.live[ordinal] = 1;
    return ordinal;
  }

  /** The path of a live ordinal. */
  path(ordinal: number): string {
    const path = this.live[ordinal] === 1 ? this.#paths[ordinal] : undefined;
    if (path === undefined) throw new RangeError(`no data file has ordinal ${ordinal}`);
    return path;
  }

  /** Live paths in ordinal order. */
  paths(): string[] {
    return this.#paths.filter((path, ordinal) => path !== undefined && this.live[ordinal] === 1) as string[];
  }

  /** Index entries that still refer to `ordinal`, whether its file is live or dead. */
  entries(ordinal: number): number {
    return this.#entries[ordinal]!;
  }

  /**
   * Takes `path` out of the table and returns its ordinal, or undefined if it was not there. The
   * ordinal stays reserved while index entries refer to it.
   */
  remove(path: string): number | undefined {
    const ordinal = this.#ordinals.get(path);
    if (ordinal === undefined) return undefined;
    this.#ordinals.delete(path);
    this.live[ordinal] = 0;
    if (this.#entries[ordinal] === 0) this.#release(ordinal);
    return ordinal;
  }

  /** An index entry now refers to `ordinal`. */
  addEntry(ordinal: number): void {
    this.#entries[ordinal]!++;
  }

  /** An index entry no longer refers to `ordinal`; the last entry of a dead file frees its ordinal. */
  dropEntry(ordinal: number): void {
    if (--this.#entries[ordinal]! === 0 && this.live[ordinal] === 0) this.#release(ordinal);
  }

  #release(ordinal: number): void {
    this.#paths[ordinal] = undefined;
    this.#free.push(ordinal);
  }

  #grow(length: number): void {
    const live = new Uint8Array(length);
    live.set(this.live);
    this.live = live;
    const entries = new Uint32Array(length);
    entries.set(this.#entries);
    this.#entries = entries;
  }
}
