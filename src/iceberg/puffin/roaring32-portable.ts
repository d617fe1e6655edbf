// The portable serialization of a 32-bit Roaring bitmap (RoaringFormatSpec, "General layout"), all
// words little-endian:
//   cookie header   SERIAL_COOKIE_NO_RUNCONTAINER (12346) then u32 container count, or
//                   SERIAL_COOKIE (12347) | (count - 1) << 16 then a bitset of the run containers
//   descriptive     per container: u16 key, u16 cardinality - 1
//   offset header   per container: u32 byte offset from the cookie; always with 12346, with 12347 only
//                   when there are at least NO_OFFSET_THRESHOLD (4) containers
//   containers      array: u16 values; bitmap: 8 KiB of 64-bit words; run: u16 count, (u16 start,
//                   u16 length - 1) pairs. Cardinality <= 4096 means array, else bitmap, unless run.
// The writer run-optimizes like Java's and CRoaring's runOptimize (what Iceberg's Java DV writer calls
// before serializing): a container is written as runs iff that is strictly smaller than its array or
// bitmap form. Readers must accept runs anyway, since Java writes them.
import { IcebergError } from "../errors.ts";
import {
  ARRAY_CONTAINER_MAX,
  BITMAP_WORDS,
  bitmapCardinality,
  type Container,
  popcount32,
  Roaring32,
  setBitRange,
} from "./roaring32.ts";

export const SERIAL_COOKIE_NO_RUNCONTAINER = 12346;
export const SERIAL_COOKIE = 12347;
export const NO_OFFSET_THRESHOLD = 4;

const BITMAP_BYTES = BITMAP_WORDS * 4;
// A container with this many runs or more is never smaller as runs than as a bitmap (2 + 4n >= 8192).
const MAX_USEFUL_RUNS = (BITMAP_BYTES - 2) / 4;
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** How a bitmap will be written: per container, 0 for array/bitmap or its number of runs. */
export interface PortableLayout {
  runs: Int32Array;
  hasRuns: boolean;
  /** Serialized size in bytes. */
  size: number;
}

export function portableLayout(bitmap: Roaring32, runOptimize = true): PortableLayout {
  const n = bitmap.keys.length;
  const runs = new Int32Array(n);
  let hasRuns = false;
  let body = 0;
  for (let i = 0; i < n; i++) {
    const card = bitmap.cardinalities[i]!;
    const c = bitmap.containers[i]!;
    const plain = card > ARRAY_CONTAINER_MAX ? BITMAP_BYTES : 2 * card;
    if (runOptimize) {
      const r = card > ARRAY_CONTAINER_MAX ? bitmapRuns(c as Uint32Array) : arrayRuns(c as Uint16Array, card);
      if (2 + 4 * r < plain) {
        runs[i] = r;
        hasRuns = true;
        body += 2 + 4 * r;
        continue;
      }
    }
    body += plain;
  }
  return { runs, hasRuns, size: headerSize(n, hasRuns) + body };
}

/** Writes `bitmap` at `offset` of `out` as laid out by `layout`; returns the offset after it. */
export function writePortable(bitmap: Roaring32, layout: PortableLayout, out: Uint8Array, offset: number): number {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const n = bitmap.keys.length;
  const { runs, hasRuns } = layout;
  let p = offset;
  if (hasRuns) {
    view.setUint32(p, (SERIAL_COOKIE | ((n - 1) << 16)) >>> 0, true);
    p += 4;
    const runFlags = out.subarray(p, p + ((n + 7) >>> 3));
    runFlags.fill(0);
    for (let i = 0; i < n; i++) if (runs[i] !== 0) runFlags[i >>> 3]! |= 1 << (i & 7);
    p += runFlags.length;
  } else {
    view.setUint32(p, SERIAL_COOKIE_NO_RUNCONTAINER, true);
    view.setUint32(p + 4, n, true);
    p += 8;
  }
  for (let i = 0; i < n; i++, p += 4) {
    view.setUint16(p, bitmap.keys[i]!, true);
    view.setUint16(p + 2, bitmap.cardinalities[i]! - 1, true);
  }
  if (!hasRuns || n >= NO_OFFSET_THRESHOLD) {
    let at = p - offset + 4 * n;
    for (let i = 0; i < n; i++, p += 4) {
      view.setUint32(p, at, true);
      at += containerBytes(bitmap.cardinalities[i]!, runs[i]!);
    }
  }
  for (let i = 0; i < n; i++) {
    const card = bitmap.cardinalities[i]!;
    const c = bitmap.containers[i]!;
    if (runs[i] !== 0) p = writeRuns(c, card, runs[i]!, view, p);
    else if (card > ARRAY_CONTAINER_MAX) p = writeWords(c, BITMAP_WORDS, 4, out, view, p);
    else p = writeWords(c, card, 2, out, view, p);
  }
  return p;
}

/** Serializes `bitmap` to a new buffer. */
export function serializePortable(bitmap: Roaring32, runOptimize = true): Uint8Array {
  const layout = portableLayout(bitmap, runOptimize);
  const out = new Uint8Array(layout.size);
  writePortable(bitmap, layout, out, 0);
  return out;
}

/**
 * Reads one portable bitmap starting at `offset`, not reading past `end`. Returns the bitmap and the
 * offset after it (the format has no length field: its size follows from the headers).
 */
export function readPortable(bytes: Uint8Array, offset = 0, end = bytes.length): { bitmap: Roaring32; end: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const need = (p: number, length: number, what: string) => {
    if (p + length > end)
      throw new IcebergError("corrupt", `roaring bitmap truncated: ${what} needs ${length} bytes at ${p}`);
  };
  need(offset, 4, "cookie");
  const cookie = view.getUint32(offset, true);
  let n: number;
  let p: number;
  let runFlags: Uint8Array | undefined;
  if (cookie === SERIAL_COOKIE_NO_RUNCONTAINER) {
    need(offset, 8, "cookie header");
    n = view.getUint32(offset + 4, true);
    if (n > 0x10000) throw new IcebergError("corrupt", `roaring bitmap has ${n} containers, at most 65536 fit`);
    p = offset + 8;
  } else if ((cookie & 0xffff) === SERIAL_COOKIE) {
    n = (cookie >>> 16) + 1;
    need(offset + 4, (n + 7) >>> 3, "run container bitset");
    runFlags = bytes.subarray(offset + 4, offset + 4 + ((n + 7) >>> 3));
    p = offset + 4 + runFlags.length;
  } else {
    throw new IcebergError("corrupt", `not a portable roaring bitmap: cookie ${cookie} is neither 12346 nor 12347`);
  }
  const descriptive = p;
  need(p, 4 * n, "descriptive header");
  p += 4 * n;
  if (runFlags === undefined || n >= NO_OFFSET_THRESHOLD) {
    // The offsets only serve random access; containers follow each other, so they are skipped.
    need(p, 4 * n, "offset header");
    p += 4 * n;
  }
  const bitmap = new Roaring32();
  let lastKey = -1;
  for (let i = 0; i < n; i++) {
    const key = view.getUint16(descriptive + 4 * i, true);
    const card = view.getUint16(descriptive + 4 * i + 2, true) + 1;
    if (key <= lastKey)
      throw new IcebergError("corrupt", `roaring bitmap container keys not ascending: ${key} after ${lastKey}`);
    lastKey = key;
    let container: Container;
    if (runFlags !== undefined && (runFlags[i >>> 3]! & (1 << (i & 7))) !== 0) {
      need(p, 2, "run container");
      const runCount = view.getUint16(p, true);
      need(p + 2, 4 * runCount, "run container");
      container = readRuns(view, p + 2, runCount, card, key);
      p += 2 + 4 * runCount;
    } else if (card > ARRAY_CONTAINER_MAX) {
      need(p, BITMAP_BYTES, "bitmap container");
      const words = new Uint32Array(BITMAP_WORDS);
      readWords(words, 4, bytes, view, p);
      if (bitmapCardinality(words) !== card) {
        throw new IcebergError(
          "corrupt",
          `roaring bitmap container ${key}: bitmap holds ${bitmapCardinality(words)}, header says ${card}`,
        );
      }
      container = words;
      p += BITMAP_BYTES;
    } else {
      need(p, 2 * card, "array container");
      const array = new Uint16Array(card);
      readWords(array, 2, bytes, view, p);
      for (let k = 1; k < card; k++) {
        if (array[k]! <= array[k - 1]!)
          throw new IcebergError("corrupt", `roaring bitmap array container ${key} not strictly ascending`);
      }
      container = array;
      p += 2 * card;
    }
    bitmap.appendContainer(key, container, card);
  }
  return { bitmap, end: p };
}

/** Parses a buffer holding exactly one portable bitmap. */
export function deserializePortable(bytes: Uint8Array): Roaring32 {
  const { bitmap, end } = readPortable(bytes);
  if (end !== bytes.length)
    throw new IcebergError("corrupt", `roaring bitmap followed by ${bytes.length - end} stray bytes`);
  return bitmap;
}

function headerSize(n: number, hasRuns: boolean): number {
  if (!hasRuns) return 8 + 8 * n;
  return 4 + ((n + 7) >>> 3) + (n >= NO_OFFSET_THRESHOLD ? 8 * n : 4 * n);
}

function containerBytes(card: number, runs: number): number {
  if (runs !== 0) return 2 + 4 * runs;
  return card > ARRAY_CONTAINER_MAX ? BITMAP_BYTES : 2 * card;
}

// Runs in a sorted array container, counted only as far as they could still beat the array form.
function arrayRuns(a: Uint16Array, card: number): number {
  const limit = card >>> 1;
  let runs = 1;
  for (let k = 1; k < card; k++) {
    if (a[k] !== a[k - 1]! + 1 && ++runs > limit) break;
  }
  return runs;
}

// Runs in a bitmap container: a run starts at each set bit whose lower neighbour is clear.
function bitmapRuns(words: Uint32Array): number {
  let runs = 0;
  let carry = 0;
  for (let w = 0; w < BITMAP_WORDS; w++) {
    const word = words[w]!;
    runs += popcount32(word & ~((word << 1) | carry));
    carry = word >>> 31;
    if (runs >= MAX_USEFUL_RUNS) break;
  }
  return runs;
}

function writeRuns(c: Container, card: number, runCount: number, view: DataView, offset: number): number {
  view.setUint16(offset, runCount, true);
  let p = offset + 2;
  const emit = (start: number, last: number) => {
    view.setUint16(p, start, true);
    view.setUint16(p + 2, last - start, true);
    p += 4;
  };
  if (card <= ARRAY_CONTAINER_MAX) {
    let start = c[0]!;
    let prev = start;
    for (let k = 1; k < card; k++) {
      const v = c[k]!;
      if (v !== prev + 1) {
        emit(start, prev);
        start = v;
      }
      prev = v;
    }
    emit(start, prev);
    return p;
  }
  // Bitmap: find each run with word arithmetic rather than bit by bit.
  let w = 0;
  let word = c[0]! | 0;
  for (;;) {
    while (word === 0) {
      if (++w === BITMAP_WORDS) return p;
      word = c[w]! | 0;
    }
    const start = w * 32 + 31 - Math.clz32(word & -word);
    let ones = word | (word - 1); // the bits below the run's start set too
    while (ones === -1) {
      if (++w === BITMAP_WORDS) {
        emit(start, 0xffff);
        return p;
      }
      ones = c[w]! | 0;
    }
    const zero = ~ones & (ones + 1); // lowest clear bit: one past the run's end
    emit(start, w * 32 + 30 - Math.clz32(zero));
    word = ones & (ones + 1); // clear the run just emitted
  }
}

function readRuns(view: DataView, offset: number, runCount: number, card: number, key: number): Container {
  let total = 0;
  let next = 0; // lowest value the next run may start at
  for (let r = 0; r < runCount; r++) {
    const start = view.getUint16(offset + 4 * r, true);
    const last = start + view.getUint16(offset + 4 * r + 2, true);
    if (start < next || last > 0xffff) {
      throw new IcebergError("corrupt", `roaring bitmap run container ${key}: runs overlap, are unsorted or overflow`);
    }
    total += last - start + 1;
    next = last + 1;
  }
  if (total !== card)
    throw new IcebergError("corrupt", `roaring bitmap run container ${key}: runs hold ${total}, header says ${card}`);
  if (card > ARRAY_CONTAINER_MAX) {
    const words = new Uint32Array(BITMAP_WORDS);
    for (let r = 0; r < runCount; r++) {
      const start = view.getUint16(offset + 4 * r, true);
      setBitRange(words, start, start + view.getUint16(offset + 4 * r + 2, true));
    }
    return words;
  }
  const array = new Uint16Array(card);
  let o = 0;
  for (let r = 0; r < runCount; r++) {
    const start = view.getUint16(offset + 4 * r, true);
    const last = start + view.getUint16(offset + 4 * r + 2, true);
    for (let v = start; v <= last; v++) array[o++] = v;
  }
  return array;
}

// Little-endian words of `width` bytes: a straight byte copy on little-endian hosts.
function writeWords(c: Container, count: number, width: 2 | 4, out: Uint8Array, view: DataView, p: number): number {
  if (LITTLE_ENDIAN) {
    out.set(new Uint8Array(c.buffer, c.byteOffset, count * width), p);
  } else if (width === 2) {
    for (let k = 0; k < count; k++) view.setUint16(p + 2 * k, c[k]!, true);
  } else {
    for (let k = 0; k < count; k++) view.setUint32(p + 4 * k, c[k]!, true);
  }
  return p + count * width;
}

function readWords(target: Container, width: 2 | 4, bytes: Uint8Array, view: DataView, p: number): void {
  const count = target.length;
  if (LITTLE_ENDIAN) {
    new Uint8Array(target.buffer, target.byteOffset, count * width).set(bytes.subarray(p, p + count * width));
  } else if (width === 2) {
    for (let k = 0; k < count; k++) target[k] = view.getUint16(p + 2 * k, true);
  } else {
    for (let k = 0; k < count; k++) target[k] = view.getUint32(p + 4 * k, true);
  }
}
