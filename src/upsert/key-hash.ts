// The key hash: a row's identity for upserts, 128 bits of SHA-256 over the canonical text of its
// dedup key values. The key index keys on it, and `_floe_id` holds it, so the index can be rebuilt
// from the `_floe_id` column alone and any engine can recompute an id from the key columns.
//
//   key hash = first 16 bytes of SHA-256(UTF-8(canonical key text))
//
// `_floe_id` holds those 16 bytes in digest order (a fixed[16] or binary column, floe's form since
// tables were created with fixed[16]), or, in a string column (tables created before), their 32
// lowercase hex digits: the same digest either way, so an id of one form converts to the other.
//
// The canonical key text is the JSON array of the key values in dedup_keys order, as RFC 8785 (JCS)
// writes them: strings as JSON.stringify, numbers as Number.prototype.toString, booleans, null for a
// missing value, and one extension: a bigint as its exact decimal digits. The array syntax tags each
// value's type and delimits it, so 1 and "1" differ and ["a","b"] and ["a,b"] differ, while a long
// hashes the same held as a number or as a bigint (3 and 3n). Longs beyond 2^53 are bigints in a
// column (src/decode/column-value.ts); a number that large is a double and prints as JCS prints it.
//
// Why 128 bits: for n distinct keys the chance of any collision is about n^2 / 2^129; a table of
// 10^12 keys stays below 10^-14. Why SHA-256 rather than MurmurHash3 (about 3x faster in JS): a collision
// makes an upsert delete another key's row, Kafka producers are not always ours to trust, and
// MurmurHash3 has seed-independent multicollisions that anyone can construct, while truncated SHA-256
// still takes 2^64 work to collide. With the CPU's SHA extensions a hash costs ~0.4 µs, a small part
// of a message's way through the sync (bench/key-index.ts measures it).
import { hash } from "node:crypto";

/** A key hash is four uint32 words: the digest's bytes 0..15 read as little-endian words. */
export const KEY_HASH_WORDS = 4;

/** Room for `count` key hashes, the i-th at words [4i, 4i + 4). */
export function keyHashes(count: number): Uint32Array {
  return new Uint32Array(count * KEY_HASH_WORDS);
}

/**
 * Hashes one key's values into `out` at key hash number `index`, and returns `out`.
 * Values are what the key columns hold: string, number, bigint, boolean, null or undefined (missing).
 */
export function hashKey(values: readonly unknown[], out: Uint32Array = keyHashes(1), index = 0): Uint32Array {
  let text = "[";
  for (let i = 0; i < values.length; i++) {
    if (i > 0) text += ",";
    text += canonical(values[i]);
  }
  // A "binary" (latin1) digest is a 32-character string, one character per byte: no Buffer to
  // allocate and collect per message, which makes it ~3x faster than a "buffer" digest here.
  const digest = hash("sha256", `${text}]`, "binary");
  const at = index * KEY_HASH_WORDS;
  for (let w = 0; w < KEY_HASH_WORDS; w++) {
    const b = w * 4;
    out[at + w] =
      (digest.charCodeAt(b) |
        (digest.charCodeAt(b + 1) << 8) |
        (digest.charCodeAt(b + 2) << 16) |
        (digest.charCodeAt(b + 3) << 24)) >>>
      0;
  }
  return out;
}

function canonical(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      // String(-0) is "0", as JCS wants; a safe integer prints all its digits, as its bigint does.
      return String(value);
    case "bigint":
      return value.toString();
    case "boolean":
      return value ? "true" : "false";
    case "undefined":
      return "null";
    default:
      if (value === null) return "null";
      // Hashing it as null would merge distinct keys: refuse instead.
      throw new TypeError(
        `a dedup key value must be a string, number, bigint, boolean or null, not ${describe(value)}`,
      );
  }
}

function describe(value: unknown): string {
  return typeof value === "object" ? (value?.constructor?.name ?? "object") : typeof value;
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** The `_floe_id` text of key hash number `index`: 32 lowercase hex digits, digest byte order. */
export function formatKeyHash(hashes: Uint32Array, index = 0): string {
  let text = "";
  for (let w = 0; w < KEY_HASH_WORDS; w++) {
    const word = hashes[index * KEY_HASH_WORDS + w]!;
    text += HEX[word & 0xff]! + HEX[(word >>> 8) & 0xff]! + HEX[(word >>> 16) & 0xff]! + HEX[word >>> 24]!;
  }
  return text;
}

/** Reads a hex `_floe_id` back into `out` at key hash number `index`; false if it is not 32 hex digits. */
export function parseKeyHash(text: string, out: Uint32Array, index = 0): boolean {
  if (!/^[0-9a-f]{32}$/.test(text)) return false;
  for (let w = 0; w < KEY_HASH_WORDS; w++) {
    let word = 0;
    for (let b = 3; b >= 0; b--)
      word = (word << 8) | Number.parseInt(text.slice((w * 4 + b) * 2, (w * 4 + b) * 2 + 2), 16);
    out[index * KEY_HASH_WORDS + w] = word >>> 0;
  }
  return true;
}

/** The 16 bytes of key hash number `index`, digest order, written into `out` (the `_floe_id` bytes). */
export function keyHashBytes(hashes: Uint32Array, index = 0, out: Uint8Array = new Uint8Array(16)): Uint8Array {
  for (let w = 0; w < KEY_HASH_WORDS; w++) {
    const word = hashes[index * KEY_HASH_WORDS + w]!;
    out[w * 4] = word & 0xff;
    out[w * 4 + 1] = (word >>> 8) & 0xff;
    out[w * 4 + 2] = (word >>> 16) & 0xff;
    out[w * 4 + 3] = word >>> 24;
  }
  return out;
}

/** Reads a 16-byte `_floe_id` back into `out` at key hash number `index`; false if it is not 16 bytes. */
export function readKeyHashBytes(bytes: Uint8Array, out: Uint32Array, index = 0): boolean {
  if (bytes.length !== 16) return false;
  for (let w = 0; w < KEY_HASH_WORDS; w++) {
    const b = w * 4;
    out[index * KEY_HASH_WORDS + w] =
      (bytes[b]! | (bytes[b + 1]! << 8) | (bytes[b + 2]! << 16) | (bytes[b + 3]! << 24)) >>> 0;
  }
  return true;
}
