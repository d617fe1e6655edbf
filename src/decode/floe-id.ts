// `_floe_id`: the identity of a row's key, the same 128-bit hash the key index keys on.
//
//   _floe_id = lowercase hex of the first 16 bytes of SHA-256(UTF-8(canonical key text))
//
// The canonical key text is the JSON array of the dedup key values, in the order of the
// stream's dedup_keys, as they are stored in the table's columns, written as RFC 8785 (JCS)
// writes them: strings as ECMAScript's JSON.stringify, numbers as ECMAScript's
// Number.prototype.toString, with one extension: a long beyond 2^53 as its exact decimal
// digits. A timestamptz is its microseconds since the epoch, a JSON-text column its text, a
// missing value null. So `{"id": 3}` with dedup_keys [id] gives the text `[3]`, and any tool
// can recompute the id from the table.
//
// Why SHA-256 and not a faster non-cryptographic hash: two keys with one hash make an upsert
// delete another key's row, and producers are not always ours to trust. With SHA extensions
// it costs ~0.35 µs per row here (MD5 ~0.42 µs; a JS MurmurHash3 x86_128 ~0.12 µs with hex).
// Because the text is built from column values, int -> long widening leaves every id as it was.
import { hash } from "node:crypto";
import type { ColumnValue } from "./column-value.ts";

/** 32 hex characters: 128 bits. */
export const FLOE_ID_HEX_LENGTH = 32;

export function floeId(keyValues: readonly ColumnValue[]): string {
  let text = "[";
  for (let i = 0; i < keyValues.length; i++) {
    if (i > 0) text += ",";
    text += canonical(keyValues[i]!);
  }
  return hash("sha256", `${text}]`, "hex").slice(0, FLOE_ID_HEX_LENGTH);
}

function canonical(value: ColumnValue): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      // Non-finite numbers do not come out of JSON; String(-0) is "0", as JCS wants.
      return String(value);
    case "bigint":
      return value.toString();
    case "boolean":
      return value ? "true" : "false";
    default:
      return "null";
  }
}
