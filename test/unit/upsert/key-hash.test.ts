import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import {
  formatKeyHash,
  hashKey,
  KEY_HASH_WORDS,
  keyHashBytes,
  keyHashes,
  parseKeyHash,
  readKeyHashBytes,
} from "#src/upsert/key-hash.ts";

function hex(values: readonly unknown[]): string {
  return formatKeyHash(hashKey(values));
}

describe("key hash", () => {
  test("is the first 16 bytes of SHA-256 over the canonical key text (vectors from Python's hashlib)", () => {
    assert.equal(hex([3]), "06d033ece6645de592db973644cf7357"); // [3]
    assert.equal(hex(["3"]), "26a6ce94f8d2ece150a6caa06e71f7d0"); // ["3"]
    assert.equal(hex(["cust-42"]), "4fd69830536f689288df0603af003381");
    assert.equal(hex([null]), "1d8fc6ceb1f94c6326d6d5483d258fcb");
    assert.equal(hex([true, false]), "153c9dbcc7025ecd7e50ce6d83f19952");
    assert.equal(hex(["a", "b"]), "0473ef2dc0d324ab659d3580c1134e9d");
    assert.equal(hex([2n ** 60n]), "9438a50e46dbafd0c84d57065d2896bc"); // [1152921504606846976]
    assert.equal(hex([1.5]), "f631f85ac97c9aa04448a5cfcd95e45f");
    assert.equal(hex(["é\n"]), "c2d0bdf5b084568fb4cd3a9bab9c2cea"); // ["é\n"], é as UTF-8
  });

  test("the canonical text is JSON with each value typed and delimited", () => {
    const sha = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 32);
    assert.equal(
      hex(['x\u0000"y', -0, 1e-7, 12345678901234567890n]),
      sha('["x\\u0000\\"y",0,1e-7,12345678901234567890]'),
    );
    assert.notEqual(hex([1]), hex(["1"]));
    assert.notEqual(hex(["a", "b"]), hex(["a,b"]));
    assert.notEqual(hex(["a", "b"]), hex(["b", "a"]));
    assert.notEqual(hex([true]), hex(["true"]));
    assert.notEqual(hex([null]), hex(["null"]));
  });

  test("a long hashes the same as a number and as a bigint; a missing value as null", () => {
    assert.equal(hex([3]), hex([3n]));
    assert.equal(hex([-42, 7]), hex([-42n, 7n]));
    assert.equal(hex([Number.MIN_SAFE_INTEGER]), hex([BigInt(Number.MIN_SAFE_INTEGER)]));
    assert.equal(hex([Number.MAX_SAFE_INTEGER]), hex([BigInt(Number.MAX_SAFE_INTEGER)]));
    // Beyond 2^53 a long is a bigint; a number there is a double, written the JCS way.
    assert.notEqual(hex([2 ** 60]), hex([2n ** 60n]));
    assert.equal(hex([undefined]), hex([null]));
  });

  test("refuses values no key column holds instead of merging them", () => {
    assert.throws(() => hashKey([{ id: 1 }]), /not Object/);
    assert.throws(() => hashKey([new Uint8Array(2)]), /not Uint8Array/);
    assert.throws(() => hashKey([Symbol("k")]), /not symbol/);
  });

  test("writes key hash number i of a batch; formats and parses the _floe_id text", () => {
    const hashes = keyHashes(3);
    assert.equal(hashes.length, 3 * KEY_HASH_WORDS);
    hashKey(["b"], hashes, 1);
    assert.deepEqual([...hashes.subarray(0, 4)], [0, 0, 0, 0]);
    assert.equal(formatKeyHash(hashes, 1), hex(["b"]));
    const back = keyHashes(2);
    assert.equal(parseKeyHash(formatKeyHash(hashes, 1), back, 1), true);
    assert.deepEqual([...back.subarray(4, 8)], [...hashes.subarray(4, 8)]);
    assert.equal(parseKeyHash("06D033ECE6645DE592DB973644CF7357", back), false);
    assert.equal(parseKeyHash("06d033ece6645de592db973644cf735", back), false);
  });

  test("the 16-byte _floe_id is the digest's first 16 bytes, the bytes the hex spells", () => {
    const sha = createHash("sha256").update('["cust-42"]').digest().subarray(0, 16);
    assert.deepEqual(keyHashBytes(hashKey(["cust-42"])), new Uint8Array(sha));
    assert.deepEqual([...keyHashBytes(hashKey([3]))], [...Buffer.from("06d033ece6645de592db973644cf7357", "hex")]);
    // Key hash number i of a batch, into a buffer the caller reuses.
    const hashes = keyHashes(3);
    hashKey(["b"], hashes, 2);
    const out = new Uint8Array(16);
    assert.equal(keyHashBytes(hashes, 2, out), out);
    assert.equal(Buffer.from(out).toString("hex"), hex(["b"]));
  });

  test("reads a 16-byte _floe_id back; anything but 16 bytes is no key hash", () => {
    const hashes = keyHashes(2);
    hashKey(["x", 1], hashes, 1);
    const back = keyHashes(2);
    assert.equal(readKeyHashBytes(keyHashBytes(hashes, 1), back, 1), true);
    assert.deepEqual(back, hashes);
    // Both forms of one id read back to the same key hash.
    const fromHex = keyHashes(1);
    assert.equal(parseKeyHash(formatKeyHash(hashes, 1), fromHex), true);
    assert.deepEqual([...fromHex], [...hashes.subarray(4, 8)]);
    assert.equal(readKeyHashBytes(new Uint8Array(15), back), false);
    assert.equal(readKeyHashBytes(new Uint8Array(32), back), false);
    assert.deepEqual([...back.subarray(0, 4)], [0, 0, 0, 0], "a refused id writes nothing");
  });
});
