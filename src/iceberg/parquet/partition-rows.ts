// The partition tuple of every row of an Arrow table under a partition spec, and the rows of
// each tuple (spec "Partitioning": every row of a data file has the same partition values).
// Each partition field is evaluated over its source column's buffers at once, most transforms
// without an object per row: a bucket hashes a long's two 32-bit halves or a string's UTF-8
// bytes where they lie, time transforms read microseconds as doubles (exact below 2^53). Every
// field's distinct results get small codes; rows are grouped by their codes, and each group's
// row indices, in table order, come out as one Uint32Array. A sliced column's values and offsets
// start at its first row already; only validity and boolean bits are read at its offset.
import type * as arrow from "apache-arrow";
import { IcebergError } from "../errors.ts";
import type { PartitionValues } from "../spec/manifest.ts";
import { hashBytes, hashInt, hashLongHalves } from "../spec/murmur3.ts";
import type { PartitionField, PartitionSpec } from "../spec/partition-spec.ts";
import type { Schema } from "../spec/schema.ts";
import { bytesToUuid, type SingleValue } from "../spec/single-value.ts";
import {
  applyTransform,
  bucketOf,
  daysFromMicros,
  hoursFromMicros,
  monthsFromDays,
  transformApplies,
  truncatedUtf8Length,
  yearsFromDays,
} from "../spec/transform.ts";
import { isPrimitive, type PrimitiveType, typeToString } from "../spec/types.ts";

export interface PartitionedRows {
  /** One per partition tuple, in the order of their first row. */
  partitions: PartitionValues[];
  /** The row indices of each tuple, ascending. */
  rows: Uint32Array[];
}

export function partitionRows(spec: PartitionSpec, schema: Schema, table: arrow.Table): PartitionedRows {
  const count = table.numRows;
  if (spec.fields.length === 0 || count === 0) {
    return { partitions: count === 0 ? [] : [new Map()], rows: count === 0 ? [] : [identityRows(count)] };
  }
  if (table.batches.length !== 1)
    throw new RangeError(`partitionRows needs one record batch, got ${table.batches.length}`);
  const batch = table.batches[0]!.data;
  let groups = new Int32Array(count);
  let groupValues: SingleValue[][] = [[]];
  for (const field of spec.fields) {
    const index = schema.fields.findIndex((f) => f.id === field.sourceId);
    const source = schema.fields[index];
    if (!source) {
      throw new IcebergError(
        "unsupported",
        `partition field ${field.name}: its source field ${field.sourceId} is not a top-level column; floe partitions by top-level columns only`,
      );
    }
    if (!isPrimitive(source.type) || !transformApplies(field.transform, source.type)) {
      throw new IcebergError(
        "validation",
        `partition field ${field.name}: ${field.transform.kind} does not apply to column ${source.name} of type ${typeToString(source.type)}`,
      );
    }
    const { codes, values } = evaluateField(field, source.type, batch.children[index]!, count);
    // Combine the groups so far with this field's codes: (group, code) -> the next group.
    const width = values.length;
    const next = new Map<number, number>();
    const nextValues: SingleValue[][] = [];
    const combined = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const key = groups[i]! * width + codes[i]!;
      let group = next.get(key);
      if (group === undefined) {
        group = nextValues.length;
        next.set(key, group);
        nextValues.push([...groupValues[groups[i]!]!, values[codes[i]!]!]);
      }
      combined[i] = group;
    }
    groups = combined;
    groupValues = nextValues;
  }
  // Counting sort of the row indices by group: each group's rows stay in table order.
  const sizes = new Uint32Array(groupValues.length);
  for (let i = 0; i < count; i++) sizes[groups[i]!]!++;
  const rows = [...sizes].map((size) => new Uint32Array(size));
  const filled = new Uint32Array(groupValues.length);
  for (let i = 0; i < count; i++) {
    const g = groups[i]!;
    rows[g]![filled[g]!++] = i;
  }
  const partitions = groupValues.map(
    (values) => new Map(spec.fields.map((f, k) => [f.fieldId, values[k] ?? null] as const)) as PartitionValues,
  );
  return { partitions, rows };
}

function identityRows(count: number): Uint32Array {
  const rows = new Uint32Array(count);
  for (let i = 0; i < count; i++) rows[i] = i;
  return rows;
}

/** Null in a field's value list: a SingleValue slot holding null, for a null source value. */
const NULL = null as unknown as SingleValue;

/** Distinct results of a field get codes 0, 1, ...: codes per row, and the value of each code. */
class Codes {
  readonly codes: Int32Array;
  readonly values: SingleValue[] = [];
  readonly #byKey = new Map<unknown, number>();

  constructor(count: number) {
    this.codes = new Int32Array(count);
  }

  /** Row i's result is `value`, told apart from others by `key` (a primitive: Map keys compare by value). */
  set(i: number, key: unknown, value: SingleValue | null): void {
    let code = this.#byKey.get(key);
    if (code === undefined) {
      code = this.values.length;
      this.#byKey.set(key, code);
      this.values.push(value ?? NULL);
    }
    this.codes[i] = code;
  }
}

/** A key no value of any type shares. */
const NULL_KEY = Symbol("null");

function evaluateField(field: PartitionField, type: PrimitiveType, data: arrow.Data, count: number): Codes {
  const out = new Codes(count);
  const valid = validity(data);
  const t = field.transform;
  const offset = data.offset;
  if (t.kind === "void") {
    for (let i = 0; i < count; i++) out.set(i, NULL_KEY, null);
    return out;
  }
  const kind = typeof type === "object" ? type.kind : type;
  if (kind === "int" || kind === "date") {
    const values = data.values as Int32Array;
    for (let i = 0; i < count; i++) {
      if (!valid(i)) out.set(i, NULL_KEY, null);
      else {
        const v = values[i]!;
        const r =
          t.kind === "bucket"
            ? bucketOf(hashInt(v), t.buckets)
            : t.kind === "identity" || t.kind === "day"
              ? v
              : t.kind === "year"
                ? yearsFromDays(v)
                : t.kind === "month"
                  ? monthsFromDays(v)
                  : (applyTransform(t, type, v) as number);
        out.set(i, r, r);
      }
    }
    return out;
  }
  if (kind === "long" || kind === "time" || kind.startsWith("timestamp")) {
    const halves = new Int32Array(
      (data.values as BigInt64Array).buffer,
      (data.values as BigInt64Array).byteOffset,
      (data.values as BigInt64Array).length * 2,
    );
    const nanos = kind.endsWith("_ns");
    const timeTransform = t.kind === "year" || t.kind === "month" || t.kind === "day" || t.kind === "hour";
    for (let i = 0; i < count; i++) {
      if (!valid(i)) {
        out.set(i, NULL_KEY, null);
        continue;
      }
      const low = halves[2 * i]!;
      const high = halves[2 * i + 1]!;
      if (t.kind === "bucket" && !nanos) {
        const r = bucketOf(hashLongHalves(low, high), t.buckets);
        out.set(i, r, r);
      } else if (timeTransform && !nanos && Math.abs(high) < 0x200000) {
        // |value| < 2^53: the long is exactly high * 2^32 + low (unsigned).
        const micros = high * 0x100000000 + (low >>> 0);
        const r =
          t.kind === "hour"
            ? hoursFromMicros(micros)
            : t.kind === "day"
              ? daysFromMicros(micros)
              : t.kind === "month"
                ? monthsFromDays(daysFromMicros(micros))
                : yearsFromDays(daysFromMicros(micros));
        out.set(i, r, r);
      } else {
        const r = applyTransform(t, type, (data.values as BigInt64Array)[i]!)!;
        out.set(i, r, r);
      }
    }
    return out;
  }
  if (kind === "string" || kind === "binary") {
    const offsets = data.valueOffsets as Int32Array;
    const bytes = data.values as Uint8Array;
    const isString = kind === "string";
    for (let i = 0; i < count; i++) {
      if (!valid(i)) {
        out.set(i, NULL_KEY, null);
        continue;
      }
      const from = offsets[i]!;
      let to = offsets[i + 1]!;
      if (t.kind === "bucket") {
        const r = bucketOf(hashBytes(bytes, from, to), t.buckets);
        out.set(i, r, r);
        continue;
      }
      if (t.kind === "truncate")
        to = isString ? from + truncatedUtf8Length(bytes, from, to, t.width) : Math.min(to, from + t.width);
      if (isString) {
        const s = utf8.decode(bytes.subarray(from, to));
        out.set(i, s, s);
      } else {
        const key = latin1.decode(bytes.subarray(from, to));
        out.set(i, key, bytes.slice(from, to));
      }
    }
    return out;
  }
  if (kind === "fixed" || kind === "uuid") {
    const bytes = data.values as Uint8Array;
    const width = data.stride;
    for (let i = 0; i < count; i++) {
      if (!valid(i)) {
        out.set(i, NULL_KEY, null);
        continue;
      }
      const from = i * width;
      if (t.kind === "bucket") {
        const r = bucketOf(hashBytes(bytes, from, from + width), t.buckets);
        out.set(i, r, r);
      } else {
        const value = bytes.slice(from, from + width);
        out.set(i, latin1.decode(value), kind === "uuid" ? bytesToUuid(value) : value);
      }
    }
    return out;
  }
  if (kind === "decimal") {
    const words = data.values as Uint32Array;
    for (let i = 0; i < count; i++) {
      if (!valid(i)) {
        out.set(i, NULL_KEY, null);
        continue;
      }
      // 128-bit two's complement, little-endian 32-bit words.
      const w = 4 * i;
      const unscaled = BigInt.asIntN(
        128,
        BigInt(words[w]!) |
          (BigInt(words[w + 1]!) << 32n) |
          (BigInt(words[w + 2]!) << 64n) |
          (BigInt(words[w + 3]!) << 96n),
      );
      const r = applyTransform(t, type, unscaled)!;
      out.set(i, r, r);
    }
    return out;
  }
  if (kind === "boolean") {
    const bits = data.values as Uint8Array;
    for (let i = 0; i < count; i++) {
      const bit = offset + i;
      const v = valid(i) ? ((bits[bit >> 3]! >> (bit & 7)) & 1) === 1 : null;
      out.set(i, v ?? NULL_KEY, v);
    }
    return out;
  }
  // float, double (identity only): -0 and 0 are two partitions (Map keys would merge them).
  const values = data.values as Float64Array;
  for (let i = 0; i < count; i++) {
    if (!valid(i)) out.set(i, NULL_KEY, null);
    else {
      const v = values[i]!;
      out.set(i, Object.is(v, -0) ? "-0" : v, v);
    }
  }
  return out;
}

const utf8 = new TextDecoder();
const latin1 = new TextDecoder("latin1");

function validity(data: arrow.Data): (i: number) => boolean {
  const bitmap = data.nullBitmap;
  if (data.nullCount === 0 || !bitmap || bitmap.length === 0) return () => true;
  const offset = data.offset;
  return (i) => ((bitmap[(offset + i) >> 3]! >> ((offset + i) & 7)) & 1) === 1;
}
