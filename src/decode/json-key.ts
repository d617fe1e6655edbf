// A Kafka key as a record of fields, for the key columns of a stream: a JSON object, or the
// `{schema, payload}` that Kafka Connect's JsonConverter writes (Debezium's key is the source
// table's primary key, `{"id": 1}`, so wrapped), whose logical types are applied as the value's
// are. Any other key (not JSON, not an object, absent) has no fields.

import { unwrapEnvelope } from "./cdc-envelope.ts";
import { applyLogicalTypes } from "./connect-logical-types.ts";
import { decodeJsonMessage, type JsonRecord } from "./json-message.ts";

export function jsonKeyFields(key: Uint8Array | null): JsonRecord | undefined {
  if (key === null) return undefined;
  const decoded = decodeJsonMessage(key);
  if (decoded.kind !== "record") return undefined;
  const { payload, schema } = unwrapEnvelope(decoded.record);
  if (schema !== undefined) applyLogicalTypes(payload, schema);
  return payload;
}
