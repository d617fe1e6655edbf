// A Protobuf schema from a registry (a .proto file's text, with the files it imports as the
// registry's references) -> the columns of the message type a value's message indexes name,
// and its payloads -> records of column values (typed-record.ts), with protobufjs:
//
//   bool                                    boolean
//   int32, sint32, sfixed32                 int
//   int64, sint64, sfixed64, uint32, fixed32  long
//   uint64, fixed64                         decimal(20, 0): beyond a long's range
//   float, double, string                   the same type
//   bytes                                   binary
//   enum                                    string: the value's name (its number when unnamed)
//   google.protobuf.Timestamp               timestamptz (nanoseconds truncated to microseconds)
//   google.type.Date                        date
//   google.type.TimeOfDay                   time (nanoseconds truncated to microseconds)
//   confluent.type.Decimal                  decimal(p, s), p and s from the field's
//                                           (confluent.field_meta) params precision and scale,
//                                           as Confluent's ProtobufConverter writes Connect's
//                                           Decimal; without them (or p above 38) a string of
//                                           the exact decimal
//   other messages                          struct: one optional field per field, mapped so
//   repeated T                              list<T>: empty when the payload has none (proto3)
//   map<K, V>                               map<K, V>, K mapped as a scalar (Iceberg's map keys
//                                           are any primitive: map<int32, ...> is map<int, ...>)
//   oneof (not a proto3 optional)           struct named by the oneof, one field per member,
//                                           only the member that is set not null (as Confluent's
//                                           ProtobufConverter makes a Connect struct of it)
//   a message inside itself (recursion)     string: the inner message's JSON text, since a
//   and a message without fields            table's type is finite and Parquet has no empty group
//
// A column declared json in the job file (columns: {x: json}), or a table's string column that
// the schema makes nested (a table from before nested types), holds the field's JSON text
// instead (decode's `text`), in the proto3 JSON mapping: int64 as strings, enums by name,
// bytes as base64, a oneof as {"<member>": value}.
//
// A scalar without presence that the payload lacks is its default (0, "", false), as proto3
// reads it; a proto3 optional or a message field that is absent is null, at any depth.
//
// The registry serves confluent/meta.proto, confluent/type/decimal.proto, google/type/date.proto
// and google/type/timeofday.proto without a reference (Confluent's serializers import them as
// well-known files), so the decoder carries their definitions, as protobufjs carries
// google/protobuf/*.proto.
//
// A change stream's schema is an envelope (Debezium's {before, after, source, op, ts_ms}, as
// Confluent's ProtobufConverter writes it: one message of the file, the row a message nested in
// it): changes(envelope) decodes its payloads into the row image, whose columns are the after
// message's fields, the envelope taken apart by cdc-envelope.ts as for Avro and JSON.
import protobuf from "protobufjs";
import { decimal, type IcebergType, type PrimitiveType } from "../iceberg/spec/types.ts";
import { CDC_POSITION, type CdcEnvelope, type FieldPath, readChange } from "./cdc-envelope.ts";
import { jsonText } from "./column-value.ts";
import { unscaledOf, unscaledText } from "./connect-logical-types.ts";
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

type Message = Record<string, unknown>;

interface MessageType {
  readonly type: protobuf.Type;
  readonly readers: ColumnReader[];
  readonly columns: SchemaColumn[];
  readonly textColumns: WeakMap<TextColumns, readonly SchemaColumn[]>;
}

/** A top-level field's column, its value read from a decoded message, and its JSON text. */
interface ColumnReader {
  readonly column: SchemaColumn;
  read(message: Message): TypedValue;
  text(message: Message, json: () => Record<string, unknown>): TypedValue;
}

/** A field (or oneof) of a message: its type, and its value read from the decoded message. */
interface FieldMapping {
  readonly name: string;
  readonly type: IcebergType;
  read(message: Message): TypedValue;
}

type Convert = (value: unknown) => TypedValue;

const TIMESTAMP = ".google.protobuf.Timestamp";
const DATE = ".google.type.Date";
const TIME_OF_DAY = ".google.type.TimeOfDay";
const DECIMAL = ".confluent.type.Decimal";
/** Messages that are one value of a scalar column, not a struct. */
const LOGICAL_MESSAGES = new Set([TIMESTAMP, DATE, TIME_OF_DAY, DECIMAL]);

const MAX_DECIMAL_PRECISION = 38;

/** The well-known files Confluent's registry and serializers know without a reference: their messages as they define them. */
const CONFLUENT_FILES: Readonly<Record<string, string>> = {
  "confluent/meta.proto": `syntax = "proto3"; package confluent;
    message Meta { string doc = 1; map<string, string> params = 2; repeated string tags = 3; }`,
  "confluent/type/decimal.proto": `syntax = "proto3"; package confluent.type;
    message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; }`,
  "google/type/date.proto": `syntax = "proto3"; package google.type;
    message Date { int32 year = 1; int32 month = 2; int32 day = 3; }`,
  "google/type/timeofday.proto": `syntax = "proto3"; package google.type;
    message TimeOfDay { int32 hours = 1; int32 minutes = 2; int32 seconds = 3; int32 nanos = 4; }`,
};

/** A value its column cannot hold (a decimal with more places than the column's scale): the message is a bad message. */
class ValueProblem extends Error {}

/** protobufjs's toObject options of the proto3 JSON mapping, for values kept as JSON text. */
const JSON_OPTIONS: protobuf.IConversionOptions = {
  longs: String,
  enums: String,
  bytes: String,
  // A repeated or map field that the payload lacks is empty, not absent (proto3).
  arrays: true,
  objects: true,
};
/**
 * The decoder of a .proto file's text; `references` are the files it imports (name as imported,
 * text), dependencies first. Throws UnsupportedSchemaError when the files do not parse.
 */
export function protobufDecoder(
  schemaText: string,
  references: readonly { name: string; schema: string }[] = [],
): SchemaDecoder {
  const root = new protobuf.Root();
  let topLevel: string[];
  try {
    const loaded = new Set<string>();
    const loadImports = (imports: readonly string[] | undefined) => {
      for (const file of imports ?? []) {
        if (loaded.has(file)) continue;
        loaded.add(file);
        const common = protobuf.common.get(file);
        if (common !== null && common !== undefined) root.addJSON(common.nested!);
        else if (CONFLUENT_FILES[file] !== undefined) protobuf.parse(CONFLUENT_FILES[file], root, { keepCase: true });
      }
    };
    for (const reference of references) {
      loaded.add(reference.name);
      loadImports(protobuf.parse(reference.schema, root, { keepCase: true }).imports);
    }
    const parsed = protobuf.parse(schemaText, root, { keepCase: true });
    loadImports(parsed.imports);
    root.resolveAll();
    // The message indexes count the file's own top-level messages: parse it alone to list them,
    // since the referenced files may add types to the same package.
    const alone = protobuf.parse(schemaText, new protobuf.Root(), { keepCase: true });
    const ns = alone.package ? alone.root.lookup(alone.package) : alone.root;
    topLevel = ((ns as protobuf.Namespace | null)?.nestedArray ?? [])
      .filter((n) => n instanceof protobuf.Type)
      .map((n) => `${alone.package ? `${alone.package}.` : ""}${n.name}`);
  } catch (error) {
    throw new UnsupportedSchemaError(`the Protobuf schema does not parse: ${(error as Error).message}`);
  }
  if (topLevel.length === 0) throw new UnsupportedSchemaError("the Protobuf schema declares no message");
  const types = new Map<string, MessageType>();
  const typeAt = (indexes: readonly number[]) => {
    const key = indexes.join(",");
    let found = types.get(key);
    if (found === undefined) {
      let type: protobuf.Type | undefined = root.lookupType(topLevel[indexes[0]!] ?? "");
      for (const i of indexes.slice(1)) {
        type = type?.nestedArray.filter((n): n is protobuf.Type => n instanceof protobuf.Type)[i];
      }
      if (type === undefined) return undefined;
      const readers = readersOf(type);
      found = { type, readers, columns: readers.map((r) => r.column), textColumns: new WeakMap() };
      types.set(key, found);
    }
    return found;
  };
  if (topLevel[0] === undefined || typeAt([0]) === undefined) {
    throw new UnsupportedSchemaError("the Protobuf schema declares no message");
  }
  return {
    // The table's columns come from the first message type; a value of another type of the file
    // names its columns itself, by its message indexes.
    columns: typeAt([0])!.columns,
    columnsOf(messageIndexes) {
      try {
        return typeAt(messageIndexes.length === 0 ? [0] : messageIndexes)?.columns;
      } catch {
        return undefined;
      }
    },
    decode(payload, messageIndexes, text = NO_TEXT_COLUMNS) {
      let target: MessageType | undefined;
      try {
        target = typeAt(messageIndexes.length === 0 ? [0] : messageIndexes);
      } catch {
        target = undefined;
      }
      if (target === undefined) {
        return { problem: `the message indexes [${messageIndexes.join(", ")}] name no message type of the schema` };
      }
      let message: Message;
      try {
        message = target.type.decode(payload) as unknown as Message;
      } catch (error) {
        return {
          problem: `the Protobuf message does not decode as ${target.type.fullName.slice(1)}: ${(error as Error).message}`,
        };
      }
      let json: Record<string, unknown> | undefined;
      const asJson = () => (json ??= target.type.toObject(message as unknown as protobuf.Message, JSON_OPTIONS));
      let record: TypedRecord;
      try {
        record = readRecord(target.readers, message, asJson, text);
      } catch (error) {
        if (error instanceof ValueProblem) return { problem: error.message };
        throw error;
      }
      return { record, columns: textColumnsOf(target.columns, text, target.textColumns) };
    },
    changes: changeDecoders((envelope, text) => changeDecoder(typeAt([0])!.type, envelope, text)),
  };
}

/** The record of a decoded message: each reader's column, those named in `text` as JSON text. */
function readRecord(
  readers: readonly ColumnReader[],
  message: Message,
  json: () => Record<string, unknown>,
  text: TextColumns,
): TypedRecord {
  const record: TypedRecord = {};
  for (const reader of readers) {
    const name = reader.column.name;
    record[name] = text.size > 0 && text.has(name) ? reader.text(message, json) : reader.read(message);
  }
  return record;
}

/**
 * The decoder of a change stream whose values are `envelopeType` messages: the row's columns
 * are the after message's fields. The envelope is read as typed values (source.lsn an integer,
 * which orders positions as a number), taken apart by readChange as the Avro and JSON envelopes
 * are, and the row read from the image's message, so that a field declared json keeps its text.
 */
function changeDecoder(envelopeType: protobuf.Type, envelope: CdcEnvelope, text: TextColumns): ChangeDecoder {
  const after = messageAt(envelopeType, envelope.after);
  const before = messageAt(envelopeType, envelope.before);
  if (after === undefined) {
    throw new UnsupportedSchemaError(
      `the Protobuf message ${envelopeType.fullName.slice(1)} has no message field ${envelope.after.join(".")}: it is no change event envelope`,
    );
  }
  const readers = readersOf(after);
  const beforeReaders = before === undefined || before === after ? readers : readersOf(before);
  const envelopeMappings = mappingsOf(envelopeType, new Set([envelopeType]));
  const columns: SchemaColumn[] = [
    ...textColumnsOf(
      readers.map((r) => r.column),
      text,
      new WeakMap(),
    ),
  ];
  columns.push({ name: CDC_POSITION, type: "string" });
  const metadata = envelope.columns.map(({ column, path }) => {
    const type = fieldTypeAt(envelopeType, path);
    columns.push({ name: column, type: type ?? "string" });
    // readChange puts the envelope's typed value in the image; a field floe cannot type is its JSON text.
    return { column, typed: type !== undefined };
  });
  return {
    columns,
    decode(payload) {
      let message: Message;
      try {
        message = envelopeType.decode(payload) as unknown as Message;
      } catch (error) {
        return {
          problem: `the Protobuf message does not decode as ${envelopeType.fullName.slice(1)}: ${(error as Error).message}`,
          envelope: false,
        };
      }
      try {
        const view: TypedRecord = {};
        for (const mapping of envelopeMappings) view[mapping.name] = mapping.read(message);
        const change = readChange(view as never, envelope);
        if ("problem" in change) return { problem: change.problem, envelope: true };
        const isDelete = change.kind === "delete";
        const image = messageOf(message, isDelete ? envelope.before : envelope.after);
        const imageType = isDelete ? before : after;
        const record: TypedRecord =
          image === undefined || imageType === undefined
            ? {}
            : readRecord(
                isDelete ? beforeReaders : readers,
                image,
                () => imageType.toObject(image as unknown as protobuf.Message, JSON_OPTIONS),
                text,
              );
        record[CDC_POSITION] = change.position;
        const values = change.image as TypedRecord;
        for (const { column, typed } of metadata) {
          const value = values[column];
          record[column] = value === undefined ? null : typed ? value : jsonText(value as never);
        }
        return { record, change };
      } catch (error) {
        if (error instanceof ValueProblem) return { problem: error.message, envelope: false };
        throw error;
      }
    },
  };
}

/** The message type of the field at `path`, through message fields. */
function messageAt(type: protobuf.Type, path: FieldPath): protobuf.Type | undefined {
  let current: protobuf.Type | undefined = type;
  for (const name of path) {
    const field: protobuf.Field | undefined = current?.fields[name];
    const resolved: protobuf.ReflectionObject | null | undefined = field?.resolvedType;
    if (field === undefined || field.repeated || field.map || !(resolved instanceof protobuf.Type)) return undefined;
    current = resolved;
  }
  return current;
}

/** The column type of a scalar field at `path` (a cdc_columns entry); undefined for none or a message. */
function fieldTypeAt(type: protobuf.Type, path: FieldPath): IcebergType | undefined {
  const parent = messageAt(type, path.slice(0, -1));
  const field = parent?.fields[path.at(-1)!];
  if (field === undefined || field.repeated || field.map) return undefined;
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type && !LOGICAL_MESSAGES.has(resolved.fullName)) return undefined;
  return scalarOf(field.type, resolved, field.name, field).type;
}

/** The decoded message at `path` of a decoded message; undefined when a level is absent. */
function messageOf(message: Message, path: FieldPath): Message | undefined {
  let node: unknown = message;
  for (const name of path) {
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, name)) return undefined;
    node = (node as Message)[name];
  }
  return node === null || typeof node !== "object" ? undefined : (node as Message);
}

function readersOf(type: protobuf.Type): ColumnReader[] {
  const visiting = new Set([type]);
  return mappingsOf(type, visiting).map((mapping) => ({
    column: { name: mapping.name, type: mapping.type },
    read: mapping.read,
    text(message, json) {
      const value = mapping.read(message);
      if (value === null || typeof value === "string") return value;
      const member = message[mapping.name];
      // A oneof's JSON text names the member that is set.
      if (typeof member === "string" && isOneofName(type, mapping.name)) {
        return jsonText({ [member]: json()[member] } as never);
      }
      return jsonText(json()[mapping.name] as never);
    },
  }));
}

function isOneofName(type: protobuf.Type, name: string): boolean {
  const oneof = type.oneofs?.[name];
  return oneof !== undefined && !isSyntheticOneof(oneof);
}

/** The fields of a message type, a oneof as one struct; `visiting`: the message types above, this one included. */
function mappingsOf(type: protobuf.Type, visiting: ReadonlySet<protobuf.Type>): FieldMapping[] {
  const mappings: FieldMapping[] = [];
  const oneofsDone = new Set<string>();
  for (const field of type.fieldsArray) {
    const oneof = field.partOf;
    if (oneof !== null && oneof !== undefined && !isSyntheticOneof(oneof)) {
      if (oneofsDone.has(oneof.name)) continue;
      oneofsDone.add(oneof.name);
      mappings.push(oneofMapping(oneof, visiting));
      continue;
    }
    const name = field.name;
    if (field.map) {
      mappings.push({ name, ...mapFieldOf(field as unknown as protobuf.MapField, visiting) });
      continue;
    }
    const value = singleValueOf(field, visiting);
    if (field.repeated) {
      const convert = value.convert;
      mappings.push({
        name,
        type: { kind: "list", elementId: 0, element: value.type, elementRequired: false },
        read: (message) => {
          const items = message[name] as unknown[] | undefined;
          return items === undefined || items === null ? [] : items.map((item) => convert(item));
        },
      });
      continue;
    }
    const hasPresence = (oneof !== null && oneof !== undefined) || field.resolvedType instanceof protobuf.Type;
    const convert = value.convert;
    mappings.push({
      name,
      type: value.type,
      read: (message) => {
        if (hasPresence && !Object.hasOwn(message, name)) return null;
        const item = message[name];
        return item === null || item === undefined ? null : convert(item);
      },
    });
  }
  return mappings;
}

/** A oneof: a struct of its members, the one that is set holding its value. */
function oneofMapping(oneof: protobuf.OneOf, visiting: ReadonlySet<protobuf.Type>): FieldMapping {
  const members = oneof.fieldsArray.map((field) => ({ name: field.name, ...singleValueOf(field, visiting) }));
  return {
    name: oneof.name,
    type: {
      kind: "struct",
      fields: members.map((m) => ({ id: 0, name: m.name, required: false, type: m.type })),
    },
    read: (message) => {
      const set = message[oneof.name];
      if (typeof set !== "string") return null;
      const out: { [field: string]: TypedValue } = Object.create(null);
      for (const member of members) {
        const item = member.name === set ? message[set] : undefined;
        out[member.name] = item === null || item === undefined ? null : member.convert(item);
      }
      return out;
    },
  };
}

/** A map field: map<K, V>, its keys converted back from protobufjs's object keys. */
function mapFieldOf(field: protobuf.MapField, visiting: ReadonlySet<protobuf.Type>): Omit<FieldMapping, "name"> {
  const key = scalarOf(field.keyType, undefined, field.name);
  const value = singleValueOf(field, visiting);
  const keyOf = mapKeyReader(field.keyType);
  const convertKey = key.convert;
  const convert = value.convert;
  const name = field.name;
  return {
    type: { kind: "map", keyId: 0, key: key.type, valueId: 0, value: value.type, valueRequired: false },
    read: (message) => {
      const out = new Map<TypedValue, TypedValue>();
      const entries = message[name] as Record<string, unknown> | undefined;
      if (entries === undefined || entries === null) return out;
      for (const k of Object.keys(entries)) {
        const item = entries[k];
        out.set(convertKey(keyOf(k)), item === null || item === undefined ? null : convert(item));
      }
      return out;
    },
  };
}

const SIGNED_64 = new Set(["int64", "sint64", "sfixed64"]);
const UNSIGNED_64 = new Set(["uint64", "fixed64"]);

/** A map key as protobufjs keeps it (an object key: a 64-bit key as its 8-char hash, when long.js is there) -> its scalar. */
function mapKeyReader(keyType: string): (key: string) => unknown {
  if (keyType === "bool") return (key) => key === "true";
  if (SIGNED_64.has(keyType) || UNSIGNED_64.has(keyType)) {
    if (!protobuf.util.Long) return (key) => key;
    const unsigned = UNSIGNED_64.has(keyType);
    return (key) => {
      const bits = protobuf.util.LongBits.fromHash(key);
      const raw = (BigInt(bits.hi >>> 0) << 32n) | BigInt(bits.lo >>> 0);
      return unsigned ? BigInt.asUintN(64, raw) : BigInt.asIntN(64, raw);
    };
  }
  if (keyType === "string") return (key) => key;
  return (key) => Number(key);
}

/** One value of a field (an element of a repeated field, a map's value): its type and converter. */
function singleValueOf(
  field: protobuf.Field | protobuf.MapField,
  visiting: ReadonlySet<protobuf.Type>,
): { type: IcebergType; convert: Convert } {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Type && !LOGICAL_MESSAGES.has(resolved.fullName)) {
    const asText: Convert = (v) => jsonText(resolved.toObject(v as protobuf.Message, JSON_OPTIONS) as never);
    if (visiting.has(resolved)) return { type: "string", convert: asText };
    const inner = mappingsOf(resolved, new Set(visiting).add(resolved));
    if (inner.length === 0) return { type: "string", convert: asText };
    return {
      type: { kind: "struct", fields: inner.map((m) => ({ id: 0, name: m.name, required: false, type: m.type })) },
      convert: (value) => {
        const message = value as Message;
        const out: { [field: string]: TypedValue } = Object.create(null);
        for (const m of inner) out[m.name] = m.read(message);
        return out;
      },
    };
  }
  return scalarOf(field.type, resolved, field.name, field);
}

function isSyntheticOneof(oneof: protobuf.OneOf): boolean {
  return oneof.fieldsArray.length === 1 && oneof.name === `_${oneof.fieldsArray[0]!.name}`;
}

function scalarOf(
  typeName: string,
  resolved: protobuf.Type | protobuf.Enum | null | undefined,
  fieldName: string,
  field?: protobuf.Field | protobuf.MapField,
): { type: PrimitiveType; convert: Convert } {
  if (resolved instanceof protobuf.Enum) {
    const names = resolved.valuesById;
    return { type: "string", convert: (v) => names[v as number] ?? String(v) };
  }
  if (resolved instanceof protobuf.Type) return logicalOf(resolved.fullName, fieldName, field);
  switch (typeName) {
    case "bool":
      return { type: "boolean", convert: (v) => v as boolean };
    case "int32":
    case "sint32":
    case "sfixed32":
      return { type: "int", convert: (v) => v as number };
    case "uint32":
    case "fixed32":
      return { type: "long", convert: (v) => v as number };
    case "int64":
    case "sint64":
    case "sfixed64":
      return { type: "long", convert: (v) => exactInteger(BigInt(String(v))) };
    case "uint64":
    case "fixed64":
      return { type: decimal(20, 0), convert: (v) => BigInt(String(v)) };
    case "float":
      return { type: "float", convert: (v) => v as number };
    case "double":
      return { type: "double", convert: (v) => v as number };
    case "string":
      return { type: "string", convert: (v) => v as string };
    case "bytes":
      return { type: "binary", convert: (v) => Uint8Array.from(v as Uint8Array) };
    default:
      throw new UnsupportedSchemaError(`the Protobuf field ${fieldName} has type ${typeName}, which floe does not map`);
  }
}

/** A message that is one scalar value (LOGICAL_MESSAGES): its column type and converter. */
function logicalOf(
  fullName: string,
  fieldName: string,
  field: protobuf.Field | protobuf.MapField | undefined,
): { type: PrimitiveType; convert: Convert } {
  switch (fullName) {
    case DATE:
      return {
        type: "date",
        convert: (v) => {
          const d = v as { year?: number; month?: number; day?: number };
          return Date.UTC(d.year ?? 0, (d.month ?? 1) - 1, d.day ?? 1) / 86_400_000;
        },
      };
    case TIME_OF_DAY:
      return {
        type: "time",
        convert: (v) => {
          const t = v as { hours?: number; minutes?: number; seconds?: number; nanos?: number };
          const seconds = ((t.hours ?? 0) * 60 + (t.minutes ?? 0)) * 60 + (t.seconds ?? 0);
          return seconds * 1_000_000 + Math.floor((t.nanos ?? 0) / 1000);
        },
      };
    case DECIMAL:
      return decimalOf(fieldName, field);
    default:
      // google.protobuf.Timestamp
      return {
        type: "timestamptz",
        convert: (v) => {
          const t = v as { seconds?: unknown; nanos?: unknown };
          const seconds = BigInt(String(t.seconds ?? 0));
          const nanos = Number(t.nanos ?? 0);
          return exactInteger(seconds * 1_000_000n + BigInt(Math.floor(nanos / 1000)));
        },
      };
  }
}

/**
 * confluent.type.Decimal: the unscaled value as big-endian two's complement bytes, with its
 * precision and scale. The column's precision and scale are the field's
 * `(confluent.field_meta).params`, which Confluent's ProtobufConverter sets from Connect's
 * Decimal; a value of a smaller scale is rescaled exactly, one of a larger scale whose extra
 * places are not zero is a bad message (the column would round it).
 */
function decimalOf(
  fieldName: string,
  field: protobuf.Field | protobuf.MapField | undefined,
): { type: PrimitiveType; convert: Convert } {
  const params = fieldMetaParams(field);
  const precision = Number(params.get("precision"));
  const scale = Number(params.get("scale") ?? 0);
  const unscaled = (v: unknown): { value: bigint; scale: number } => {
    const d = v as { value?: Uint8Array; scale?: number };
    return { value: unscaledOf(d.value ?? new Uint8Array()), scale: d.scale ?? 0 };
  };
  if (!Number.isInteger(precision) || precision < 1 || precision > MAX_DECIMAL_PRECISION || !Number.isInteger(scale)) {
    return {
      type: "string",
      convert: (v) => {
        const d = unscaled(v);
        return unscaledText(d.value, d.scale);
      },
    };
  }
  return {
    type: decimal(precision, scale),
    convert: (v) => {
      const d = unscaled(v);
      if (d.scale <= scale) return d.value * 10n ** BigInt(scale - d.scale);
      const factor = 10n ** BigInt(d.scale - scale);
      if (d.value % factor !== 0n) {
        throw new ValueProblem(
          `field ${fieldName}: the decimal ${unscaledText(d.value, d.scale)} has more places than its column's scale ${scale}`,
        );
      }
      return d.value / factor;
    },
  };
}

/** The `(confluent.field_meta) = {params: [...]}` option of a field, key -> value. */
function fieldMetaParams(field: protobuf.Field | protobuf.MapField | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const option of (field?.parsedOptions ?? []) as Record<string, unknown>[]) {
    const meta = option["(confluent.field_meta)"] as { params?: unknown } | undefined;
    const params = meta?.params;
    for (const entry of Array.isArray(params) ? params : params === undefined ? [] : [params]) {
      const { key, value } = entry as { key?: unknown; value?: unknown };
      if (typeof key === "string" && value !== undefined) out.set(key, String(value));
    }
  }
  return out;
}
