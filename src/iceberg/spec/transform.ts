// Partition transforms (spec "Partition Transforms", "Bucket Transform Details", "Truncate
// Transform Details"): which source types each applies to, its result for one value, and the
// partition field name Java gives it. Every transform maps null to null.
//   identity      the value                              any primitive
//   bucket[N]     (murmur3(v) & Integer.MAX_VALUE) % N     int long decimal date time timestamp(tz)(_ns) string uuid fixed binary
//   truncate[W]   int/long/decimal (unscaled): v - (((v % W) + W) % W); string: the first W code
//                 points; binary: the first W bytes
//   year, month   years / months since 1970-01-01          date timestamp(tz)(_ns)
//   day           days since 1970-01-01, of type date      date timestamp(tz)(_ns)
//   hour          hours since 1970-01-01 00:00             timestamp(tz)(_ns)
//   void          null                                   any
// Time units are floored, never truncated toward zero, so that 1969-12-31T23:59 is day -1 (as
// Java's DateTimeUtil does). Nanosecond timestamps hash as their microseconds (Appendix B, note 3).
// Values are those of single-value.ts: number for int/date, bigint for the 64-bit types and for
// a decimal's unscaled value, string, the uuid's text form, Uint8Array for fixed and binary.
import { hashBytes, hashInt, hashLong } from "./murmur3.ts";
import type { Transform } from "./partition-spec.ts";
import { encodeDecimal, type SingleValue, uuidToBytes } from "./single-value.ts";
import { type IcebergType, isPrimitive, type PrimitiveType } from "./types.ts";

const TIMESTAMPS = new Set<IcebergType>(["timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"]);
const BUCKETABLE = new Set<IcebergType>(["int", "long", "date", "time", "string", "uuid", "binary", ...TIMESTAMPS]);

/** Whether the spec allows `transform` on a source column of `type` (only primitives are partition sources). */
export function transformApplies(transform: Transform, type: IcebergType): boolean {
  if (!isPrimitive(type)) return false;
  const kind = typeof type === "object" ? type.kind : type;
  switch (transform.kind) {
    case "identity":
    case "void":
      return true;
    case "bucket":
      return BUCKETABLE.has(type) || kind === "decimal" || kind === "fixed";
    case "truncate":
      return type === "int" || type === "long" || type === "string" || type === "binary" || kind === "decimal";
    case "year":
    case "month":
    case "day":
      return type === "date" || TIMESTAMPS.has(type);
    case "hour":
      return TIMESTAMPS.has(type);
  }
}

/**
 * The name Java gives a partition field: the source name, or it with the transform's suffix.
 * A table's first spec is named as PartitionSpec.Builder names it (id_bucket, name_trunc); a
 * field added by evolution as BaseUpdatePartitionSpec does, with the argument (id_bucket_16,
 * name_trunc_4), so that it never takes the name of an earlier spec's field of another width:
 * readers that union the partition types of all specs (Java's files tables) need distinct names.
 */
export function partitionFieldName(sourceName: string, transform: Transform, evolution = false): string {
  switch (transform.kind) {
    case "identity":
      return sourceName;
    case "bucket":
      return evolution ? `${sourceName}_bucket_${transform.buckets}` : `${sourceName}_bucket`;
    case "truncate":
      return evolution ? `${sourceName}_trunc_${transform.width}` : `${sourceName}_trunc`;
    case "void":
      return `${sourceName}_null`;
    default:
      return `${sourceName}_${transform.kind}`;
  }
}

/** The transform of one value of a source column of `type`; null for null. */
export function applyTransform(
  transform: Transform,
  type: PrimitiveType,
  value: SingleValue | null,
): SingleValue | null {
  if (value === null || transform.kind === "void") return null;
  switch (transform.kind) {
    case "identity":
      return value;
    case "bucket":
      return bucketOf(bucketHash(type, value), transform.buckets);
    case "truncate":
      return truncateValue(type, value, transform.width);
    default: {
      const micros = type === "date" ? undefined : toMicros(type, value as bigint);
      const days = micros === undefined ? (value as number) : undefined;
      switch (transform.kind) {
        case "year":
          return days !== undefined ? yearsFromDays(days) : yearsFromDays(daysFromMicros(micros!));
        case "month":
          return days !== undefined ? monthsFromDays(days) : monthsFromDays(daysFromMicros(micros!));
        case "day":
          return days !== undefined ? days : daysFromMicros(micros!);
        case "hour":
          return hoursFromMicros(micros!);
      }
    }
  }
}

/** Spec: the bucket of a hash, its sign bit discarded. */
export function bucketOf(hash: number, buckets: number): number {
  return (hash & 0x7fffffff) % buckets;
}

/** Appendix B: the hash of one value of a bucketable type. */
export function bucketHash(type: PrimitiveType, value: SingleValue): number {
  if (typeof type === "object") {
    return type.kind === "decimal" ? hashBytes(encodeDecimal(value as bigint)) : hashBytes(value as Uint8Array);
  }
  switch (type) {
    case "int":
    case "date":
      return hashInt(value as number);
    case "long":
    case "time":
    case "timestamp":
    case "timestamptz":
      return hashLong(BigInt(value as bigint | number));
    case "timestamp_ns":
    case "timestamptz_ns":
      return hashLong(floorDivBig(value as bigint, 1000n));
    case "string":
      return hashBytes(utf8.encode(value as string));
    case "uuid":
      return hashBytes(typeof value === "string" ? uuidToBytes(value) : (value as Uint8Array));
    case "binary":
      return hashBytes(value as Uint8Array);
    default:
      throw new TypeError(`bucket does not apply to ${type}`);
  }
}

const utf8 = new TextEncoder();

function truncateValue(type: PrimitiveType, value: SingleValue, width: number): SingleValue {
  if (type === "int") return truncateInt(value as number, width);
  if (type === "string") return truncateString(value as string, width);
  if (type === "binary") return (value as Uint8Array).subarray(0, width);
  // long, and a decimal's unscaled value: the width applies at the column's scale (spec note 2).
  return truncateLong(value as bigint, BigInt(width));
}

export function truncateInt(value: number, width: number): number {
  return value - (((value % width) + width) % width);
}

export function truncateLong(value: bigint, width: bigint): bigint {
  return value - (((value % width) + width) % width);
}

/** Spec note 3: at most `width` code points, a valid string (a surrogate pair is one code point). */
export function truncateString(value: string, width: number): string {
  let end = 0;
  for (let points = 0; points < width && end < value.length; points++) {
    const code = value.charCodeAt(end);
    end += code >= 0xd800 && code <= 0xdbff && end + 1 < value.length ? 2 : 1;
  }
  return end >= value.length ? value : value.slice(0, end);
}

/** The number of leading bytes of UTF-8 `bytes` [from, to) that hold at most `width` code points. */
export function truncatedUtf8Length(bytes: Uint8Array, from: number, to: number, width: number): number {
  let points = 0;
  for (let i = from; i < to; i++) {
    // A code point starts at every byte that is not a continuation byte (10xxxxxx).
    if ((bytes[i]! & 0xc0) !== 0x80) {
      if (points === width) return i - from;
      points++;
    }
  }
  return to - from;
}

const MICROS_PER_DAY = 86_400_000_000;
const MICROS_PER_HOUR = 3_600_000_000;

function toMicros(type: PrimitiveType, value: bigint): bigint {
  return type === "timestamp_ns" || type === "timestamptz_ns" ? floorDivBig(value, 1000n) : value;
}

function floorDivBig(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

/** floor(a / b) of a 64-bit value and a positive divisor, exact whatever the magnitude. */
export function floorDivLong(a: bigint | number, b: number): number {
  if (typeof a === "number" || (a <= 9007199254740991n && a >= -9007199254740991n)) {
    const n = Number(a);
    let q = Math.floor(n / b);
    // The quotient in doubles can round across an integer: products below 2^53 are exact.
    if (q * b > n) q--;
    else if ((q + 1) * b <= n) q++;
    return q;
  }
  return Number(floorDivBig(a, BigInt(b)));
}

export function daysFromMicros(micros: bigint | number): number {
  return floorDivLong(micros, MICROS_PER_DAY);
}

export function hoursFromMicros(micros: bigint | number): number {
  return floorDivLong(micros, MICROS_PER_HOUR);
}

/** The civil year and month (1-12) of a day since 1970-01-01, proleptic Gregorian (H. Hinnant's algorithm). */
function civilFromDays(days: number): { year: number; month: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month };
}

export function yearsFromDays(days: number): number {
  return civilFromDays(days).year - 1970;
}

export function monthsFromDays(days: number): number {
  const { year, month } = civilFromDays(days);
  return (year - 1970) * 12 + month - 1;
}
