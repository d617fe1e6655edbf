// The key hash of every row message: `_floe_id` and the key the upsert index matches on
// (upsert/key-hash.ts). The dedup key values are hashed as their columns store them, so a
// rebuild from the `_floe_id` column and a hash computed here always agree.
import { columnConverter } from "../decode/column-value.ts";
import type { JsonRecord } from "../decode/json-message.ts";
import { KAFKA_KEY } from "../decode/system-columns.ts";
import { findField, type Schema } from "../iceberg/spec/schema.ts";
import { isPrimitive } from "../iceberg/spec/types.ts";
import { hashKey, keyHashes } from "../upsert/key-hash.ts";
import type { RowMessages } from "./stream-batch.ts";

export function hashRowKeys(rows: RowMessages, dedupKeys: readonly string[], schema: Schema): Uint32Array {
  const readers = dedupKeys.map((name) => {
    if (name === KAFKA_KEY) return (i: number) => rows.keys[i];
    if (name.startsWith(`${KAFKA_KEY}.`)) {
      const keyField = name.slice(KAFKA_KEY.length + 1);
      return (i: number) => rows.keyRecords[i]?.[keyField] ?? null;
    }
    const field = findField(schema, name);
    if (!field || !isPrimitive(field.type)) {
      throw new Error(`dedup key ${name} is not a column of primitive type in the table schema`);
    }
    // A registry format's values are their columns' already.
    if (rows.typed) return (i: number) => rows.records[i]![name];
    const convert = columnConverter(field.type);
    return (i: number) => convert((rows.records[i] as JsonRecord)[name]!);
  });
  const hashes = keyHashes(rows.count);
  const values: unknown[] = new Array(readers.length);
  for (let i = 0; i < rows.count; i++) {
    for (let k = 0; k < readers.length; k++) values[k] = readers[k]!(i);
    hashKey(values, hashes, i);
  }
  return hashes;
}
