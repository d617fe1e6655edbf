// Kafka Connect and Debezium logical types, as Debezium's JsonConverter writes them with
// `schemas.enable=true`: each field of a struct's schema names its logical type (`name`), and
// the value is the physical form (days, epoch units, base64 bytes). This turns the physical
// form into the JSON value schema inference maps to the right column, so a Debezium Date lands
// as a date text and a MicroTimestamp as a timestamptz, not as longs:
//
//   io.debezium.time.Date, o.a.k.connect.data.Date        days         -> "YYYY-MM-DD" (string)
//   io.debezium.time.Timestamp, o.a.k.connect.data.Timestamp  ms       -> RFC 3339 UTC (timestamptz)
//   io.debezium.time.MicroTimestamp                        µs           -> RFC 3339 UTC (timestamptz)
//   io.debezium.time.NanoTimestamp                         ns           -> RFC 3339 UTC, µs (timestamptz)
//   io.debezium.time.ZonedTimestamp                        RFC 3339     -> as written (timestamptz)
//   io.debezium.time.Time, MicroTime, NanoTime, o.a.k.connect.data.Time -> "hh:mm:ss.ffffff" (string)
//   o.a.k.connect.data.Decimal      base64 two's complement + scale     -> exact decimal text (string)
//   io.debezium.data.VariableScaleDecimal  {scale, value: base64}       -> exact decimal text (string)
//   io.debezium.data.Json, Uuid, Enum, EnumSet, Xml, ZonedTime          -> the string as written
//
// Timestamp, MicroTimestamp and NanoTimestamp are the source's local time without a zone (a
// Postgres `timestamp`); they land as timestamptz read as UTC, the instant Debezium encoded.
// Decimals are text because floe's JSON columns have no decimal type: a double would round money.
import type { JsonRecord, JsonValue } from "./json-message.ts";

/** The part of a Connect schema this reads: a struct's fields, each with its logical type name. */
interface ConnectField {
  field?: unknown;
  name?: unknown;
  type?: unknown;
  fields?: unknown;
  parameters?: unknown;
}

/** The Connect schema of field `name` of a struct schema, if it is a struct with fields. */
export function structField(schema: unknown, name: string): unknown {
  const fields = (schema as ConnectField | null)?.fields;
  if (!Array.isArray(fields)) return undefined;
  for (const f of fields as ConnectField[]) if (f?.field === name) return f;
  return undefined;
}

/**
 * Rewrites, in place, the fields of `record` whose Connect schema (`struct`, the record's struct
 * schema) names a logical type, into the value floe's schema inference maps to its column. A value
 * that does not have the physical form its type says is left as it is: inference then judges it.
 */
export function applyLogicalTypes(record: JsonRecord, struct: unknown): void {
  const fields = (struct as ConnectField | null)?.fields;
  if (!Array.isArray(fields)) return;
  for (const f of fields as ConnectField[]) {
    const logical = f?.name;
    if (typeof logical !== "string" || typeof f.field !== "string") continue;
    const value = record[f.field];
    if (value === undefined || value === null) continue;
    const converted = logicalValue(logical, value, f.parameters);
    if (converted !== undefined) record[f.field] = converted;
  }
}

/** The value of a logical type; undefined to keep the value as written. */
export function logicalValue(logical: string, value: JsonValue, parameters?: unknown): JsonValue | undefined {
  switch (logical) {
    case "io.debezium.time.Date":
    case "org.apache.kafka.connect.data.Date":
      return isInteger(value) ? dateText(Number(value)) : undefined;
    case "io.debezium.time.Timestamp":
    case "org.apache.kafka.connect.data.Timestamp":
      return isInteger(value) ? instantText(BigInt(value) * 1000n) : undefined;
    case "io.debezium.time.MicroTimestamp":
      return isInteger(value) ? instantText(BigInt(value)) : undefined;
    case "io.debezium.time.NanoTimestamp":
      return isInteger(value) ? instantText(floorDiv(BigInt(value), 1000n)) : undefined;
    case "io.debezium.time.Time":
    case "org.apache.kafka.connect.data.Time":
      return isInteger(value) ? timeText(BigInt(value) * 1000n) : undefined;
    case "io.debezium.time.MicroTime":
      return isInteger(value) ? timeText(BigInt(value)) : undefined;
    case "io.debezium.time.NanoTime":
      return isInteger(value) ? timeText(BigInt(value) / 1000n) : undefined;
    case "org.apache.kafka.connect.data.Decimal": {
      const scale = Number((parameters as Record<string, unknown> | null)?.scale ?? 0);
      return typeof value === "string" && Number.isInteger(scale) ? decimalText(value, scale) : undefined;
    }
    case "io.debezium.data.VariableScaleDecimal": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
      const { scale, value: bytes } = value as { scale?: JsonValue; value?: JsonValue };
      return typeof bytes === "string" && isInteger(scale ?? null) ? decimalText(bytes, Number(scale)) : undefined;
    }
    default:
      return undefined;
  }
}

function isInteger(value: JsonValue): value is number | bigint {
  return typeof value === "bigint" || (typeof value === "number" && Number.isInteger(value));
}

const MILLIS_PER_DAY = 86_400_000;

function dateText(days: number): string {
  return new Date(days * MILLIS_PER_DAY).toISOString().slice(0, 10);
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** RFC 3339 in UTC with microseconds, which timestamp.ts reads as a timestamptz. */
function instantText(micros: bigint): string {
  const millis = floorDiv(micros, 1000n);
  const iso = new Date(Number(millis)).toISOString(); // 2024-01-05T10:00:00.123Z
  const subMillis = Number(micros - millis * 1000n);
  return `${iso.slice(0, 23)}${String(subMillis).padStart(3, "0")}Z`;
}

function timeText(micros: bigint): string {
  const day = 86_400_000_000n;
  const m = ((micros % day) + day) % day;
  const seconds = m / 1_000_000n;
  const hh = String(seconds / 3600n).padStart(2, "0");
  const mm = String((seconds / 60n) % 60n).padStart(2, "0");
  const ss = String(seconds % 60n).padStart(2, "0");
  return `${hh}:${mm}:${ss}.${String(m % 1_000_000n).padStart(6, "0")}`;
}

/** The exact decimal text of a big-endian two's complement unscaled value (base64) and its scale. */
export function decimalText(base64: string, scale: number): string | undefined {
  const bytes = Buffer.from(base64, "base64");
  if (bytes.length === 0) return undefined;
  return unscaledText(unscaledOf(bytes), scale);
}

/** A big-endian two's complement integer: the unscaled value of Connect's, Avro's and Confluent's Protobuf decimals. */
export function unscaledOf(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return bytes[0]! & 0x80 ? value - (1n << BigInt(bytes.length * 8)) : value;
}

/** An unscaled decimal as its exact text: -1725 with scale 2 is "-17.25", 5 with scale -1 "50". */
export function unscaledText(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  let digits = (negative ? -unscaled : unscaled).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, "0");
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  } else if (scale < 0) {
    digits += "0".repeat(-scale);
  }
  return negative ? `-${digits}` : digits;
}
