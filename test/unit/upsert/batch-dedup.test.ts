import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dedupBatch, OP_CREATE, OP_DELETE, OP_TYPE, OP_UPDATE } from "#src/upsert/batch-dedup.ts";
import { hashKey, keyHashes } from "#src/upsert/key-hash.ts";
import { KeyIndex } from "#src/upsert/key-index.ts";

function batch(keys: readonly unknown[]): Uint32Array {
  const hashes = keyHashes(keys.length);
  keys.forEach((key, i) => {
    hashKey([key], hashes, i);
  });
  return hashes;
}

describe("dedupBatch", () => {
  test("the last offset per key wins, winners in offset order, with their _op_type", () => {
    const index = new KeyIndex("t");
    const file = index.files.intern("a");
    const known = batch(["k1", "k2"]);
    index.upsert(known, 0, file, 0);
    index.upsert(known, 1, file, 1);
    //                   0     1     2     3     4     5     6
    const hashes = batch(["k1", "n1", "k1", "n2", "k2", "n1", "n3"]);
    const tombstones = Uint8Array.of(0, 0, 0, 0, 1, 1, 1);
    const { messages, ops } = dedupBatch(hashes, tombstones, index);
    assert.deepEqual([...messages], [2, 3, 4, 5, 6]);
    assert.deepEqual([...ops], [OP_UPDATE, OP_CREATE, OP_DELETE, OP_DELETE, OP_DELETE]);
    assert.deepEqual(
      [...ops].map((op) => OP_TYPE[op]),
      ["u", "c", "d", "d", "d"],
    );
  });

  test("an empty batch has no winners; mismatched tombstone flags are refused", () => {
    const index = new KeyIndex("t");
    assert.deepEqual(dedupBatch(keyHashes(0), new Uint8Array(0), index), {
      messages: new Uint32Array(0),
      ops: new Uint8Array(0),
    });
    assert.throws(() => dedupBatch(keyHashes(2), new Uint8Array(1), index), RangeError);
  });

  test("matches a Map model on random batches with many repeats", () => {
    let seed = 11;
    const next = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const index = new KeyIndex("t");
    const file = index.files.intern("a");
    const known = batch(Array.from({ length: 500 }, (_, k) => k));
    for (let k = 0; k < 500; k += 2) index.upsert(known, k, file, k);
    for (const size of [1, 17, 1000, 20_000]) {
      const keys = Array.from({ length: size }, () => Math.floor(next() * Math.max(4, size / 3)));
      const tombstones = Uint8Array.from(keys, () => (next() < 0.1 ? 1 : 0));
      const last = new Map<number, number>();
      keys.forEach((key, i) => {
        last.set(key, i);
      });
      const expected = [...last.values()].sort((a, b) => a - b);
      const { messages, ops } = dedupBatch(batch(keys), tombstones, index);
      assert.deepEqual([...messages], expected);
      expected.forEach((m, w) => {
        const op = tombstones[m] ? OP_DELETE : keys[m]! < 500 && keys[m]! % 2 === 0 ? OP_UPDATE : OP_CREATE;
        assert.equal(ops[w], op, `message ${m}`);
      });
    }
  });
});

describe("dedupBatch by source position", () => {
  test("the highest position per key wins whatever the offsets; an equal one (a duplicate) takes the later offset; a tombstone follows its delete", () => {
    const index = new KeyIndex("t");
    //                   0     1     2     3     4     5     6
    const hashes = batch(["a", "a", "a", "b", "b", "c", "c"]);
    const tombstones = Uint8Array.of(0, 0, 0, 0, 1, 1, 0);
    //                  newer  older  dup of 0   delete  its tombstone  delete  a replayed older create
    const positions = ["05", "03", "05", "07", null, "09", "02"];
    const winners = dedupBatch(hashes, tombstones, index, positions);
    assert.deepEqual([...winners.messages], [2, 4, 5]);
    assert.deepEqual([...winners.ops], [OP_CREATE, OP_DELETE, OP_DELETE]);
    // The tombstone carries the position of the delete before it.
    assert.deepEqual(winners.positions, ["05", "07", "09"]);
  });

  test("without positions, the last offset wins", () => {
    const index = new KeyIndex("t");
    const winners = dedupBatch(batch(["a", "a"]), Uint8Array.of(0, 0), index);
    assert.deepEqual([...winners.messages], [1]);
    assert.equal(winners.positions, undefined);
  });
});
