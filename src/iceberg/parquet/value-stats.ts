// Per-column accumulators of the metrics Iceberg keeps for a data file (spec "Manifests",
// data_file fields 108-137 and their notes): nulls, NaNs (float and double only), and the
// lower and upper bounds of the non-null, non-NaN values. They scan the Arrow buffers the
// column builders filled, row range by row range, without allocating per value:
//   int, date                 Int32 order
//   long, time, timestamps    Int64 order, compared as (signed high, unsigned low) 32-bit halves
//   float, double             IEEE order with -0.0 before +0.0; NaN counted, never a bound
//   boolean                   false < true
//   string, binary            unsigned byte order (for UTF-8, code point order, as Java compares)
//   fixed                     unsigned byte order
//   uuid                      unsigned byte order (RFC 4122, Parquet); Java's UUID comparator
//                             still compares two signed longs, so bounds are kept only when the
//                             two orders agree on them (a time-ordered v7 key, not a random v4)
//   decimal                   signed 128-bit order of the unscaled values
// Bounds come out in the single-value binary form, strings and binary truncated per the mode.
import type * as arrow from "apache-arrow";
import { encodeDecimal, encodeSingleValue } from "../spec/single-value.ts";
import { isInt64, type PrimitiveType } from "../spec/types.ts";
import type { MetricsMode } from "./metrics-config.ts";
import {
  truncateBinaryLower,
  truncateBinaryUpper,
  truncateStringLower,
  truncateStringUpper,
} from "./truncate-bounds.ts";

/** Validity of rows: row i is valid when bit (offset + i) of bits is set. */
export interface Validity {
  bits: Uint8Array;
  offset: number;
}

export abstract class ValueStats {
  nullCount = 0;

  /** Adds rows [from, to) of `data` (logical indexes), where `validity` says which are non-null. */
  abstract add(data: arrow.Data, from: number, to: number, validity: Validity | undefined): void;

  /** The NaN count, for float and double only. */
  nanCount(): number | undefined {
    return undefined;
  }

  abstract lowerBound(mode: MetricsMode): Uint8Array | undefined;
  abstract upperBound(mode: MetricsMode): Uint8Array | undefined;

  /**
   * The rows of the smallest and the largest non-null value in [from, to), by `compare` of two
   * rows, counting the nulls; [-1, -1] when every row is null.
   */
  protected extremes(
    from: number,
    to: number,
    validity: Validity | undefined,
    compare: (a: number, b: number) => number,
  ): [number, number] {
    let minAt = -1;
    let maxAt = -1;
    for (let i = from; i < to; i++) {
      if (isNull(validity, i)) {
        this.nullCount++;
        continue;
      }
      if (minAt < 0) {
        minAt = i;
        maxAt = i;
      } else if (compare(i, minAt) < 0) minAt = i;
      else if (compare(i, maxAt) > 0) maxAt = i;
    }
    return [minAt, maxAt];
  }
}

export function valueStats(type: PrimitiveType): ValueStats {
  if (typeof type === "object") return type.kind === "decimal" ? new DecimalStats() : new FixedStats(false);
  if (isInt64(type)) return new LongStats(type);
  switch (type) {
    case "boolean":
      return new BooleanStats();
    case "int":
    case "date":
      return new IntStats(type);
    case "float":
    case "double":
      return new FloatingStats(type);
    case "string":
      return new BytesStats(true);
    case "binary":
      return new BytesStats(false);
    case "uuid":
      return new FixedStats(true);
  }
}

function isNull(validity: Validity | undefined, i: number): boolean {
  if (validity === undefined) return false;
  const bit = validity.offset + i;
  return ((validity.bits[bit >> 3]! >> (bit & 7)) & 1) === 0;
}

class BooleanStats extends ValueStats {
  #hasFalse = false;
  #hasTrue = false;

  add(data: arrow.Data, from: number, to: number, validity: Validity | undefined): void {
    // Arrow does not slice a boolean bitmap: value i is bit (data.offset + i)
    const bits = data.values as Uint8Array;
    for (let i = from; i < to; i++) {
      if (isNull(validity, i)) {
        this.nullCount++;
        continue;
      }
      const bit = data.offset + i;
      if ((bits[bit >> 3]! >> (bit & 7)) & 1) this.#hasTrue = true;
      else this.#hasFalse = true;
    }
  }

  lowerBound(): Uint8Array | undefined {
    return this.#hasFalse || this.#hasTrue ? encodeSingleValue("boolean", !this.#hasFalse) : undefined;
  }

  upperBound(): Uint8Array | undefined {
    return this.#hasFalse || this.#hasTrue ? encodeSingleValue("boolean", this.#hasTrue) : undefined;
  }
}

class IntStats extends ValueStats {
  readonly #type: PrimitiveType;
  #min = Number.POSITIVE_INFINITY;
  #max = Number.NEGATIVE_INFINITY;

  constructor(type: PrimitiveType) {
    super();
    this.#type = type;
  }

  add(data: arrow.Data, from: number, to: number, validity: Validity | undefined): void {
    const values = data.values as Int32Array;
    let min = this.#min;
    let max = this.#max;
    for (let i = from; i < to; i++) {
      if (isNull(validity, i)) {
        this.nullCount++;
        continue;
      }
      const v = values[i]!;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    this.#min = min;
    this.#max = max;
  }

  lowerBound(): Uint8Array | undefined {
    return this.#min <= this.#max ? encodeSingleValue(this.#type, this.#min) : undefined;
  }

  upperBound(): Uint8Array | undefined {
    return this.#min <= this.#max ? encodeSingleValue(this.#type, this.#max) : undefined;
  }
}

/** Bounds kept as bigints (long and the like, decimal): each add merges its batch's extremes. */
abstract class BigIntStats extends ValueStats {
  #min: bigint | undefined;
  #max: bigint | undefined;

  protected merge(min: bigint, max: bigint): void {
    if (this.#min === undefined || min < this.#min) this.#min = min;
    if (this.#max === undefined || max > this.#max) this.#max = max;
  }

  protected abstract encode(value: bigint): Uint8Array;

  lowerBound(): Uint8Array | undefined {
    return this.#min === undefined ? undefined : this.encode(this.#min);
  }

  upperBound(): Uint8Array | undefined {
    return this.#max === undefined ? undefined : this.encode(this.#max);
  }
}

class LongStats extends BigIntStats {
  readonly #type: PrimitiveType;

  constructor(type: PrimitiveType) {
    super();
    this.#type = type;
  }

  add(data: arrow.Data, from: number, to: number, validity: Validity | undefined): void {
    const values = data.values as BigInt64Array;
    const words = new Int32Array(values.buffer, values.byteOffset, values.length * 2);
    let minAt = -1;
    let maxAt = -1;
    let minHigh = 0;
    let minLow = 0;
    let maxHigh = 0;
    let maxLow = 0;
    for (let i = from; i < to; i++) {
      if (isNull(validity, i)) {
        this.nullCount++;
        continue;
      }
      const high = words[2 * i + 1]!;
      const low = words[2 * i]! >>> 0;
      if (minAt < 0 || high < minHigh || (high === minHigh && low < minLow)) {
        minAt = i;
        minHigh = high;
        minLow = low;
      }
      if (maxAt < 0 || high > maxHigh || (high === maxHigh && low > maxLow)) {
        maxAt = i;
        maxHigh = high;
        maxLow = low;
      }
    }
    if (minAt >= 0) this.merge(values[minAt]!, values[maxAt]!);
  }

  protected encode(value: bigint): Uint8Array {
    return encodeSingleValue(this.#type, value);
  }
}

class FloatingStats extends ValueStats {
  readonly #type: PrimitiveType;
  #nans = 0;
  #seen = false;
  #min = 0;
  #max = 0;

  constructor(type: PrimitiveType) {
    super();
    this.#type = type;
  }

  add(data: arrow.Data, from: number, to: number, validity: Validity | undefined): void {
    const values = data.values as Float32Array | Float64Array;
    let seen = this.#seen;
    let min = this.#min;
    let max = this.#max;
    for (let i = from; i < to; i++) {
      if (isNull(validity, i)) {
        this.nullCount++;
        continue;
      }
      const v = values[i]!;
      if (Number.isNaN(v)) {
        this.#nans++;
      } else if (!seen) {
        seen = true;
        min = v;
        max = v;
      } else {
        // -0.0 sorts before +0.0 (IEEE 754 totalOrder, Java's Double.compare)
        if (v < min || (v === 0 && min === 0 && 1 / v < 0)) min = v;
        if (v > max || (v === 0 && max === 0 && 1 / v > 0)) max = v;
      }
    }
    this.#seen = seen;
    this.#min = min;
    this.#max = max;
  }

  override nanCount(): number {
    return this.#nans;
  }

  lowerBound(): Uint8Array | undefined {
    return this.#seen ? encodeSingleValue(this.#type, this.#min) : undefined;
  }

  upperBound(): Uint8Array | undefined {
    return this.#seen ? encodeSingleValue(this.#type, this.#max) : undefined;
  }
}

/** Unsigned byte order of a[aStart, aEnd) and b[bStart, bEnd). */
function compareBytes(
  a: Uint8Array,
  aStart: number,
  aEnd: number,
  b: Uint8Array,
  bStart: number,
  bEnd: number,
): number {
  const n = Math.min(aEnd - aStart, bEnd - bStart);
  for (let k = 0; k < n; k++) {
    const d = a[aStart + k]! - b[bStart + k]!;
    if (d !== 0) return d;
  }
  return aEnd - aStart - (bEnd - bStart);
}

/** The lesser (sign < 0) or greater (sign > 0) of a kept bound and a new candidate. */
function pick(kept: Uint8Array | undefined, candidate: Uint8Array, sign: number): Uint8Array {
  if (kept === undefined) return candidate;
  return Math.sign(compareBytes(candidate, 0, candidate.length, kept, 0, kept.length)) === sign ? candidate : kept;
}

class BytesStats extends ValueStats {
  readonly #utf8: boolean;
  #min: Uint8Array | undefined;
  #max: Uint8Array | undefined;

  constructor(utf8: boolean) {
    super();
    this.#utf8 = utf8;
  }

  add(data: arrow.Data, from: number, to: number, validity: Validity | undefined): void {
    const offsets = data.valueOffsets as Int32Array;
    const bytes = data.values as Uint8Array;
    let minAt = -1;
    let maxAt = -1;
    for (let i = from; i < to; i++) {
      if (isNull(validity, i)) {
        this.nullCount++;
        continue;
      }
      const start = offsets[i]!;
      const end = offsets[i + 1]!;
      if (minAt < 0) {
        minAt = i;
        maxAt = i;
        continue;
      }
      if (compareBytes(bytes, start, end, bytes, offsets[minAt]!, offsets[minAt + 1]!) < 0) minAt = i;
      else if (compareBytes(bytes, start, end, bytes, offsets[maxAt]!, offsets[maxAt + 1]!) > 0) maxAt = i;
    }
    if (minAt < 0) return;
    this.#min = pick(this.#min, bytes.slice(offsets[minAt], offsets[minAt + 1]), -1);
    this.#max = pick(this.#max, bytes.slice(offsets[maxAt], offsets[maxAt + 1]), 1);
  }

  lowerBound(mode: MetricsMode): Uint8Array | undefined {
    if (this.#min === undefined || mode.kind !== "truncate") return this.#min;
    return this.#utf8 ? truncateStringLower(this.#min, mode.length) : truncateBinaryLower(this.#min, mode.length);
  }

  upperBound(mode: MetricsMode): Uint8Array | undefined {
    if (this.#max === undefined || mode.kind !== "truncate") return this.#max;
    return this.#utf8 ? truncateStringUpper(this.#max, mode.length) : truncateBinaryUpper(this.#max, mode.length);
  }
}

class FixedStats extends ValueStats {
  readonly #uuid: boolean;
  #min: Uint8Array | undefined;
  #max: Uint8Array | undefined;
  /** For a uuid: the bounds in Java's signed (msb, lsb) order, as sign-flipped bytes. */
  #signedMin: Uint8Array | undefined;
  #signedMax: Uint8Array | undefined;

  constructor(uuid: boolean) {
    super();
    this.#uuid = uuid;
  }

  add(data: arrow.Data, from: number, to: number, validity: Validity | undefined): void {
    const width = (data.type as arrow.FixedSizeBinary).byteWidth;
    const bytes = data.values as Uint8Array;
    const [minAt, maxAt] = this.extremes(from, to, validity, (a, b) =>
      compareBytes(bytes, a * width, (a + 1) * width, bytes, b * width, (b + 1) * width),
    );
    if (minAt < 0) return;
    this.#min = pick(this.#min, bytes.slice(minAt * width, (minAt + 1) * width), -1);
    this.#max = pick(this.#max, bytes.slice(maxAt * width, (maxAt + 1) * width), 1);
    if (this.#uuid) this.#addSigned(bytes, from, to, validity);
  }

  /** Java's UUID order: flipping the sign bit of each long turns it into unsigned byte order. */
  #addSigned(bytes: Uint8Array, from: number, to: number, validity: Validity | undefined): void {
    const flipped = new Uint8Array(16);
    for (let i = from; i < to; i++) {
      if (isNull(validity, i)) continue;
      flipped.set(bytes.subarray(i * 16, i * 16 + 16));
      flipped[0]! ^= 0x80;
      flipped[8]! ^= 0x80;
      if (this.#signedMin === undefined || compareBytes(flipped, 0, 16, this.#signedMin, 0, 16) < 0) {
        this.#signedMin = flipped.slice();
      }
      if (this.#signedMax === undefined || compareBytes(flipped, 0, 16, this.#signedMax, 0, 16) > 0) {
        this.#signedMax = flipped.slice();
      }
    }
  }

  #ordersAgree(): boolean {
    if (!this.#uuid) return true;
    const unflip = (b: Uint8Array) => b.map((byte, k) => (k === 0 || k === 8 ? byte ^ 0x80 : byte));
    const same = (a: Uint8Array, b: Uint8Array) => compareBytes(a, 0, 16, b, 0, 16) === 0;
    return same(unflip(this.#signedMin!), this.#min!) && same(unflip(this.#signedMax!), this.#max!);
  }

  lowerBound(): Uint8Array | undefined {
    return this.#min !== undefined && this.#ordersAgree() ? this.#min : undefined;
  }

  upperBound(): Uint8Array | undefined {
    return this.#max !== undefined && this.#ordersAgree() ? this.#max : undefined;
  }
}

class DecimalStats extends BigIntStats {
  add(data: arrow.Data, from: number, to: number, validity: Validity | undefined): void {
    const words = data.values as Uint32Array;
    const [minAt, maxAt] = this.extremes(from, to, validity, (a, b) => compare128(words, a, b));
    if (minAt >= 0) this.merge(read128(words, minAt), read128(words, maxAt));
  }

  protected encode(value: bigint): Uint8Array {
    return encodeDecimal(value);
  }
}

/** Signed order of two 128-bit little-endian values: the top word signed, the others unsigned. */
function compare128(words: Uint32Array, a: number, b: number): number {
  const top = (words[4 * a + 3]! | 0) - (words[4 * b + 3]! | 0);
  if (top !== 0) return top;
  for (let k = 2; k >= 0; k--) {
    const d = words[4 * a + k]! - words[4 * b + k]!;
    if (d !== 0) return d;
  }
  return 0;
}

function read128(words: Uint32Array, i: number): bigint {
  let value = BigInt(words[4 * i + 3]! | 0);
  for (let k = 2; k >= 0; k--) value = (value << 32n) | BigInt(words[4 * i + k]!);
  return value;
}
