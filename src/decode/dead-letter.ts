// The dead-letter table beside each topic's table (`<table>__dlq`): one row per bad message (not
// a JSON object, or values that do not fit the table's columns), with the raw key and value so
// that nothing is lost and the message can be replayed once the producer is fixed. Its columns
// mirror the system columns' names, so a dead-letter row joins its neighbours in the topic's
// table on partition and offset.
import type { Schema } from "../iceberg/spec/schema.ts";
import type { NestedField } from "../iceberg/spec/types.ts";

export const DEAD_LETTER_SCHEMA: Schema = Object.freeze({
  schemaId: 0,
  fields: Object.freeze([
    field(1, "_kafka_key", "string", "base64 of the Kafka message key bytes; null when the message has no key"),
    field(2, "_kafka_value", "string", "base64 of the Kafka message value bytes"),
    field(3, "_kafka_partition", "int", "Kafka partition of the message"),
    field(4, "_kafka_offset", "long", "Kafka offset of the message in its partition"),
    field(5, "_kafka_timestamp", "timestamptz", "Kafka message timestamp"),
    field(
      6,
      "_error_kind",
      "string",
      "why: invalid-utf8, not-json, not-object, confluent-framed-without-registry, too-deep, out-of-range, " +
        "not-framed, schema-not-found, unsupported-schema, undecodable (Avro and Protobuf streams), " +
        "type-mismatch, null-in-required, reserved-name, case-collision, missing-dedup-key or bad-envelope",
    ),
    field(
      7,
      "_error",
      "string",
      'what is wrong with the message; for a value that does not fit its column: field "<name>": column type <type>, value type <type>',
    ),
    field(8, "_floe_timestamp", "timestamptz", "when floe wrote the row"),
  ]),
});

function field(id: number, name: string, type: "string" | "int" | "long" | "timestamptz", doc: string): NestedField {
  return Object.freeze({ id, name, required: false, type, doc });
}
