// From a JSON value to the value a column stores, in the representation the column builders
// of src/iceberg/parquet take. The row builder calls one converter per value, so each is
// chosen once per column and most are the identity:
//
//   boolean      boolean
//   int          number
//   long         number when a safe integer (nearly always), else bigint: no BigInt per row
//   float/double number (a bigint beyond 2^53 rounds to the nearest double)
//   string       the string; any other value (number, boolean, object, array) as its JSON text
//   timestamptz  microseconds since the epoch: number when safe (years 1685..2255), else bigint
//   struct       an object keyed by field name, each field converted by its own type (spec
//                "Nested Types": a struct is a tuple of typed fields); a field it lacks is null
//   list         an array, each element converted by the element type
//   map          (string keys) a Map from each member's name to its value, converted by the
//                value type (a Map, so that a key named __proto__ is a key like any other)
//
// Converters trust that SchemaInference has seen the value: they convert, they do not check.
// A value of the wrong shape that reaches one is a bug, and the column builder refuses it.

import {
  type IcebergType,
  isPrimitive,
  type ListType,
  type MapType,
  type StructType,
  typeToString,
} from "../iceberg/spec/types.ts";
import { stringifyJson } from "../lib/int64-json.ts";
import type { JsonValue } from "./json-message.ts";
import { timestampMicros } from "./timestamp.ts";

export type ColumnValue =
  | boolean
  | number
  | bigint
  | string
  | null
  | ColumnValue[]
  | { [field: string]: ColumnValue }
  | Map<string, ColumnValue>;

/** Converts one non-null JSON value of a record field to its column's value. */
export type ColumnConverter = (value: JsonValue) => ColumnValue;

/** Whether floe converts JSON values into columns of this type (columnConverter does not throw). */
export function isConvertible(type: IcebergType): boolean {
  if (typeof type === "object" && type.kind === "struct") return type.fields.every((f) => isConvertible(f.type));
  if (typeof type === "object" && type.kind === "list") return isConvertible(type.element);
  if (typeof type === "object" && type.kind === "map") return type.key === "string" && isConvertible(type.value);
  switch (type) {
    case "boolean":
    case "int":
    case "long":
    case "float":
    case "double":
    case "string":
    case "timestamptz":
      return true;
    default:
      return false;
  }
}

export function columnConverter(type: IcebergType): ColumnConverter {
  if (typeof type === "object" && type.kind === "struct") return structConverter(type);
  if (typeof type === "object" && type.kind === "list") return listConverter(type);
  if (typeof type === "object" && type.kind === "map" && type.key === "string") return mapConverter(type);
  if (!isPrimitive(type)) throw new TypeError(`floe does not write JSON values into ${typeToString(type)} columns`);
  switch (type) {
    case "boolean":
    case "int":
    case "long":
      return identity;
    case "float":
    case "double":
      return toDouble;
    case "string":
      return toText;
    case "timestamptz":
      return toMicros;
    default:
      throw new TypeError(`floe does not write JSON values into ${typeToString(type)} columns`);
  }
}

function structConverter(type: StructType): ColumnConverter {
  const fields = type.fields.map((f) => ({ name: f.name, convert: columnConverter(f.type) }));
  return (value) => {
    const record = value as { [field: string]: JsonValue };
    // No prototype: a field named __proto__ is an own property like any other.
    const out: { [field: string]: ColumnValue } = Object.create(null);
    for (const { name, convert } of fields) {
      const item = Object.hasOwn(record, name) ? record[name] : undefined;
      out[name] = item === undefined || item === null ? null : convert(item);
    }
    return out;
  };
}

function listConverter(type: ListType): ColumnConverter {
  const convert = columnConverter(type.element);
  return (value) => (value as JsonValue[]).map((item) => (item === null ? null : convert(item)));
}

function mapConverter(type: MapType): ColumnConverter {
  const convert = columnConverter(type.value);
  return (value) => {
    const entries = value as { [key: string]: JsonValue };
    const out = new Map<string, ColumnValue>();
    for (const key in entries) {
      const item = entries[key]!;
      out.set(key, item === null ? null : convert(item));
    }
    return out;
  };
}

const identity: ColumnConverter = (value) => value as ColumnValue;

const toDouble: ColumnConverter = (value) => (typeof value === "bigint" ? Number(value) : (value as number));

const toText: ColumnConverter = (value) => (typeof value === "string" ? value : jsonText(value));

const toMicros: ColumnConverter = (value) => {
  const micros = typeof value === "string" ? timestampMicros(value) : undefined;
  if (micros === undefined) throw new TypeError(`not a timestamp: ${JSON.stringify(value)}`);
  return micros;
};

/** A nested object or array as JSON text, integers beyond 2^53 written exactly. */
export function jsonText(value: JsonValue): string {
  try {
    return JSON.stringify(value);
  } catch {
    // Only a bigint makes JSON.stringify throw here, and only the rare message that has one.
    return stringifyJson(value);
  }
}
