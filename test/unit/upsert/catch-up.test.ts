import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CatchUp, catchUp, type DataFileKeys, rebuildKeyIndex } from "#src/upsert/catch-up.ts";
import { hashKey, KEY_HASH_WORDS, keyHashes } from "#src/upsert/key-hash.ts";
import type { KeyIndex } from "#src/upsert/key-index.ts";
import { planDeletes, recordCommit } from "#src/upsert/plan-deletes.ts";

/** A data file whose row r holds key keys[r]. */
function dataFile(path: string, keys: number[], deletedPositions?: number[]): DataFileKeys {
  const keyHashes = new Uint32Array(keys.length * KEY_HASH_WORDS);
  keys.forEach((key, row) => {
    hashKey([key], keyHashes, row);
  });
  return deletedPositions ? { path, keyHashes, deletedPositions } : { path, keyHashes };
}

function where(index: KeyIndex, key: number): string | undefined {
  const location = index.lookup(hashKey([key], keyHashes(1)), 0);
  return location && `${location.file}@${location.position}`;
}

/** Snapshot 1: a holds keys 0..4, b holds 5..9 and a newer row of key 3 (a's row 3 deleted). */
function snapshotOne(): KeyIndex {
  const { index, report } = rebuildKeyIndex("t", 1n, [
    dataFile("a", [0, 1, 2, 3, 4], [3]),
    dataFile("b", [5, 6, 7, 8, 9, 3]),
  ]);
  assert.deepEqual(report, { entriesDropped: 0, rowsIndexed: 10, duplicateKeys: 0, rowsWithoutKey: 0 });
  return index;
}

describe("catch-up", () => {
  test("a rebuild indexes the live rows of every data file, honouring deletion vectors", () => {
    const index = snapshotOne();
    assert.equal(index.snapshotId, 1n);
    assert.equal(index.size, 10);
    assert.equal(where(index, 3), "b@5");
    assert.equal(where(index, 4), "a@4");
  });

  test("compaction removed the files and re-added their live rows in a new one", () => {
    const index = snapshotOne();
    const report = catchUp(index, {
      snapshotId: 2n,
      removedFiles: ["a", "b"],
      deletedRows: [],
      addedFiles: [dataFile("c", [9, 8, 7, 6, 5, 4, 3, 2, 1, 0])],
    });
    assert.deepEqual(report, { entriesDropped: 10, rowsIndexed: 10, duplicateKeys: 0, rowsWithoutKey: 0 });
    assert.equal(index.snapshotId, 2n);
    for (let key = 0; key < 10; key++) assert.equal(where(index, key), `c@${9 - key}`);
    assert.deepEqual(index.files.paths(), ["c"]);
  });

  test("another writer's upsert: a DV on the old row's file and the new row in a new file", () => {
    const index = snapshotOne();
    const report = catchUp(index, {
      snapshotId: 2n,
      removedFiles: [],
      deletedRows: [
        { path: "b", positions: BigInt64Array.of(1n, 5n) }, // keys 6 and 3
        { path: "z", positions: [0] }, // a file the index never had
      ],
      addedFiles: [dataFile("d", [3, 10, 6], [2])], // key 6 deleted again in the same span
    });
    assert.deepEqual(report, { entriesDropped: 2, rowsIndexed: 2, duplicateKeys: 0, rowsWithoutKey: 0 });
    assert.equal(where(index, 3), "d@0");
    assert.equal(where(index, 10), "d@1");
    assert.equal(where(index, 6), undefined);
    assert.equal(index.size, 10);
  });

  test("rows re-added with DVs: deleted positions in any order, repeated, with the file's whole DV", () => {
    const index = snapshotOne();
    catchUp(index, {
      snapshotId: 2n,
      removedFiles: ["a"],
      deletedRows: [{ path: "b", positions: [4, 0, 4] }], // keys 9 and 5
      addedFiles: [dataFile("e", [0, 1, 2, 4, 20, 21], [5, 1, 1, 3])],
    });
    assert.deepEqual(
      [0, 1, 2, 4, 5, 9, 20, 21].map((key) => where(index, key)),
      ["e@0", undefined, "e@2", undefined, undefined, undefined, "e@4", undefined],
    );
    assert.equal(index.size, 7); // b: 6, 7, 8, 3; e: 0, 2, 20
  });

  test("two live rows of one key are counted; the later one wins", () => {
    const index = snapshotOne();
    const report = catchUp(index, {
      snapshotId: 2n,
      removedFiles: [],
      deletedRows: [],
      addedFiles: [dataFile("f", [0, 30, 30]), dataFile("g", [30])],
    });
    assert.deepEqual(report, { entriesDropped: 0, rowsIndexed: 4, duplicateKeys: 3, rowsWithoutKey: 0 });
    assert.equal(where(index, 0), "f@0");
    assert.equal(where(index, 30), "g@0");
    // The earlier rows stay in the table until a commit retires them.
    assert.deepEqual(index.shadowedRows.map((r) => `${index.files.path(r.file)}@${r.position}`).sort(), [
      "a@0",
      "f@1",
      "f@2",
    ]);
    const plan = planDeletes(index, keyHashes(0), { messages: new Uint32Array(0), ops: new Uint8Array(0) });
    assert.deepEqual(
      plan.files.map((f) => [f.path, [...f.positions]]),
      [
        ["a", [0]],
        ["f", [1, 2]],
      ],
    );
    assert.equal(plan.duplicatesRetired, 3);
    recordCommit(index, keyHashes(0), { messages: new Uint32Array(0), ops: new Uint8Array(0) }, [], 3n);
    assert.deepEqual(index.shadowedRows, []);
  });

  test("a shadowed row that went meanwhile (file removed, or a DV on it) needs no retiring", () => {
    const index = snapshotOne();
    catchUp(index, {
      snapshotId: 2n,
      removedFiles: [],
      deletedRows: [],
      addedFiles: [dataFile("f", [0, 5, 31, 31])],
    });
    assert.equal(index.shadowedRows.length, 3); // a@0, b@0, f@2
    catchUp(index, {
      snapshotId: 3n,
      removedFiles: ["a"],
      deletedRows: [{ path: "f", positions: [2] }],
      addedFiles: [],
    });
    assert.deepEqual(
      index.shadowedRows.map((r) => `${index.files.path(r.file)}@${r.position}`),
      ["b@0"],
    );
  });

  test("a copy of an older row (row lineage kept by a copy-on-write rewrite) does not win over a row written in between", () => {
    // Sequence 1: a holds 0..4. 2: another writer inserts key 3 again (file s). 3: a copy-on-write
    // rewrite of a copies its rows into r, keeping their last-updated sequence number 1; its new
    // row of key 9 has none (it inherits 3).
    const { index } = rebuildKeyIndex("t", 1n, [{ ...dataFile("a", [0, 1, 2, 3, 4]), sequenceNumber: 1 }]);
    const sequences = new Map([["s", 2]]);
    const run = new CatchUp(index, ["a"], [], (path) => sequences.get(path));
    run.add({ ...dataFile("s", [3]), sequenceNumber: 2 });
    run.add({
      ...dataFile("r", [0, 1, 2, 3, 4, 9]),
      sequenceNumber: 3,
      rowSequenceNumbers: Float64Array.of(1, 1, 1, 1, 1, Number.NaN),
    });
    const report = run.finish(3n);
    assert.equal(report.duplicateKeys, 1);
    assert.equal(where(index, 3), "s@0");
    assert.equal(where(index, 9), "r@5");
    assert.deepEqual(
      index.shadowedRows.map((r) => `${index.files.path(r.file)}@${r.position}`),
      ["r@3"],
    );
    assert.equal(index.size, 6);
  });

  test("rows without a key are not indexed, and counted", () => {
    const index = snapshotOne();
    const report = catchUp(index, {
      snapshotId: 2n,
      removedFiles: [],
      deletedRows: [],
      addedFiles: [{ ...dataFile("u", [50, 0, 51]), unkeyedRows: [1] }],
    });
    assert.deepEqual(report, { entriesDropped: 0, rowsIndexed: 2, duplicateKeys: 0, rowsWithoutKey: 1 });
    assert.equal(where(index, 0), "a@0");
  });

  test("a file the index already holds is indexed anew, not counted as duplicates", () => {
    const index = snapshotOne();
    const report = catchUp(index, {
      snapshotId: 2n,
      removedFiles: [],
      deletedRows: [],
      addedFiles: [dataFile("b", [5, 6, 7, 8, 9, 3], [0])],
    });
    assert.deepEqual(report, { entriesDropped: 6, rowsIndexed: 5, duplicateKeys: 0, rowsWithoutKey: 0 });
    assert.equal(where(index, 5), undefined);
    assert.equal(where(index, 3), "b@5");
  });

  test("catching up step by step ends where a rebuild of the final table does", () => {
    const index = snapshotOne();
    catchUp(index, {
      snapshotId: 2n,
      removedFiles: ["a"],
      deletedRows: [{ path: "b", positions: [2] }],
      addedFiles: [dataFile("h", [0, 1, 2, 4, 40])],
    });
    const { index: rebuilt } = rebuildKeyIndex("t", 2n, [
      dataFile("b", [5, 6, 7, 8, 9, 3], [2]),
      dataFile("h", [0, 1, 2, 4, 40]),
    ]);
    assert.equal(index.size, rebuilt.size);
    for (let key = 0; key <= 40; key++) assert.equal(where(index, key), where(rebuilt, key), `key ${key}`);
  });
});
