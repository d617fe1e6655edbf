// The columns floe adds to every row, beside the message's own fields.
//
// Place: first. A table floe creates starts with these eight, field ids 1 to 8, and the
// message's fields follow from id 9 in the order they were first seen; columns found later are
// appended after them (Iceberg adds columns at the end). A table created by someone else keeps
// its columns, and the system columns it lacks are added with fresh ids.
//
// All are optional, like every column floe adds: an existing table can only gain optional
// columns, and one rule for all keeps the two cases alike.
//
// The names are reserved: a message with a top-level field of one of these names is a bad
// message (reason "reserved-name") rather than silently shadowed.
//
// `_floe_id` is fixed[16] in a table floe creates: the key hash's 16 bytes (upsert/key-hash.ts),
// stored as Parquet FIXED_LEN_BYTE_ARRAY(16), with no length per value, its bounds the bytes
// themselves (spec Appendix D). A table created with it as a string (32 hex digits, floe's form
// before) keeps it: the table's column type decides which form a row gets, never a default here.
import { fixed, type IcebergType, type NestedField } from "../iceberg/spec/types.ts";

export const KAFKA_KEY = "_kafka_key";
export const KAFKA_PARTITION = "_kafka_partition";
export const KAFKA_OFFSET = "_kafka_offset";
export const KAFKA_TIMESTAMP = "_kafka_timestamp";
export const FLOE_ID = "_floe_id";
export const OP_TYPE = "_op_type";
export const FLOE_TIMESTAMP = "_floe_timestamp";
export const CDC_TIMESTAMP = "_cdc_timestamp";

/**
 * How a `_floe_id` column of `type` holds a key hash: its 16 bytes (fixed[16], what floe creates,
 * or binary) or its 32 lowercase hex digits (string); undefined for a type that cannot hold one.
 */
export type FloeIdForm = "bytes" | "hex";

export function floeIdForm(type: IcebergType): FloeIdForm | undefined {
  if (type === "string") return "hex";
  if (type === "binary" || (typeof type === "object" && type.kind === "fixed" && type.length === 16)) return "bytes";
  return undefined;
}

/** `_op_type`: c for a key seen for the first time, u for a key the table already holds, d for a delete. */
export type OpType = "c" | "u" | "d";

export const SYSTEM_COLUMNS: readonly NestedField[] = Object.freeze([
  column(1, KAFKA_KEY, "string", "base64 of the Kafka message key bytes; null when the message has no key"),
  column(2, KAFKA_PARTITION, "int", "Kafka partition of the message"),
  column(3, KAFKA_OFFSET, "long", "Kafka offset of the message in its partition"),
  column(4, KAFKA_TIMESTAMP, "timestamptz", "Kafka message timestamp (CreateTime or LogAppendTime)"),
  column(
    5,
    FLOE_ID,
    Object.freeze(fixed(16)),
    "hash of the dedup key values (the first 16 bytes of SHA-256 over their JSON array); null when the stream has no dedup keys, and in upsert tables whose dedup keys are all columns",
  ),
  column(6, OP_TYPE, "string", "c: first row of its key, u: a key the table held before, d: a delete"),
  column(7, FLOE_TIMESTAMP, "timestamptz", "when floe wrote the row"),
  column(8, CDC_TIMESTAMP, "timestamptz", "when the change happened at the source: the message timestamp"),
]);

const systemNames: ReadonlySet<string> = new Set(SYSTEM_COLUMNS.map((f) => f.name));

export function isSystemColumn(name: string): boolean {
  return systemNames.has(name);
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".split("");
/** Up to this length a key is encoded in JS: 4x faster than a Buffer round trip for short keys (ids). */
const SHORT_KEY = 48;

/** `_kafka_key`: base64 of the key bytes (key `3` is `Mw==`), null for a message without a key. */
export function kafkaKeyText(key: Uint8Array | null): string | null {
  if (key === null) return null;
  if (key.length > SHORT_KEY) return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString("base64");
  let text = "";
  const whole = key.length - (key.length % 3);
  for (let i = 0; i < whole; i += 3) {
    const bits = (key[i]! << 16) | (key[i + 1]! << 8) | key[i + 2]!;
    text += BASE64[bits >> 18]! + BASE64[(bits >> 12) & 63]! + BASE64[(bits >> 6) & 63]! + BASE64[bits & 63]!;
  }
  if (key.length - whole === 1) {
    const bits = key[whole]! << 16;
    text += `${BASE64[bits >> 18]!}${BASE64[(bits >> 12) & 63]!}==`;
  } else if (key.length - whole === 2) {
    const bits = (key[whole]! << 16) | (key[whole + 1]! << 8);
    text += `${BASE64[bits >> 18]!}${BASE64[(bits >> 12) & 63]!}${BASE64[(bits >> 6) & 63]!}=`;
  }
  return text;
}

/**
 * Microseconds for a timestamptz column from a Kafka timestamp in milliseconds: a number while
 * exact (every instant up to the year 2255), so that a row needs no BigInt.
 */
export function millisToMicros(millis: number | bigint): number | bigint {
  if (typeof millis === "bigint") {
    const small = Number(millis);
    return Number.isSafeInteger(small * 1000) ? small * 1000 : millis * 1000n;
  }
  return Number.isSafeInteger(millis * 1000) ? millis * 1000 : BigInt(millis) * 1000n;
}

function column(id: number, name: string, type: IcebergType, doc: string): NestedField {
  return Object.freeze({ id, name, required: false, type, doc });
}
