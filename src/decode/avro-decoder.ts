// An Avro value schema from a registry -> the table's columns, and its binary datums -> records
// of column values (typed-record.ts). The top-level schema must be a record; each field is a
// column, optional in the table whatever the schema says (floe only adds optional columns):
//
//   boolean int long float double string      the same Iceberg type
//   bytes                                     binary; fixed(n): fixed[n]
//   ["null", T] (either order)                T's column; null is a null
//   int date                                  date
//   int time-millis, long time-micros         time (microseconds)
//   long timestamp-millis / -micros           timestamptz
//   long local-timestamp-millis / -micros     timestamp
//   bytes/fixed decimal(p, s)                 decimal(p, s) (p up to 38, else string: the digits)
//   string uuid, fixed(16) uuid               uuid
//   enum                                      string: the symbol
//   record                                    struct: one optional field per field, mapped so
//                                             (spec "Nested Types"; ids given by the table)
//   array                                     list: optional elements of the items' type
//   map                                       map<string, V>: optional values of the values' type
//   a union of several non-null types         string: the value's JSON text (avsc's branch
//                                             value; bytes as base64). A struct with a field per
//                                             branch, as Spark's from_avro makes, would name
//                                             fields after types (member0, member1) that no
//                                             query knows; the JSON text says which branch
//   a record inside itself (recursion)        string: the JSON text of the inner record, since
//                                             a table's type is finite
//   a record without fields                   string: its JSON text ({}), Parquet has no empty group
//
// Nested fields map as top-level ones do; all are optional. A column declared json in the job
// file (columns: {x: json}), or a table's string column that a schema makes nested (a table
// from before nested types), holds the field's JSON text instead (decode's `text`).
//
// Field docs become column docs. Named types may come from the schema's references: their
// schemas are parsed first, into the same registry of names.
//
// Kafka Connect's AvroConverter names a field's Connect type in `connect.name` (Debezium's time
// types have no Avro logical type): io.debezium.time.Date is a date, Timestamp, MicroTimestamp
// and NanoTimestamp a timestamp (the source's local time), ZonedTimestamp a timestamptz, Time,
// MicroTime and NanoTime a time, io.debezium.data.Uuid a uuid, VariableScaleDecimal the exact
// decimal as text.
//
// A change stream's schema is an envelope (Debezium's {before, after, source, op, ts_ms}):
// changes(envelope) decodes its datums into the row image, whose columns are the after record's
// fields (cdc-envelope.ts takes the envelope apart).
import { Buffer } from "node:buffer";
import avsc from "avsc";
import { bigintLongHook } from "../iceberg/spec/avro-long.ts";
import { decimal, fixed, type IcebergType, type NestedField } from "../iceberg/spec/types.ts";
import { CDC_POSITION, type CdcEnvelope, type FieldPath, readChange } from "./cdc-envelope.ts";
import { jsonText } from "./column-value.ts";
import { unscaledOf, unscaledText } from "./connect-logical-types.ts";
import type { JsonValue } from "./json-message.ts";
import { timestampMicros } from "./timestamp.ts";
import {
  type ChangeDecoder,
  changeDecoders,
  exactInteger,
  NO_TEXT_COLUMNS,
  type SchemaColumn,
  type SchemaDecoder,
  type TextColumns,
  type TypedRecord,
  type TypedValue,
  textColumnsOf,
  UnsupportedSchemaError,
} from "./typed-record.ts";

type Convert = (value: unknown) => TypedValue;

interface Mapped {
  readonly type: IcebergType;
  readonly convert: Convert;
}

/** A field's column: its value converter, and the converter to its JSON text when declared json. */
interface FieldConverter {
  readonly name: string;
  readonly convert: Convert;
}

/** The record schemas being mapped, from the top down: a record met again inside itself is a recursion. */
type Visiting = ReadonlySet<object>;

const MAX_DECIMAL_PRECISION = 38;

type AvroJson = string | { [key: string]: unknown } | AvroJson[];

/**
 * The decoder of an Avro schema (its JSON text as the registry gives it), with the schemas it
 * references (their JSON texts, in dependency order). Throws UnsupportedSchemaError when the
 * schema is no record, or does not parse.
 */
export function avroDecoder(schemaText: string, references: readonly string[] = []): SchemaDecoder {
  const registry: Record<string, avsc.Type> = {};
  const names = new Map<string, AvroJson>();
  let type: avsc.Type;
  let schema: AvroJson;
  try {
    for (const reference of references) {
      const json = JSON.parse(reference) as AvroJson;
      collectNames(json, undefined, names);
      parse(json, registry);
    }
    schema = JSON.parse(schemaText) as AvroJson;
    collectNames(schema, undefined, names);
    type = parse(schema, registry);
  } catch (error) {
    throw new UnsupportedSchemaError(`the Avro schema does not parse: ${(error as Error).message}`);
  }
  const resolved = resolve(schema, undefined, names);
  if (typeof resolved !== "object" || Array.isArray(resolved) || resolved.type !== "record") {
    throw new UnsupportedSchemaError("the Avro schema is not a record: floe makes columns of a record's fields");
  }
  const namespace = namespaceOf(resolved, undefined);
  const { columns, converters } = recordColumns(resolved, namespace, names);
  const textColumns = new WeakMap<TextColumns, readonly SchemaColumn[]>();
  return {
    columns,
    columnsOf: () => columns,
    changes: changeDecoders((envelope, text) => changeDecoder(type, resolved, namespace, names, envelope, text)),
    decode(payload, _messageIndexes, text = NO_TEXT_COLUMNS) {
      let value: Record<string, unknown>;
      try {
        value = type.fromBuffer(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)) as Record<
          string,
          unknown
        >;
      } catch (error) {
        return { problem: `the Avro datum does not decode with its schema: ${(error as Error).message}` };
      }
      return {
        record: convertFields(value, converters, {}, text),
        columns: textColumnsOf(columns, text, textColumns),
      };
    },
  };
}

/**
 * Sets each named field of `source` into `record` as its column's value (null when absent), the
 * fields named in `text` as their JSON text.
 */
function convertFields(
  source: Record<string, unknown>,
  fields: readonly FieldConverter[],
  record: TypedRecord,
  text: TextColumns = NO_TEXT_COLUMNS,
): TypedRecord {
  for (const { name, convert } of fields) {
    const field = source[name];
    record[name] =
      field === null || field === undefined
        ? null
        : text.size > 0 && text.has(name)
          ? toJsonText(field)
          : convert(field);
  }
  return record;
}

/** The columns of a record schema's fields, and their converters. */
function recordColumns(
  record: { [key: string]: unknown },
  namespace: string | undefined,
  names: Map<string, AvroJson>,
): { columns: SchemaColumn[]; converters: FieldConverter[] } {
  const fields = (record.fields ?? []) as { name: string; type: AvroJson; doc?: string }[];
  const columns: SchemaColumn[] = [];
  const converters: FieldConverter[] = [];
  const visiting = new Set<object>([record]);
  for (const field of fields) {
    const mapped = mapType(field.type, namespace, names, visiting);
    if (mapped === undefined) continue;
    columns.push({ name: field.name, type: mapped.type, ...(typeof field.doc === "string" ? { doc: field.doc } : {}) });
    converters.push({ name: field.name, convert: mapped.convert });
  }
  return { columns, converters };
}

/** A record inside a record: a struct of its fields, or its JSON text when it has none. */
function structOf(
  record: { [key: string]: unknown },
  namespace: string | undefined,
  names: Map<string, AvroJson>,
  visiting: Visiting,
): Mapped {
  // The record's own fields resolve names in its namespace.
  const inner = namespaceOf(record, namespace);
  const within = new Set(visiting).add(record);
  const fields: NestedField[] = [];
  const converters: FieldConverter[] = [];
  for (const field of (record.fields ?? []) as { name: string; type: AvroJson; doc?: string }[]) {
    const mapped = mapType(field.type, inner, names, within);
    if (mapped === undefined) continue;
    fields.push({
      id: 0,
      name: field.name,
      required: false,
      type: mapped.type,
      ...(typeof field.doc === "string" ? { doc: field.doc } : {}),
    });
    converters.push({ name: field.name, convert: mapped.convert });
  }
  if (fields.length === 0) return { type: "string", convert: toJsonText };
  return {
    type: { kind: "struct", fields },
    convert: (value) => {
      // No prototype: a field named __proto__ is an own property like any other.
      const out: { [field: string]: TypedValue } = Object.create(null);
      const source = value as Record<string, unknown>;
      for (const { name, convert } of converters) {
        const item = Object.hasOwn(source, name) ? source[name] : undefined;
        out[name] = item === null || item === undefined ? null : convert(item);
      }
      return out;
    },
  };
}

/** The decoder of a change stream's envelope schema: the row's columns are the after record's fields. */
function changeDecoder(
  type: avsc.Type,
  envelopeSchema: { [key: string]: unknown },
  namespace: string | undefined,
  names: Map<string, AvroJson>,
  envelope: CdcEnvelope,
  text: TextColumns,
): ChangeDecoder {
  const after = fieldAt(envelopeSchema, envelope.after, namespace, names);
  const row = after && recordOf(after.schema, after.namespace, names);
  if (row === undefined) {
    throw new UnsupportedSchemaError(
      `the Avro schema has no record field ${envelope.after.join(".")}: it is no change event envelope`,
    );
  }
  const image = recordColumns(row, namespaceOf(row, after!.namespace), names);
  const converters = image.converters;
  const columns = [...textColumnsOf(image.columns, text, new WeakMap())];
  columns.push({ name: CDC_POSITION, type: "string" });
  const metadata = envelope.columns.map(({ column, path }) => {
    const field = fieldAt(envelopeSchema, path, namespace, names);
    const mapped = field && mapType(field.schema, field.namespace, names, new Set());
    columns.push({ name: column, type: mapped?.type ?? "string" });
    return { name: column, convert: mapped?.convert ?? toJsonText };
  });
  return {
    columns,
    decode(payload) {
      let value: Record<string, unknown>;
      try {
        value = type.fromBuffer(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)) as Record<
          string,
          unknown
        >;
      } catch (error) {
        return {
          problem: `the Avro datum does not decode with its schema: ${(error as Error).message}`,
          envelope: false,
        };
      }
      const change = readChange(value as never, envelope);
      if ("problem" in change) return { problem: change.problem, envelope: true };
      const image = change.image as Record<string, unknown>;
      const record = convertFields(image, converters, {}, text);
      record[CDC_POSITION] = change.position;
      return { record: convertFields(image, metadata, record), change };
    },
  };
}

/** The schema of the field at `path` of a record schema, through records and their null unions. */
function fieldAt(
  record: { [key: string]: unknown },
  path: FieldPath,
  namespace: string | undefined,
  names: Map<string, AvroJson>,
): { schema: AvroJson; namespace: string | undefined } | undefined {
  let current: { [key: string]: unknown } | undefined = record;
  let ns = namespace;
  let found: AvroJson | undefined;
  for (const name of path) {
    if (current === undefined) return undefined;
    const field = ((current.fields ?? []) as { name: string; type: AvroJson }[]).find((f) => f.name === name);
    if (field === undefined) return undefined;
    found = field.type;
    const inner = namespaceOf(current, ns);
    current = recordOf(field.type, inner, names);
    ns = inner;
  }
  return found === undefined ? undefined : { schema: found, namespace: ns };
}

/** The record a field's type is, alone or with null in a union. */
function recordOf(
  schema: AvroJson,
  namespace: string | undefined,
  names: Map<string, AvroJson>,
): { [key: string]: unknown } | undefined {
  const resolved = resolve(schema, namespace, names);
  if (Array.isArray(resolved)) {
    const branches = resolved.filter((b) => b !== "null");
    return branches.length === 1 ? recordOf(branches[0]!, namespace, names) : undefined;
  }
  return typeof resolved === "object" && resolved.type === "record" ? resolved : undefined;
}

function parse(schema: AvroJson, registry: Record<string, avsc.Type>): avsc.Type {
  return avsc.Type.forSchema(schema as avsc.Schema, {
    registry,
    typeHook: bigintLongHook,
    wrapUnions: "auto",
  });
}

const PRIMITIVES = new Set(["null", "boolean", "int", "long", "float", "double", "bytes", "string"]);

/** Named types (record, enum, fixed) by full name, anywhere in the schema. */
function collectNames(schema: AvroJson, namespace: string | undefined, names: Map<string, AvroJson>): void {
  if (Array.isArray(schema)) {
    for (const branch of schema) collectNames(branch, namespace, names);
    return;
  }
  if (typeof schema !== "object") return;
  const kind = schema.type;
  if (kind === "record" || kind === "error" || kind === "enum" || kind === "fixed") {
    const full = fullName(schema, namespace);
    names.set(full, schema);
    const inner = namespaceOf(schema, namespace);
    for (const field of (schema.fields ?? []) as { type: AvroJson }[]) collectNames(field.type, inner, names);
  } else if (kind === "array") {
    collectNames(schema.items as AvroJson, namespace, names);
  } else if (kind === "map") {
    collectNames(schema.values as AvroJson, namespace, names);
  } else if (typeof kind === "object") {
    collectNames(kind as AvroJson, namespace, names);
  }
}

function fullName(schema: { [key: string]: unknown }, namespace: string | undefined): string {
  const name = String(schema.name);
  if (name.includes(".")) return name;
  const ns = typeof schema.namespace === "string" ? schema.namespace : namespace;
  return ns ? `${ns}.${name}` : name;
}

function namespaceOf(schema: { [key: string]: unknown }, namespace: string | undefined): string | undefined {
  const full = fullName(schema, namespace);
  const dot = full.lastIndexOf(".");
  return dot < 0 ? undefined : full.slice(0, dot);
}

/** A reference by name replaced by its definition; `{"type": "int"}` by "int" unless it has a logical type. */
function resolve(schema: AvroJson, namespace: string | undefined, names: Map<string, AvroJson>): AvroJson {
  if (typeof schema === "string") {
    if (PRIMITIVES.has(schema)) return schema;
    const found = names.get(schema) ?? (namespace ? names.get(`${namespace}.${schema}`) : undefined);
    if (found === undefined) throw new UnsupportedSchemaError(`the Avro schema names an unknown type ${schema}`);
    return found;
  }
  if (Array.isArray(schema)) return schema;
  if (typeof schema.type === "object" && schema.logicalType === undefined) {
    return resolve(schema.type as AvroJson, namespace, names);
  }
  return schema;
}

/** A field's column type and value converter; undefined for a field that is always null. */
function mapType(
  schema: AvroJson,
  namespace: string | undefined,
  names: Map<string, AvroJson>,
  visiting: Visiting,
): Mapped | undefined {
  const resolved = resolve(schema, namespace, names);
  if (Array.isArray(resolved)) {
    const branches = resolved.filter((b) => b !== "null");
    if (branches.length === 0) return undefined;
    if (branches.length === 1) return mapType(branches[0]!, namespace, names, visiting);
    return { type: "string", convert: toJsonText };
  }
  if (typeof resolved === "string") return primitive(resolved);
  const kind = resolved.type as string;
  const logical = resolved.logicalType;
  const connect = connectType(resolved["connect.name"]);
  if (connect !== undefined) return connect;
  switch (kind) {
    case "int":
      if (logical === "date") return { type: "date", convert: identity };
      if (logical === "time-millis") return { type: "time", convert: (v) => (v as number) * 1000 };
      return primitive("int");
    case "long":
      switch (logical) {
        case "time-micros":
          return { type: "time", convert: toExact };
        case "timestamp-millis":
          return { type: "timestamptz", convert: millisToMicros };
        case "timestamp-micros":
          return { type: "timestamptz", convert: toExact };
        case "local-timestamp-millis":
          return { type: "timestamp", convert: millisToMicros };
        case "local-timestamp-micros":
          return { type: "timestamp", convert: toExact };
        default:
          return primitive("long");
      }
    case "string":
      return logical === "uuid" ? { type: "uuid", convert: identity } : primitive("string");
    case "bytes":
      if (logical === "decimal") return decimalColumn(resolved);
      return primitive("bytes");
    case "fixed": {
      if (logical === "decimal") return decimalColumn(resolved);
      const size = Number(resolved.size);
      if (logical === "uuid" && size === 16) return { type: "uuid", convert: copyBytes };
      return { type: fixed(size), convert: copyBytes };
    }
    case "enum":
      return { type: "string", convert: identity };
    case "record":
    case "error":
      return visiting.has(resolved)
        ? { type: "string", convert: toJsonText }
        : structOf(resolved, namespace, names, visiting);
    case "array": {
      const items = mapType(resolved.items as AvroJson, namespace, names, visiting);
      if (items === undefined) return { type: "string", convert: toJsonText };
      const convert = items.convert;
      return {
        type: { kind: "list", elementId: 0, element: items.type, elementRequired: false },
        convert: (value) =>
          (value as unknown[]).map((item) => (item === null || item === undefined ? null : convert(item))),
      };
    }
    case "map": {
      const values = mapType(resolved.values as AvroJson, namespace, names, visiting);
      if (values === undefined) return { type: "string", convert: toJsonText };
      const convert = values.convert;
      return {
        type: { kind: "map", keyId: 0, key: "string", valueId: 0, value: values.type, valueRequired: false },
        convert: (value) => {
          const out = new Map<TypedValue, TypedValue>();
          const source = value as Record<string, unknown>;
          for (const key of Object.keys(source)) {
            const item = source[key];
            out.set(key, item === null || item === undefined ? null : convert(item));
          }
          return out;
        },
      };
    }
    default:
      return primitive(kind);
  }
}

/** The column of a Kafka Connect / Debezium type that its Avro type alone does not say. */
function connectType(name: unknown): Mapped | undefined {
  switch (name) {
    case "io.debezium.time.Date":
      return { type: "date", convert: identity };
    case "io.debezium.time.Timestamp":
      return { type: "timestamp", convert: millisToMicros };
    case "io.debezium.time.MicroTimestamp":
      return { type: "timestamp", convert: toExact };
    case "io.debezium.time.NanoTimestamp":
      return { type: "timestamp", convert: (v) => exactInteger(floorDiv(v as bigint, 1000n)) };
    case "io.debezium.time.ZonedTimestamp":
      return { type: "timestamptz", convert: (v) => timestampMicros(v as string) ?? null };
    case "io.debezium.time.Time":
      return { type: "time", convert: (v) => (v as number) * 1000 };
    case "io.debezium.time.MicroTime":
      return { type: "time", convert: toExact };
    case "io.debezium.time.NanoTime":
      return { type: "time", convert: (v) => exactInteger((v as bigint) / 1000n) };
    case "io.debezium.data.Uuid":
      return { type: "uuid", convert: (v) => (v as string).toLowerCase() };
    case "io.debezium.data.VariableScaleDecimal":
      return {
        type: "string",
        convert: (v) => {
          const { scale, value } = v as { scale: number; value: Uint8Array };
          return unscaledText(unscaled(value), scale);
        },
      };
    default:
      return undefined;
  }
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function primitive(name: string): Mapped {
  switch (name) {
    case "boolean":
    case "int":
    case "float":
    case "double":
    case "string":
      return { type: name, convert: identity };
    case "long":
      return { type: "long", convert: toExact };
    case "bytes":
      return { type: "binary", convert: copyBytes };
    default:
      throw new UnsupportedSchemaError(`the Avro type ${name} has no column type`);
  }
}

function decimalColumn(schema: { [key: string]: unknown }): Mapped {
  const precision = Number(schema.precision);
  const scale = Number(schema.scale ?? 0);
  if (precision > MAX_DECIMAL_PRECISION) {
    // Iceberg's decimals hold 38 digits: a wider one keeps its exact digits as text.
    return { type: "string", convert: (v) => unscaledText(unscaled(v as Uint8Array), scale) };
  }
  return { type: decimal(precision, scale), convert: (v) => unscaled(v as Uint8Array) };
}

const identity: Convert = (value) => value as TypedValue;
const toExact: Convert = (value) => exactInteger(value as bigint);
const millisToMicros: Convert = (value) => exactInteger((value as bigint) * 1000n);
/** The bytes out of the fetch buffer they were decoded from, which is not kept. */
const copyBytes: Convert = (value) => Uint8Array.from(value as Uint8Array);
const toJsonText: Convert = (value) => {
  const json = toJson(value);
  return typeof json === "string" ? json : jsonText(json);
};

/** A two's-complement big-endian integer (Avro's decimal encoding). */
export const unscaled = unscaledOf;

/** An avsc value as JSON: bytes as base64, records and maps as objects. */
function toJson(value: unknown): JsonValue {
  if (value === null || typeof value !== "object") return value as JsonValue;
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64");
  if (Array.isArray(value)) return value.map(toJson);
  const out: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value)) out[key] = toJson((value as Record<string, unknown>)[key]);
  return out;
}
