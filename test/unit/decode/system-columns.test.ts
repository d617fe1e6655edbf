// System column values and _floe_id.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { kafkaKeyText, millisToMicros } from "#src/decode/system-columns.ts";
import { formatKeyHash, hashKey } from "#src/upsert/key-hash.ts";

test("_kafka_key is base64 of the key bytes: key 3 is Mw==; no key is null", () => {
  assert.equal(kafkaKeyText(new TextEncoder().encode("3")), "Mw==");
  const shared = new Uint8Array([0xff, 0x33, 0x00]);
  assert.equal(kafkaKeyText(shared.subarray(1, 2)), "Mw==");
  assert.equal(kafkaKeyText(null), null);
  assert.equal(kafkaKeyText(new Uint8Array(0)), "");
});

test("_kafka_key matches Buffer's base64 for every length, short keys and long", () => {
  const bytes = Uint8Array.from({ length: 200 }, (_, i) => (i * 89 + 7) & 0xff);
  for (let length = 0; length <= 200; length++) {
    const key = bytes.subarray(3, 3 + Math.min(length, 197));
    assert.equal(kafkaKeyText(key), Buffer.from(key).toString("base64"), `length ${key.length}`);
  }
});

test("Kafka milliseconds become timestamptz microseconds", () => {
  assert.equal(millisToMicros(1_793_287_324_000), 1_793_287_324_000_000);
  assert.equal(millisToMicros(1_793_287_324_000n), 1_793_287_324_000_000);
  assert.equal(millisToMicros(253_402_300_799_999n), 253_402_300_799_999_000n);
});

const floeId = (values: unknown[]) => formatKeyHash(hashKey(values));

test("_floe_id is the first 128 bits of SHA-256 over the canonical JSON array of the key values", () => {
  const expected = createHash("sha256").update("[3]").digest("hex").slice(0, 32);
  assert.equal(floeId([3]), expected);
  // A long is the same key whether the column builder got a number or a bigint (int -> long widening).
  assert.equal(floeId([3n]), expected);
  assert.equal(floeId(["a", null, true, 1.5]).length, 32);
  assert.equal(
    floeId(["a", null, true, 1.5]),
    createHash("sha256").update('["a",null,true,1.5]').digest("hex").slice(0, 32),
  );
  assert.notEqual(floeId(["1"]), floeId([1]));
  assert.notEqual(floeId(["a,b"]), floeId(["a", "b"]));
});
