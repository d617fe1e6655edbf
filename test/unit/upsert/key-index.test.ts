import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { KEY_HASH_WORDS } from "#src/upsert/key-hash.ts";
import { ENTRY_WORDS, KeyIndex, MAX_POSITION } from "#src/upsert/key-index.ts";

/** A deterministic PRNG (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * A universe of `count` distinct key hashes. Clustered ones share few first words, whose top bits
 * pick the home slot, so probes run long and wrap around the end of the slots.
 */
function universe(count: number, clustered: boolean, next: () => number): Uint32Array {
  const hashes = new Uint32Array(count * KEY_HASH_WORDS);
  const firstWords = [0xffffffff, 0xfffffff0, 0, 0x7fffffff, 0x80000000];
  for (let k = 0; k < count; k++) {
    const at = k * KEY_HASH_WORDS;
    hashes[at] = clustered ? firstWords[k % firstWords.length]! : (next() * 2 ** 32) >>> 0;
    hashes[at + 1] = k; // distinct keys
    hashes[at + 2] = (next() * 2 ** 32) >>> 0;
    hashes[at + 3] = (next() * 2 ** 32) >>> 0;
  }
  return hashes;
}

interface Row {
  file: string;
  position: number;
}

/** Runs `operations` random operations against the index and a Map, comparing every answer. */
function runAgainstModel(operations: number, keys: number, clustered: boolean, seed: number): KeyIndex {
  const next = random(seed);
  const hashes = universe(keys, clustered, next);
  const index = new KeyIndex("t");
  const model = new Map<number, Row>();
  const files = Array.from({ length: 12 }, (_, i) => `s3://w/t/data/f${i}.parquet`);
  const check = (key: number) => assert.deepEqual(index.lookup(hashes, key), model.get(key), `key ${key}`);

  for (let op = 0; op < operations; op++) {
    const key = Math.floor(next() * keys);
    const r = next();
    if (r < 0.55) {
      const file = files[Math.floor(next() * files.length)]!;
      const position = next() < 0.1 ? Math.floor(next() * (MAX_POSITION + 1)) : Math.floor(next() * 1e6);
      assert.equal(index.upsert(hashes, key, index.files.intern(file), position), model.has(key));
      model.set(key, { file, position });
    } else if (r < 0.8) {
      assert.equal(index.remove(hashes, key), model.has(key));
      model.delete(key);
    } else if (r < 0.8015) {
      // Compaction drops a file; its path comes back later with other rows.
      const file = files[Math.floor(next() * files.length)]!;
      let dropped = 0;
      for (const [k, row] of model) {
        if (row.file === file) {
          model.delete(k);
          dropped++;
        }
      }
      assert.equal(index.removeFile(file), dropped);
    } else {
      check(key);
    }
    assert.equal(index.size, model.size);
  }
  for (let key = 0; key < keys; key++) check(key);
  return index;
}

describe("KeyIndex", () => {
  test("matches a Map under 100k random operations: growth, removal, removed files", () => {
    const index = runAgainstModel(100_000, 30_000, false, 1);
    assert.equal(ENTRY_WORDS, 5);
    assert.ok(index.byteLength >= index.size * 20, "20 bytes a slot");
  });

  test("matches a Map when keys pile up on a few home slots and wrap around the end", () => {
    runAgainstModel(20_000, 3_000, true, 2);
  });

  test("an entry of a removed file reads as absent, even when its path comes back", () => {
    const hashes = universe(3, false, random(3));
    const index = new KeyIndex("t", 7n);
    const a = index.files.intern("a");
    index.upsert(hashes, 0, a, 5);
    index.upsert(hashes, 1, a, 6);
    assert.equal(index.removeFile("a"), 2);
    assert.equal(index.removeFile("a"), 0);
    assert.equal(index.size, 0);
    assert.equal(index.find(hashes, 0), -1);
    const again = index.files.intern("a");
    assert.equal(index.lookup(hashes, 1), undefined);
    assert.equal(index.upsert(hashes, 1, again, 9), false, "a removed file's row is not a live row");
    assert.deepEqual(index.lookup(hashes, 1), { file: "a", position: 9 });
    assert.equal(index.remove(hashes, 0), false);
    assert.equal(index.size, 1);
    assert.equal(index.snapshotId, 7n);
  });

  test("ordinals of removed files are handed out again once no entry refers to them", () => {
    const hashes = universe(1000, false, random(4));
    const index = new KeyIndex("t");
    for (let round = 0; round < 50; round++) {
      const file = index.files.intern(`f${round}`);
      for (let k = 0; k < 1000; k++) index.upsert(hashes, k, file, k);
      if (round > 0) assert.equal(index.removeFile(`f${round - 1}`), 0, "every key moved on");
    }
    assert.ok(index.files.ordinalLimit <= 3, `ordinals reused: limit ${index.files.ordinalLimit}`);
    assert.deepEqual(index.files.paths(), ["f49"]);
  });

  test("find, fileAt and positionAt answer without allocating; positions up to 2^32 - 1", () => {
    const hashes = universe(2, false, random(5));
    const index = new KeyIndex("t");
    const file = index.files.intern("f");
    index.upsert(hashes, 0, file, 2 ** 32 - 1);
    const slot = index.find(hashes, 0);
    assert.equal(index.fileAt(slot), file);
    assert.equal(index.positionAt(slot), 2 ** 32 - 1);
    assert.equal(index.find(hashes, 1), -1);
  });

  test("keys whose hashes differ only in the fourth word are one key: the index keeps 96 bits", () => {
    const hashes = universe(2, false, random(7));
    hashes.copyWithin(4, 0, 3);
    hashes[7] = hashes[3]! ^ 1;
    const index = new KeyIndex("t");
    const file = index.files.intern("f");
    assert.equal(index.upsert(hashes, 0, file, 1), false);
    assert.equal(index.upsert(hashes, 1, file, 2), true);
    assert.deepEqual(index.lookup(hashes, 0), { file: "f", position: 2 });
    assert.equal(index.size, 1);
  });

  test("refuses a position that does not fit a word and a file it does not know", () => {
    const hashes = universe(1, false, random(6));
    const index = new KeyIndex("t");
    const file = index.files.intern("f");
    for (const position of [-1, 1.5, 2 ** 32, 2 ** 53, Number.NaN]) {
      assert.throws(() => index.upsert(hashes, 0, file, position), RangeError);
    }
    assert.throws(() => index.upsert(hashes, 0, 99, 0), RangeError);
    assert.equal(index.size, 0);
  });

  test("removeRows drops the entries a deletion vector retired in files that stay", () => {
    const hashes = universe(100, true, random(7));
    const index = new KeyIndex("t");
    const a = index.files.intern("a");
    const b = index.files.intern("b");
    for (let k = 0; k < 100; k++) index.upsert(hashes, k, k % 2 === 0 ? a : b, Math.floor(k / 2));
    // Keys 0, 4, 8 are rows 0, 2, 4 of a; key 3 is row 1 of b; row 70 of b is no entry.
    const removed = index.removeRows(
      new Map([
        [a, Float64Array.of(0, 2, 4)],
        [b, Float64Array.of(1, 70)],
      ]),
    );
    assert.equal(removed, 4);
    assert.equal(index.size, 96);
    for (let k = 0; k < 100; k++) {
      const gone = k === 0 || k === 4 || k === 8 || k === 3;
      assert.equal(index.find(hashes, k) === -1, gone, `key ${k}`);
    }
  });
});
