import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { hashKey, keyHashes } from "#src/upsert/key-hash.ts";
import { ENTRY_WORDS, KeyIndex } from "#src/upsert/key-index.ts";
import { applyChanges, KeyIndexChanges } from "#src/upsert/key-index-changes.ts";
import {
  appendKeyIndexChanges,
  journalPath,
  loadJournaledKeyIndex,
  type SavedKeyIndex,
  saveWholeKeyIndex,
} from "#src/upsert/key-index-journal.ts";
import { Random } from "../../helpers/sync-model.ts";

const SCOPE = "table 0b7e…|_kafka_key|keys-from-dedup-columns";
const KEYS = 400;
const hashes = keyHashes(KEYS);
for (let k = 0; k < KEYS; k++) hashKey([`k${k}`], hashes, k);

/** The live rows of an index, key by key: what any two equal indexes answer alike. */
function contents(index: KeyIndex): { snapshotId: bigint | null; size: number; rows: string[] } {
  const rows: string[] = [];
  for (let k = 0; k < KEYS; k++) {
    const row = index.lookup(hashes, k);
    if (row) rows.push(`k${k} ${row.file}#${row.position}`);
  }
  return { snapshotId: index.snapshotId, size: index.size, rows };
}

/** Random commits and compactions on an index, as a sync and another engine make them. */
function randomChanges(index: KeyIndex, random: Random, files: string[]): void {
  if (files.length > 2 && random.chance(0.2)) {
    const gone = files.splice(random.int(files.length), 1)[0]!;
    index.removeFile(gone);
  }
  const path = `s3://w/t/data/${files.length}-${random.int(1e9)}.parquet`;
  files.push(path);
  const ordinal = index.files.intern(path);
  for (let row = 0, rows = 1 + random.int(60); row < rows; row++) {
    const k = random.int(KEYS);
    if (random.chance(0.15)) index.remove(hashes, k);
    else index.upsert(hashes, k, ordinal, row + (random.chance(0.1) ? 2 ** 31 + 2 ** 30 : 0));
  }
}

describe("key index journal", () => {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "floe-key-index-journal-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("replaying the logged changes on the index as it was gives the index as it is", () => {
    const random = new Random(7);
    for (let round = 0; round < 20; round++) {
      const index = new KeyIndex(SCOPE, 1n);
      const files: string[] = [];
      randomChanges(index, random, files);
      const before = KeyIndex.fromEntries(SCOPE, 1n, index.files.paths(), exported(index));
      const log = new KeyIndexChanges();
      index.changes = log;
      for (let step = 0; step < 8; step++) randomChanges(index, random, files);
      applyChanges(before, log.paths, log.words);
      before.snapshotId = index.snapshotId;
      assert.deepEqual(contents(before), contents(index), `round ${round}`);
    }
  });

  test("an ordinal handed out again names the later file, and the log still names the earlier", () => {
    const index = new KeyIndex(SCOPE, 1n);
    const a = index.files.intern("a.parquet");
    index.upsert(hashes, 0, a, 0);
    const before = KeyIndex.fromEntries(SCOPE, 1n, index.files.paths(), exported(index));
    const log = new KeyIndexChanges();
    index.changes = log;
    index.upsert(hashes, 1, a, 1);
    index.removeFile("a.parquet");
    index.remove(hashes, 0);
    index.remove(hashes, 1);
    const b = index.files.intern("b.parquet");
    assert.equal(b, a, "the ordinal of a.parquet is reused");
    index.upsert(hashes, 2, b, 5);
    applyChanges(before, log.paths, log.words);
    assert.deepEqual(contents(before), contents(index));
    assert.deepEqual(contents(index).rows, ["k2 b.parquet#5"]);
  });

  test("a log past its room says it is full and drops what it held; the index changes all the same", () => {
    const index = new KeyIndex(SCOPE, 1n);
    const log = new KeyIndexChanges(1000);
    index.changes = log;
    const file = index.files.intern("a.parquet");
    let logged = 0;
    for (let k = 0; k < 100; k++) {
      index.upsert(hashes, k, file, k);
      if (!log.full) logged = k + 1;
    }
    // Each upsert takes 24 bytes, after the path's 4 + 3 per character: 40 fit in 1,000 bytes.
    assert.equal(logged, 40);
    assert.ok(log.full);
    assert.deepEqual([log.words.length, log.paths.length, log.byteLength], [0, 0, 0]);
    index.remove(hashes, 0);
    index.removeFile("a.parquet");
    assert.deepEqual([log.words.length, log.paths.length], [0, 0], "a full log records nothing more");
    assert.equal(index.size, 0);
  });

  test("saves append a frame each; a load replays them all, and the index file is written once", async () => {
    const path = join(dir, "append.keyindex");
    const random = new Random(11);
    const index = new KeyIndex(SCOPE, null);
    const files: string[] = [];
    randomChanges(index, random, files);
    let saved = await saveWholeKeyIndex(index, path);
    const indexFile = readFileSync(path);
    for (let commit = 2n; commit < 30n; commit++) {
      randomChanges(index, random, files);
      index.snapshotId = commit * 1_000_000_000_007n;
      saved = await appendKeyIndexChanges(saved, path);
      const loaded = await loadJournaledKeyIndex(path, SCOPE);
      assert.deepEqual(contents(loaded!.index), contents(index), `after commit ${commit}`);
      assert.equal(loaded!.journalBytes, saved.journalBytes);
    }
    assert.deepEqual(readFileSync(path), indexFile, "the index file is as first written");
    // The loaded index records its own changes: it can go on appending.
    const loaded = (await loadJournaledKeyIndex(path, SCOPE))!;
    randomChanges(loaded.index, random, files);
    loaded.index.snapshotId = 99n;
    await appendKeyIndexChanges(loaded, path);
    assert.deepEqual(contents((await loadJournaledKeyIndex(path, SCOPE))!.index), contents(loaded.index));
  });

  test("a torn or corrupt frame ends the replay: the index of the last good frame, never wrong data; the next save cuts it off", async () => {
    const path = join(dir, "torn.keyindex");
    const random = new Random(5);
    const index = new KeyIndex(SCOPE, 1n);
    const files: string[] = [];
    randomChanges(index, random, files);
    let saved = await saveWholeKeyIndex(index, path);
    const states = [contents(index)];
    for (let commit = 2n; commit <= 4n; commit++) {
      randomChanges(index, random, files);
      index.snapshotId = commit;
      saved = await appendKeyIndexChanges(saved, path);
      states.push(contents(index));
    }
    const journal = readFileSync(journalPath(path));
    const stateOf = async () => contents((await loadJournaledKeyIndex(path, SCOPE))!.index);
    for (let length = 0; length < journal.length; length += 7) {
      writeFileSync(journalPath(path), journal.subarray(0, length));
      const state = await stateOf();
      assert.deepEqual(state, states[Number(state.snapshotId) - 1], `journal cut at ${length}`);
    }
    for (let i = 0; i < journal.length; i += 13) {
      const corrupt = Buffer.from(journal);
      corrupt[i]! ^= 1 << (i % 8);
      writeFileSync(journalPath(path), corrupt);
      const state = await stateOf();
      assert.deepEqual(state, states[Number(state.snapshotId) - 1], `byte ${i} flipped`);
      assert.ok(Number(state.snapshotId) <= 4);
    }
    // Torn in the last frame: the load stops at commit 3, and appending from there replaces the tail.
    writeFileSync(journalPath(path), journal.subarray(0, journal.length - 10));
    const loaded = (await loadJournaledKeyIndex(path, SCOPE))!;
    assert.equal(loaded.index.snapshotId, 3n);
    randomChanges(loaded.index, random, files);
    loaded.index.snapshotId = 5n;
    await appendKeyIndexChanges(loaded, path);
    assert.deepEqual(await stateOf(), contents(loaded.index));
  });

  test("a journal of an index file since written whole reads as empty, even if a crash left it behind", async () => {
    const path = join(dir, "whole.keyindex");
    const random = new Random(3);
    const index = new KeyIndex(SCOPE, 1n);
    const files: string[] = [];
    randomChanges(index, random, files);
    let saved: SavedKeyIndex = await saveWholeKeyIndex(index, path);
    randomChanges(index, random, files);
    index.snapshotId = 2n;
    saved = await appendKeyIndexChanges(saved, path);
    const oldJournal = readFileSync(journalPath(path));
    randomChanges(index, random, files);
    index.snapshotId = 3n;
    saved = await saveWholeKeyIndex(index, path);
    assert.equal(existsSync(journalPath(path)), false, "writing the index whole empties its journal");
    writeFileSync(journalPath(path), oldJournal);
    const loaded = (await loadJournaledKeyIndex(path, SCOPE))!;
    assert.deepEqual(contents(loaded.index), contents(index));
    assert.equal(loaded.journalBytes, 0);
    // The next append replaces the foreign journal instead of following it.
    randomChanges(loaded.index, random, files);
    loaded.index.snapshotId = 4n;
    await appendKeyIndexChanges(loaded, path);
    assert.deepEqual(contents((await loadJournaledKeyIndex(path, SCOPE))!.index), contents(loaded.index));
  });

  test("a frame that does not start where the index stands ends the replay", async () => {
    const path = join(dir, "chain.keyindex");
    const index = new KeyIndex(SCOPE, 1n);
    index.upsert(hashes, 0, index.files.intern("a.parquet"), 0);
    const saved = await saveWholeKeyIndex(index, path);
    index.upsert(hashes, 1, index.files.intern("b.parquet"), 0);
    index.snapshotId = 2n;
    // As if the saved form claimed another snapshot than the index file holds.
    await appendKeyIndexChanges({ ...saved, snapshotId: 7n }, path);
    const loaded = (await loadJournaledKeyIndex(path, SCOPE))!;
    assert.equal(loaded.index.snapshotId, 1n);
    assert.deepEqual(contents(loaded.index).rows, ["k0 a.parquet#0"]);
  });
});

function exported(index: KeyIndex): Uint32Array {
  const entries = new Uint32Array(index.size * ENTRY_WORDS);
  index.exportEntries(entries);
  return entries;
}
