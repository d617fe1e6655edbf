// The key hash of a row: `_floe_id` and the key the upsert index matches on (upsert/key-hash.ts).
// Two paths compute it, and they must never disagree: a message's dedup values while a sync
// writes it (hashRowKeys), and a data file's stored dedup columns when the key index is rebuilt
// or caught up (hashStoredKeys), for rows floe wrote and rows another engine wrote alike (a
// Spark INSERT or MERGE carries no `_floe_id`, a Spark UPDATE of a key column leaves a stale
// one). Both go through hashKeyValues, which hashes each value as its column stores it: the
// message side converts a JSON value to its column's value first, and storedKeyValue maps the
// few types whose stored form differs from the value handed to the column builder (a float is
// stored as float32; a uuid reads back in lowercase).
//
// Where a dedup key lives in a row: a payload column of its name, or a field inside its structs
// (`customer.id`, hashed as that field's column stores it); `_kafka_key`, the system
// column holding the base64 of the key bytes (what rows.keys holds); or `_kafka_key.<field>`, a
// field of a decoded key that no column stores. A table keyed on such a field can only take a
// row's key from its `_floe_id`; every other table takes it from the dedup columns, the truth
// that `_floe_id` only caches.
import { columnConverter } from "../decode/column-value.ts";
import type { JsonRecord } from "../decode/json-message.ts";
import { KAFKA_KEY } from "../decode/system-columns.ts";
import { IcebergError } from "../iceberg/errors.ts";
import { findField, type Schema } from "../iceberg/spec/schema.ts";
import { isPrimitive, type NestedField, type PrimitiveType } from "../iceberg/spec/types.ts";
import { type DedupKey, keyPath, keyValueIn } from "../job/dedup-key.ts";
import { hashKey, KEY_HASH_WORDS, keyHashes } from "../upsert/key-hash.ts";
import type { RowMessages } from "./binding-batch.ts";

/** The value of dedup key k of row i, as its column holds it (or the decoded key's field). */
type KeyReader = (row: number) => unknown;

/**
 * The columns of a table that hold its dedup keys, in dedup_keys order; undefined when a key is
 * a field of a decoded Kafka key (`_kafka_key.<field>`), which no column stores.
 */
export function dedupKeyColumns(dedupKeys: readonly DedupKey[], schema: Schema): NestedField[] | undefined {
  const fields: NestedField[] = [];
  for (const key of dedupKeys) {
    if (key.kind === "kafka-key-field") return undefined;
    fields.push(keyColumn(schema, key.column));
  }
  return fields;
}

/**
 * The field of a dedup key: a top-level column, or a primitive field inside structs
 * (`customer.id`), whose own field id the key index reads from the data files.
 */
function keyColumn(schema: Schema, name: string): NestedField {
  const top = findField(schema, name);
  if (top !== undefined || !name.includes(".")) {
    if (!top || !isPrimitive(top.type)) {
      throw new IcebergError("validation", `dedup key ${name} is not a column of primitive type in the table schema`);
    }
    return top;
  }
  let fields: readonly NestedField[] = schema.fields;
  let field: NestedField | undefined;
  const path = keyPath(name);
  for (let i = 0; i < path.length; i++) {
    const at = path.slice(0, i + 1).join(".");
    field = fields.find((f) => f.name === path[i]);
    if (field === undefined) {
      throw new IcebergError("validation", `dedup key ${name}: the table has no field ${at}`);
    }
    if (i === path.length - 1) break;
    const type = field.type;
    if (typeof type !== "object" || type.kind !== "struct") {
      const what = typeof type === "object" ? `a ${type.kind}` : `of type ${type}`;
      throw new IcebergError(
        "validation",
        `dedup key ${name}: ${at} is ${what}; a dedup key may be a field inside structs, not inside a list or a map`,
      );
    }
    fields = type.fields;
  }
  if (!isPrimitive(field!.type)) {
    throw new IcebergError("validation", `dedup key ${name} is not a field of primitive type in the table schema`);
  }
  return field!;
}

/** The key hash of every message of `rows`, message i at words [4i, 4i + 4). */
export function hashRowKeys(rows: RowMessages, dedupKeys: readonly DedupKey[], schema: Schema): Uint32Array {
  const readers = dedupKeys.map((key): { type: PrimitiveType | undefined; read: KeyReader } => {
    if (key.kind === "kafka-key-field") {
      const keyField = key.field;
      // Not a column: hashed as decoded, the same in every sync.
      return { type: undefined, read: (i) => rows.keyRecords[i]?.[keyField] ?? null };
    }
    const name = key.column;
    const field = keyColumn(schema, name);
    const type = field.type as PrimitiveType;
    // `_kafka_key` holds the base64 text of rows.keys.
    if (name === KAFKA_KEY) return { type, read: (i) => rows.keys[i] };
    // A registry format's values are their columns' already.
    if (rows.typed) return { type, read: (i) => keyValueIn(rows.records[i]!, name) };
    const convert = columnConverter(type);
    return { type, read: (i) => convert(keyValueIn(rows.records[i] as JsonRecord, name)!) };
  });
  return hashKeyValues(
    rows.count,
    readers.map((r) => r.read),
    readers.map((r) => r.type),
  );
}

/**
 * The key hash of every row of a data file from its stored dedup columns (`columns[k][row]`, as
 * iceberg/parquet/key-column-reader.ts reads them, for the fields of dedupKeyColumns), and which
 * rows have no key: a null in a dedup column, which no message can carry (such a message is a
 * dead letter), so no upsert can name the row and it is not indexed.
 */
export function hashStoredKeys(
  rowCount: number,
  columns: readonly (readonly unknown[])[],
  fields: readonly NestedField[],
): { hashes: Uint32Array; unkeyed: number[] } {
  const unkeyed: number[] = [];
  for (let row = 0; row < rowCount; row++) {
    for (const values of columns) {
      if (values[row] == null) {
        unkeyed.push(row);
        break;
      }
    }
  }
  const hashes = hashKeyValues(
    rowCount,
    columns.map((values) => (row: number) => values[row]),
    fields.map((f) => f.type as PrimitiveType),
  );
  for (const row of unkeyed) hashes.fill(0, row * KEY_HASH_WORDS, (row + 1) * KEY_HASH_WORDS);
  return { hashes, unkeyed };
}

/** The one hashing loop of both paths: the values of each row normalized to their stored form, then hashed. */
function hashKeyValues(count: number, readers: readonly KeyReader[], types: readonly (PrimitiveType | undefined)[]) {
  const hashes = keyHashes(count);
  const values: unknown[] = new Array(readers.length);
  for (let i = 0; i < count; i++) {
    for (let k = 0; k < readers.length; k++) values[k] = storedKeyValue(types[k], readers[k]!(i));
    hashKey(values, hashes, i);
  }
  return hashes;
}

/**
 * A key value as a column of `type` stores it and reads it back. Integers hash alike as number
 * or bigint (upsert/key-hash.ts), so long, timestamps and decimals (unscaled) need nothing; a
 * float column keeps float32 precision, and a uuid column reads back as lowercase text.
 */
export function storedKeyValue(type: PrimitiveType | undefined, value: unknown): unknown {
  if (type === "float" && typeof value === "number") return Math.fround(value);
  if (type === "uuid" && typeof value === "string") return value.toLowerCase();
  return value;
}
