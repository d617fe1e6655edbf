// The grammar of a dedup key, parsed once when the job loads: a column of the table (a payload
// field, or `_kafka_key`, the system column holding the key's bytes), or `_kafka_key.<field>`, a
// field of the decoded key (key_format avro or protobuf) that no column stores. The pipeline
// consumes the parsed form; only the key index's scope and messages spell a key as text again.
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
