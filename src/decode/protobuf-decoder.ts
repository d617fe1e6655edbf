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
//   other messages, repeated and map fields string: the value's JSON text (proto3 JSON mapping:
//                                           int64 as strings, enums by name, bytes as base64)
//   oneof (not a proto3 optional)           one string column named by the oneof: the JSON
//                                           text {"<field>": value} of the member that is set
//
// A scalar without presence that the payload lacks is its default (0, "", false), as proto3
// reads it; a proto3 optional or a message field that is absent is null.
import protobuf from "protobufjs";
import { decimal, type PrimitiveType } from "../iceberg/spec/types.ts";
import { jsonText } from "./column-value.ts";
import {
  exactInteger,
  type SchemaColumn,
  type SchemaDecoder,
  type TypedRecord,
  type TypedValue,
  UnsupportedSchemaError,
} from "./typed-record.ts";

type Message = Record<string, unknown>;

interface MessageType {
  readonly type: protobuf.Type;
  readonly readers: ColumnReader[];
  readonly columns: SchemaColumn[];
}

interface ColumnReader {
  readonly column: SchemaColumn;
  read(message: Message, json: () => Record<string, unknown>): TypedValue;
}

const TIMESTAMP = ".google.protobuf.Timestamp";

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
      found = { type, readers, columns: readers.map((r) => r.column) };
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
    decode(payload, messageIndexes) {
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
      const asJson = () =>
        (json ??= target.type.toObject(message as unknown as protobuf.Message, {
          longs: String,
          enums: String,
          bytes: String,
          // A repeated or map field that the payload lacks is empty, not absent (proto3).
          arrays: true,
          objects: true,
        }));
      const record: TypedRecord = {};
      for (const reader of target.readers) record[reader.column.name] = reader.read(message, asJson);
      return { record, columns: target.columns };
    },
  };
}

function readersOf(type: protobuf.Type): ColumnReader[] {
  const readers: ColumnReader[] = [];
  const oneofsDone = new Set<string>();
  for (const field of type.fieldsArray) {
    const oneof = field.partOf;
    if (oneof !== null && oneof !== undefined && !isSyntheticOneof(oneof)) {
      if (oneofsDone.has(oneof.name)) continue;
      oneofsDone.add(oneof.name);
      readers.push({
        column: { name: oneof.name, type: "string" },
        read(message, json) {
          const member = message[oneof.name];
          if (typeof member !== "string") return null;
          return jsonText({ [member]: json()[member] } as never);
        },
      });
      continue;
    }
    const hasPresence = (oneof !== null && oneof !== undefined) || field.resolvedType instanceof protobuf.Type;
    const name = field.name;
    const present = (message: Message) => !hasPresence || Object.hasOwn(message, name);
    if (
      field.repeated ||
      field.map ||
      (field.resolvedType instanceof protobuf.Type && field.resolvedType.fullName !== TIMESTAMP)
    ) {
      readers.push({
        column: { name, type: "string" },
        read(message, json) {
          if (!present(message)) return null;
          return jsonText(json()[name] as never);
        },
      });
      continue;
    }
    const mapped = scalar(field);
    readers.push({
      column: { name, type: mapped.type },
      read(message) {
        if (!present(message)) return null;
        const value = message[name];
        return value === null || value === undefined ? null : mapped.convert(value);
      },
    });
  }
  return readers;
}

function isSyntheticOneof(oneof: protobuf.OneOf): boolean {
  return oneof.fieldsArray.length === 1 && oneof.name === `_${oneof.fieldsArray[0]!.name}`;
}

function scalar(field: protobuf.Field): { type: PrimitiveType; convert: (value: unknown) => TypedValue } {
  if (field.resolvedType instanceof protobuf.Enum) {
    const names = field.resolvedType.valuesById;
    return { type: "string", convert: (v) => names[v as number] ?? String(v) };
  }
  if (field.resolvedType instanceof protobuf.Type) {
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
  switch (field.type) {
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
      throw new UnsupportedSchemaError(
        `the Protobuf field ${field.name} has type ${field.type}, which floe does not map`,
      );
  }
}
