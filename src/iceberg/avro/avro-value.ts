// Values between Iceberg's id-keyed structs and Avro records. Writing follows our Iceberg type
// (names come from it); reading follows the *writer's* Avro schema and keys every record by the
// `field-id` attribute of its fields, so manifests written by Java, PyIceberg or an older
// format version resolve by id whatever their field order, names or extra fields.
//
// Values are those of spec/single-value.ts: int/date -> number, long/time/timestamp* -> bigint,
// float/double -> number, string, boolean, binary/fixed -> Uint8Array, uuid -> its text form,
// decimal -> the unscaled bigint; and struct -> IdStruct, list -> array, map -> Map.

import { Buffer } from "node:buffer";
import { IcebergError } from "../errors.ts";
import { bytesToUuid, decodeDecimal, uuidToBytes } from "../spec/single-value.ts";
import type { IcebergType, StructType } from "../spec/types.ts";
import { type AvroSchema, avroName, decimalRequiredBytes } from "./avro-schema.ts";

/** A struct value keyed by field id; absent or null fields are missing from the map. */
export type IdStruct = ReadonlyMap<number, unknown>;

/**
 * The id-keyed struct of `value`, whose properties are named as the fields of `fields` (the field
 * lists of v3-metadata.ts): each field holds the property of its name, or what `computed` says.
 */
export function toIdStruct<K extends string>(
  fields: Readonly<Record<K, { readonly id: number }>>,
  value: Partial<Record<NoInfer<K>, unknown>>,
  computed: Partial<Record<NoInfer<K>, unknown>> = {},
): IdStruct {
  const struct = new Map<number, unknown>();
  for (const key of Object.keys(fields) as K[])
    struct.set(fields[key].id, key in computed ? computed[key] : value[key]);
  return struct;
}

/** The value of a required field: a record without it is not valid Iceberg metadata. */
export function requiredField(struct: IdStruct, field: { id: number; name: string }): unknown {
  const value = struct.get(field.id);
  if (value === undefined) throw new IcebergError("corrupt", `${field.name} (field id ${field.id}) is missing`);
  return value;
}

/** Drops the keys of absent optional fields, so that what is read equals what was written. */
export function definedOnly<T extends object>(value: { [K in keyof T]: T[K] | undefined }): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function structToAvro(type: StructType, struct: IdStruct): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const field of type.fields) {
    const value = struct.get(field.id);
    if (value === undefined || value === null) {
      if (field.required) throw new TypeError(`${field.name} (field id ${field.id}) is required`);
      record[avroName(field.name)] = null;
    } else {
      record[avroName(field.name)] = toAvro(field.type, value);
    }
  }
  return record;
}

function toAvro(type: IcebergType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof type === "object") {
    switch (type.kind) {
      case "struct":
        return structToAvro(type, value as IdStruct);
      case "list":
        return (value as readonly unknown[]).map((e) => toAvro(type.element, e));
      case "map":
        return [...(value as ReadonlyMap<unknown, unknown>)].map(([k, v]) => ({
          key: toAvro(type.key, k),
          value: toAvro(type.value, v),
        }));
      case "decimal":
        return unscaledToBytes(value as bigint, decimalRequiredBytes(type.precision));
      case "fixed":
        return bytes(value);
    }
  }
  if (type === "uuid") return bytes(uuidToBytes(value as string));
  return type === "binary" ? bytes(value) : value;
}

// avsc writes Buffers only; share the memory rather than copy.
function bytes(value: unknown): Buffer {
  const u8 = value as Uint8Array;
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
}

function unscaledToBytes(unscaled: bigint, size: number): Buffer {
  if (BigInt.asIntN(8 * size, unscaled) !== unscaled) {
    throw new RangeError(`decimal unscaled value ${unscaled} does not fit ${size} bytes`);
  }
  const out = Buffer.alloc(size);
  let v = BigInt.asUintN(8 * size, unscaled);
  for (let i = size - 1; i >= 0; i -= 1) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

type Decode = (value: unknown) => unknown;

/**
 * A decoder for values read with `schema` (as avsc returns them: unions unwrapped, longs as
 * bigint) that turns every record into an IdStruct. Fields without a `field-id` are dropped.
 */
export function idStructDecoder(schema: AvroSchema): Decode {
  return new DecoderBuilder().decoder(schema);
}

type SchemaObject = Readonly<Record<string, unknown>>;

class DecoderBuilder {
  // Named types (records, fixed) by full and short name: later uses refer to them by name.
  readonly #named = new Map<string, { schema: SchemaObject; decode: Decode }>();

  decoder(schema: AvroSchema): Decode {
    if (typeof schema === "string") return primitives.get(schema) ?? this.#lookup(schema).decode;
    if (Array.isArray(schema)) return this.#union(schema);
    const s = schema as SchemaObject;
    switch (s.type) {
      case "record":
        return this.#define(s, () => this.#record(s));
      case "fixed":
        return this.#define(s, () => fixedDecoders.get(s.logicalType as string) ?? copyBytes);
      case "array":
        return s.logicalType === "map" ? this.#arrayMap(s.items as AvroSchema) : this.#array(s.items as AvroSchema);
      case "map": {
        const values = this.decoder(s.values as AvroSchema);
        return (v) => new Map(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, values(x)]));
      }
      case "bytes":
        return s.logicalType === "decimal" ? decimal : copyBytes;
      default:
        return this.decoder(s.type as AvroSchema);
    }
  }

  #lookup(name: string): { schema: SchemaObject; decode: Decode } {
    const named = this.#named.get(name) ?? this.#named.get(name.slice(name.lastIndexOf(".") + 1));
    if (!named) throw new IcebergError("corrupt", `Avro schema refers to undefined type ${name}`);
    return named;
  }

  /** Iceberg allows one union shape only: null and one type. */
  #union(branches: readonly AvroSchema[]): Decode {
    const nonNull = branches.filter((b) => b !== "null");
    if (nonNull.length !== 1) {
      throw new IcebergError("corrupt", `Avro union ${JSON.stringify(branches)} is not null and one type`);
    }
    const decode = this.decoder(nonNull[0]!);
    return (v) => (v === null ? null : decode(v));
  }

  #define(schema: SchemaObject, build: () => Decode): Decode {
    const name = String(schema.name);
    const names = [name, name.slice(name.lastIndexOf(".") + 1)];
    if (typeof schema.namespace === "string") names.push(`${schema.namespace}.${name}`);
    const named = { schema, decode: build() };
    for (const n of names) this.#named.set(n, named);
    return named.decode;
  }

  #record(schema: SchemaObject): Decode {
    const fields = (schema.fields as SchemaObject[])
      .filter((f) => f["field-id"] !== undefined)
      .map((f) => ({ id: Number(f["field-id"]), name: String(f.name), decode: this.decoder(f.type as AvroSchema) }));
    return (v) => {
      const record = v as Record<string, unknown>;
      const struct = new Map<number, unknown>();
      for (const f of fields) {
        const value = record[f.name];
        if (value !== null && value !== undefined) struct.set(f.id, f.decode(value));
      }
      return struct;
    };
  }

  #array(items: AvroSchema): Decode {
    const decode = this.decoder(items);
    return (v) => (v as unknown[]).map(decode);
  }

  /**
   * Spec: a map with non-string keys is an array of 2-field records, the key first and the
   * value second (some writers omit the ids of those fields, or make the records nullable).
   */
  #arrayMap(items: AvroSchema): Decode {
    const entry = this.#entryRecord(items);
    const [key, value] = entry.fields as SchemaObject[];
    if (!key || !value) {
      throw new IcebergError("corrupt", `Avro map entry ${String(entry.name)} needs a key and a value field`);
    }
    const [keyName, decodeKey] = [String(key.name), this.decoder(key.type as AvroSchema)];
    const [valueName, decodeValue] = [String(value.name), this.decoder(value.type as AvroSchema)];
    return (v) =>
      new Map(
        (v as (Record<string, unknown> | null)[])
          .filter((e) => e !== null)
          .map((e) => [decodeKey(e[keyName]), decodeValue(e[valueName])]),
      );
  }

  #entryRecord(items: AvroSchema): SchemaObject {
    if (Array.isArray(items)) {
      const nonNull = items.filter((b) => b !== "null");
      if (nonNull.length !== 1) {
        throw new IcebergError("corrupt", `Avro union ${JSON.stringify(items)} is not null and one type`);
      }
      return this.#entryRecord(nonNull[0]!);
    }
    if (typeof items === "string") return this.#lookup(items).schema;
    const record = items as SchemaObject;
    this.#define(record, () => this.#record(record));
    return record;
  }
}

const identity: Decode = (v) => v;
const copyBytes: Decode = (v) => new Uint8Array(v as Uint8Array);
const decimal: Decode = (v) => decodeDecimal(v as Uint8Array);
const fixedDecoders = new Map<string, Decode>([
  ["decimal", decimal],
  ["uuid", (v) => bytesToUuid(v as Uint8Array)],
]);
const primitives = new Map<string, Decode>([
  ...["null", "boolean", "int", "long", "float", "double", "string"].map((p): [string, Decode] => [p, identity]),
  ["bytes", copyBytes],
]);
