// The grammar of a dedup key, parsed once when the job loads: a column of the table (a payload
// field, or `_kafka_key`, the system column holding the key's bytes), or `_kafka_key.<field>`, a
// field of the decoded key (key_format avro or protobuf) that no column stores. The pipeline
// consumes the parsed form; only the key index's scope and messages spell a key as text again.
//
// A payload key may be a field inside structs, dots between levels (`customer.id`): the spec
// lets an identifier field sit in a struct, never in a list or a map. A top-level field whose
// name holds the dots itself wins over the path (a JSON field named "customer.id").
import { KAFKA_KEY } from "../decode/system-columns.ts";

export type DedupKey =
  | { readonly kind: "column"; readonly column: string }
  | { readonly kind: "kafka-key-field"; readonly field: string };

/** A dedup key naming a field of the decoded key: `_kafka_key.<field>`. */
const KEY_FIELD_PREFIX = `${KAFKA_KEY}.`;

export function parseDedupKey(text: string): DedupKey {
  return text.startsWith(KEY_FIELD_PREFIX)
    ? { kind: "kafka-key-field", field: text.slice(KEY_FIELD_PREFIX.length) }
    : { kind: "column", column: text };
}

/** The key as the job file writes it. */
export function dedupKeyText(key: DedupKey): string {
  return key.kind === "column" ? key.column : `${KEY_FIELD_PREFIX}${key.field}`;
}

/** The message key as a whole (`_kafka_key`), or a field of it: what a tombstone, which carries only its key, still has. */
export function isInMessageKey(key: DedupKey): boolean {
  return key.kind === "kafka-key-field" || key.column === KAFKA_KEY;
}

/** The field names of a column key from the top level down: `customer.id` is [customer, id]. */
export function keyPath(column: string): readonly string[] {
  return column.split(".");
}

/**
 * The value of a column key in a record (a JSON record or a typed one, its structs plain
 * objects): the top-level field of that name, else the field at its path through objects;
 * undefined when a level is absent or not an object.
 */
export function keyValueIn<T>(record: { readonly [field: string]: T }, column: string): T | undefined {
  if (Object.hasOwn(record, column) || !column.includes(".")) return record[column];
  let node: unknown = record;
  for (const name of keyPath(column)) {
    if (node === null || typeof node !== "object" || Array.isArray(node) || node instanceof Map) return undefined;
    if (!Object.hasOwn(node, name)) return undefined;
    node = (node as Record<string, unknown>)[name];
  }
  return node as T;
}

/** Sets a column key's value into `record` at its path, making the structs on the way: the row a delete names. */
export function setKeyValue<T>(record: { [field: string]: T }, column: string, value: T, nested: boolean): void {
  if (!nested) {
    record[column] = value;
    return;
  }
  const path = keyPath(column);
  let node = record as Record<string, unknown>;
  for (const name of path.slice(0, -1)) {
    const next = node[name];
    if (next === null || typeof next !== "object") node[name] = {};
    node = node[name] as Record<string, unknown>;
  }
  node[path.at(-1)!] = value;
}
