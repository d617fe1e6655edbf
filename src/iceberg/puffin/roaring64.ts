// Row positions (non-negative int64) as a collection of 32-bit Roaring bitmaps (Puffin spec,
// deletion-vector-v1): the most significant 4 bytes of a position are its key, the least significant
// 4 bytes its sub-position, stored in the key's 32-bit bitmap. Serialized in the RoaringFormatSpec
// 64-bit "portable" layout: u64 LE number of bitmaps, then per key in ascending unsigned order a u32 LE
// key and that key's 32-bit portable bitmap. Only non-empty keys are written; readers accept gaps
// (Java's writer instead writes an empty bitmap for every key below the largest).
import { IcebergError } from "../errors.ts";
import { indexOfKey, Roaring32 } from "./roaring32.ts";
import { type PortableLayout, portableLayout, readPortable, writePortable } from "./roaring32-portable.ts";

/**
 * Largest key. Java's reader keeps one bitmap per key in an int-indexed array and rejects keys above
 * Integer.MAX_VALUE - 1, so neither side goes past it; a data file would need 2^62 rows to get there.
 */
export const MAX_KEY = 0x7ffffffe;
export const MAX_POSITION = (BigInt(MAX_KEY) << 32n) | 0xffffffffn;

const TWO_32 = 0x1_0000_0000;
const LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** How a position bitmap will be written: the layout of each key's bitmap and the total size. */
export interface Portable64Layout {
  layouts: PortableLayout[];
  size: number;
}

export class RoaringPositionBitmap {
  /** Keys (high 32 bits) in ascending order, each with a non-empty bitmap. */
  keys: number[] = [];
  bitmaps: Roaring32[] = [];

  static from(positions: ArrayLike<number> | BigInt64Array | BigUint64Array): RoaringPositionBitmap {
    const bitmap = new RoaringPositionBitmap();
    bitmap.addAll(positions);
    return bitmap;
  }

  get cardinality(): number {
    let n = 0;
    for (const b of this.bitmaps) n += b.cardinality;
    return n;
  }

  isEmpty(): boolean {
    return this.keys.length === 0;
  }

  add(position: bigint | number): void {
    const [key, low] = split(position);
    this.#bitmapFor(key).add(low);
  }

  /** Adds positions in any order, duplicates allowed. Numbers must be safe integers. */
  addAll(positions: ArrayLike<number> | BigInt64Array | BigUint64Array): void {
    const n = positions.length;
    if (n === 0) return;
    if (positions instanceof Uint32Array) {
      this.#bitmapFor(0).addMany(positions);
      return;
    }
    const lows = new Uint32Array(n);
    let highs: Uint32Array | undefined; // only once a position needs a key above 0
    if (positions instanceof BigInt64Array || positions instanceof BigUint64Array) {
      if (LITTLE_ENDIAN) {
        // The halves of each int64 without allocating a BigInt per element.
        const words = new Uint32Array(positions.buffer, positions.byteOffset, 2 * n);
        for (let i = 0; i < n; i++) {
          const high = words[2 * i + 1]!;
          lows[i] = words[2 * i]!;
          if (high !== 0) {
            if (high > MAX_KEY) throw new RangeError(`position ${positions[i]} is outside [0, ${MAX_POSITION}]`);
            highs ??= new Uint32Array(n);
            highs[i] = high;
          }
        }
      } else {
        for (let i = 0; i < n; i++) {
          const [key, low] = split(positions[i]!);
          lows[i] = low;
          if (key !== 0) {
            highs ??= new Uint32Array(n);
            highs[i] = key;
          }
        }
      }
    } else {
      for (let i = 0; i < n; i++) {
        const v = positions[i]!;
        if (v >= 0 && v < TWO_32 && Number.isInteger(v)) {
          lows[i] = v;
        } else {
          const [key, low] = split(v);
          lows[i] = low;
          highs ??= new Uint32Array(n);
          highs[i] = key;
        }
      }
    }
    if (highs === undefined) {
      this.#bitmapFor(0).addMany(lows);
      return;
    }
    // Positions past 2^32 (a file of more than 4 billion rows): split by key. Keys are few.
    const keys = [...new Set(highs)].sort((a, b) => a - b);
    for (const key of keys) {
      let count = 0;
      for (let i = 0; i < n; i++) if (highs[i] === key) count++;
      const part = new Uint32Array(count);
      let o = 0;
      for (let i = 0; i < n; i++) if (highs[i] === key) part[o++] = lows[i]!;
      this.#bitmapFor(key).addMany(part);
    }
  }

  has(position: bigint | number): boolean {
    if (
      typeof position === "number"
        ? !Number.isSafeInteger(position) || position < 0
        : position < 0n || position > MAX_POSITION
    ) {
      return false;
    }
    const [key, low] = split(position);
    const i = indexOfKey(this.keys, key);
    return i >= 0 && this.bitmaps[i]!.has(low);
  }

  /** Adds every position of `other` to this bitmap (in place): how a new DV absorbs the old one. */
  union(other: RoaringPositionBitmap): this {
    for (let j = 0; j < other.keys.length; j++) {
      const key = other.keys[j]!;
      const i = indexOfKey(this.keys, key);
      if (i >= 0) this.bitmaps[i]!.union(other.bitmaps[j]!);
      else this.#bitmapFor(key).union(other.bitmaps[j]!);
    }
    return this;
  }

  /** Positions in ascending order. */
  *[Symbol.iterator](): IterableIterator<bigint> {
    for (let i = 0; i < this.keys.length; i++) {
      const high = BigInt(this.keys[i]!) << 32n;
      const bitmap = this.bitmaps[i]!;
      const lows = new Uint32Array(bitmap.cardinality);
      bitmap.writeValues(lows, 0);
      for (const low of lows) yield high | BigInt(low);
    }
  }

  /** Positions in ascending order, as int64 (the type of Iceberg's row position). */
  toArray(): BigInt64Array {
    const out = new BigInt64Array(this.cardinality);
    if (!LITTLE_ENDIAN) {
      let o = 0;
      for (const position of this) out[o++] = position;
      return out;
    }
    const words = new Uint32Array(out.buffer);
    let o = 0;
    for (let i = 0; i < this.keys.length; i++) {
      const end = this.bitmaps[i]!.writeValues(words, o, 2);
      for (let k = o + 1; k < end; k += 2) words[k] = this.keys[i]!;
      o = end;
    }
    return out;
  }

  /** Calls `fn` with each position, ascending, as a number: for positions below 2^53. */
  forEach(fn: (position: number) => void): void {
    for (let i = 0; i < this.keys.length; i++) {
      const high = this.keys[i]! * TWO_32;
      if (high + (TWO_32 - 1) > Number.MAX_SAFE_INTEGER) throw new RangeError("positions past 2^53: use toArray()");
      this.bitmaps[i]!.forEach((low) => {
        fn(high + low);
      });
    }
  }

  /** Plans the portable serialization (run containers where they are smaller, unless runOptimize is false). */
  portableLayout(runOptimize = true): Portable64Layout {
    const layouts = this.bitmaps.map((b) => portableLayout(b, runOptimize));
    let size = 8;
    for (const l of layouts) size += 4 + l.size;
    return { layouts, size };
  }

  /** Writes the portable serialization at `offset` of `out`; returns the offset after it. */
  writePortable(layout: Portable64Layout, out: Uint8Array, offset: number): number {
    const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
    view.setUint32(offset, this.keys.length, true);
    view.setUint32(offset + 4, 0, true);
    let p = offset + 8;
    for (let i = 0; i < this.keys.length; i++) {
      view.setUint32(p, this.keys[i]!, true);
      p = writePortable(this.bitmaps[i]!, layout.layouts[i]!, out, p + 4);
    }
    return p;
  }

  serialize(runOptimize = true): Uint8Array {
    const layout = this.portableLayout(runOptimize);
    const out = new Uint8Array(layout.size);
    this.writePortable(layout, out, 0);
    return out;
  }

  /** Parses exactly one portable 64-bit bitmap from `bytes[offset, end)`. */
  static deserialize(bytes: Uint8Array, offset = 0, end = bytes.length): RoaringPositionBitmap {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (offset + 8 > end) throw new IcebergError("corrupt", "64-bit roaring bitmap truncated: no bitmap count");
    const count = view.getUint32(offset, true);
    // Each bitmap takes at least a key and an 8-byte cookie header.
    if (view.getUint32(offset + 4, true) !== 0 || count > (end - offset - 8) / 12) {
      throw new IcebergError(
        "corrupt",
        `64-bit roaring bitmap count ${view.getBigUint64(offset, true)} does not fit its bytes`,
      );
    }
    const result = new RoaringPositionBitmap();
    let p = offset + 8;
    let lastKey = -1;
    for (let i = 0; i < count; i++) {
      if (p + 4 > end) throw new IcebergError("corrupt", "64-bit roaring bitmap truncated: no key");
      const key = view.getUint32(p, true);
      if (key <= lastKey)
        throw new IcebergError("corrupt", `64-bit roaring bitmap keys not ascending: ${key} after ${lastKey}`);
      if (key > MAX_KEY) throw new IcebergError("corrupt", `64-bit roaring bitmap key ${key} is above ${MAX_KEY}`);
      lastKey = key;
      const read = readPortable(bytes, p + 4, end);
      p = read.end;
      if (!read.bitmap.isEmpty()) {
        result.keys.push(key);
        result.bitmaps.push(read.bitmap);
      }
    }
    if (p !== end) throw new IcebergError("corrupt", `64-bit roaring bitmap followed by ${end - p} stray bytes`);
    return result;
  }

  #bitmapFor(key: number): Roaring32 {
    let i = indexOfKey(this.keys, key);
    if (i >= 0) return this.bitmaps[i]!;
    i = -i - 1;
    const bitmap = new Roaring32();
    this.keys.splice(i, 0, key);
    this.bitmaps.splice(i, 0, bitmap);
    return bitmap;
  }
}

// [key, sub-position] of a position, validated.
function split(position: bigint | number): [number, number] {
  if (typeof position === "number") {
    if (!Number.isSafeInteger(position) || position < 0) {
      throw new RangeError(`position ${position} is not a non-negative safe integer`);
    }
    return [Math.floor(position / TWO_32), position >>> 0];
  }
  if (position < 0n || position > MAX_POSITION)
    throw new RangeError(`position ${position} is outside [0, ${MAX_POSITION}]`);
  return [Number(position >> 32n), Number(position & 0xffffffffn)];
}
