import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dedupBatch } from "#src/upsert/batch-dedup.ts";
import { hashKey, keyHashes } from "#src/upsert/key-hash.ts";
import { KeyIndex } from "#src/upsert/key-index.ts";
import { planDeletes, recordCommit } from "#src/upsert/plan-deletes.ts";

function batch(keys: readonly number[]): Uint32Array {
  const hashes = keyHashes(keys.length);
  keys.forEach((key, i) => {
    hashKey([key], hashes, i);
  });
  return hashes;
}

/** Commits one batch the way the sync does, every written winner into one new data file. */
function sync(index: KeyIndex, keys: number[], tombstones: number[], path: string, snapshotId: bigint) {
  const hashes = batch(keys);
  const winners = dedupBatch(hashes, Uint8Array.from(tombstones), index);
  const plan = planDeletes(index, hashes, winners);
  const rows = winners.messages.filter((_, w) => winners.ops[w] !== 2);
  recordCommit(index, hashes, winners, [{ path, messages: rows }], snapshotId);
  return plan;
}

describe("planDeletes and recordCommit", () => {
  test("the first sync deletes nothing; the second retires old rows grouped by file, ascending", () => {
    const index = new KeyIndex("t");
    const first = sync(index, [10, 11, 12, 13, 10], [0, 0, 0, 0, 0], "f1", 1n);
    assert.deepEqual(first, { files: [], positionsDeleted: 0, duplicatesRetired: 0 });
    assert.equal(index.snapshotId, 1n);
    // f1 rows: 0 -> 11, 1 -> 12, 2 -> 13, 3 -> 10
    sync(index, [20, 21], [0, 0], "f2", 2n); // f2 rows: 0 -> 20, 1 -> 21
    const plan = sync(index, [21, 13, 11, 99, 20, 10, 30], [0, 0, 1, 1, 0, 0, 0], "f3", 3n);
    assert.deepEqual(
      plan.files.map((f) => ({ path: f.path, positions: [...f.positions] })),
      [
        { path: "f1", positions: [0, 2, 3] }, // 11 deleted, 13 and 10 updated
        { path: "f2", positions: [0, 1] },
      ],
    );
    assert.equal(plan.positionsDeleted, 5);
    // f3 rows: 0 -> 21, 1 -> 13, 2 -> 20, 3 -> 10, 4 -> 30; 11 gone, 99 never was
    const where = (key: number) => index.lookup(batch([key]), 0);
    assert.deepEqual(where(21), { file: "f3", position: 0 });
    assert.deepEqual(where(30), { file: "f3", position: 4 });
    assert.deepEqual(where(12), { file: "f1", position: 1 });
    assert.equal(where(11), undefined);
    assert.equal(where(99), undefined);
    assert.equal(index.size, 6);
    assert.equal(index.snapshotId, 3n);
  });

  test("planning leaves the index as it was, so a failed commit has nothing to undo", () => {
    const index = new KeyIndex("t", 1n);
    sync(index, [1, 2, 3], [0, 0, 0], "f1", 1n);
    const hashes = batch([3, 2, 1]);
    const winners = dedupBatch(hashes, new Uint8Array(3), index);
    const plan = planDeletes(index, hashes, winners);
    assert.deepEqual([...plan.files[0]!.positions], [0, 1, 2]);
    assert.deepEqual([...planDeletes(index, hashes, winners).files[0]!.positions], [0, 1, 2]);
    assert.deepEqual(index.lookup(hashes, 0), { file: "f1", position: 2 });
    assert.equal(index.snapshotId, 1n);
  });

  test("rows may be spread over several new data files in any order", () => {
    const index = new KeyIndex("t");
    const hashes = batch([5, 6, 7, 8]);
    const winners = dedupBatch(hashes, new Uint8Array(4), index);
    recordCommit(
      index,
      hashes,
      winners,
      [
        { path: "p=a/f", messages: Uint32Array.of(2, 0) },
        { path: "p=b/f", messages: Uint32Array.of(3, 1) },
      ],
      9n,
    );
    assert.deepEqual(index.lookup(hashes, 0), { file: "p=a/f", position: 1 });
    assert.deepEqual(index.lookup(hashes, 1), { file: "p=b/f", position: 1 });
    assert.deepEqual(index.lookup(hashes, 3), { file: "p=b/f", position: 0 });
  });

  test("matches a model table over many random batches", () => {
    let seed = 5;
    const next = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const index = new KeyIndex("t");
    /** key -> "file@position" of its live row */
    const table = new Map<number, string>();
    for (let b = 0; b < 40; b++) {
      const keys = Array.from({ length: 200 }, () => Math.floor(next() * 600));
      const tombstones = keys.map(() => (next() < 0.15 ? 1 : 0));
      const path = `f${b}`;
      const plan = sync(index, keys, tombstones, path, BigInt(b + 1));
      // The model: the last message per key decides; an existing row is retired either way.
      const last = new Map<number, number>();
      keys.forEach((key, i) => {
        last.set(key, i);
      });
      const retired = new Map<string, number[]>();
      let row = 0;
      for (const [key, i] of [...last].sort((x, y) => x[1] - y[1])) {
        const old = table.get(key);
        if (old) {
          const [file, position] = old.split("@");
          retired.set(file!, [...(retired.get(file!) ?? []), Number(position)]);
        }
        if (tombstones[i]) table.delete(key);
        else table.set(key, `${path}@${row++}`);
      }
      const expected = [...retired]
        .map(([file, positions]) => ({ path: file, positions: positions.sort((x, y) => x - y) }))
        .sort((x, y) => Number(x.path.slice(1)) - Number(y.path.slice(1)));
      assert.deepEqual(
        plan.files.map((f) => ({ path: f.path, positions: [...f.positions] })),
        expected,
      );
      assert.equal(index.size, table.size);
    }
  });
});
