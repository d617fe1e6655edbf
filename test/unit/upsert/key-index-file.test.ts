import assert from "node:assert/strict";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { crc32 } from "node:zlib";
import { hashKey, keyHashes } from "#src/upsert/key-hash.ts";
import { KeyIndex } from "#src/upsert/key-index.ts";
import { decodeKeyIndex, loadKeyIndex, saveKeyIndex } from "#src/upsert/key-index-file.ts";

const SCOPE = "table 6f1c…/dedup [id]";

function sampleIndex(keys: number): { index: KeyIndex; hashes: Uint32Array } {
  const hashes = keyHashes(keys);
  for (let k = 0; k < keys; k++) hashKey([k], hashes, k);
  const index = new KeyIndex(SCOPE, -5_000_000_000_000_000_001n);
  const files = ["s3://w/t/data/a.parquet", "s3://w/t/data/b é.parquet", "s3://w/t/data/c.parquet"];
  const ordinals = files.map((f) => index.files.intern(f));
  for (let k = 0; k < keys; k++) index.upsert(hashes, k, ordinals[k % 3]!, Math.imul(k, 0x9e3779b1) >>> 0);
  return { index, hashes };
}

function assertSameIndex(loaded: KeyIndex | undefined, index: KeyIndex, hashes: Uint32Array): void {
  assert.ok(loaded);
  assert.equal(loaded.scope, index.scope);
  assert.equal(loaded.snapshotId, index.snapshotId);
  assert.equal(loaded.size, index.size);
  assert.deepEqual(loaded.files.paths(), index.files.paths());
  for (let k = 0; k < hashes.length / 4; k++) assert.deepEqual(loaded.lookup(hashes, k), index.lookup(hashes, k));
}

describe("key index file", () => {
  let dir = "";
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "floe-key-index-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("round trips entries, data files, snapshot id and scope, leaving no temporary file", async () => {
    const { index, hashes } = sampleIndex(5000);
    const path = join(dir, "round-trip.fkix");
    await saveKeyIndex(index, path);
    assertSameIndex(await loadKeyIndex(path, SCOPE), index, hashes);
    assert.deepEqual(await readdir(dir), ["round-trip.fkix"]);
  });

  test("saves the live entries only, with the removed files' ordinals closed up", async () => {
    const { index, hashes } = sampleIndex(3000);
    index.removeFile("s3://w/t/data/a.parquet");
    const path = join(dir, "removed.fkix");
    await saveKeyIndex(index, path);
    const loaded = await loadKeyIndex(path, SCOPE);
    assertSameIndex(loaded, index, hashes);
    assert.equal(loaded!.files.ordinalOf("s3://w/t/data/b é.parquet"), 1);
    const bytes = await readFile(path);
    assert.equal(bytes.length, 32 + Buffer.byteLength(SCOPE) + 2 * 4 + 50 + 2 + 2000 * 20 + 4);
  });

  test("round trips an empty index with no snapshot, and overwrites an older save", async () => {
    const path = join(dir, "empty.fkix");
    await saveKeyIndex(sampleIndex(10).index, path);
    const empty = new KeyIndex(SCOPE);
    await saveKeyIndex(empty, path);
    assertSameIndex(await loadKeyIndex(path, SCOPE), empty, keyHashes(0));
  });

  test("a missing file, another scope or a foreign file loads as absent", async () => {
    const { index } = sampleIndex(100);
    const path = join(dir, "scoped.fkix");
    await saveKeyIndex(index, path);
    assert.equal(await loadKeyIndex(join(dir, "missing.fkix"), SCOPE), undefined);
    assert.equal(await loadKeyIndex(path, "table 6f1c…/dedup [id, region]"), undefined);
    const foreign = join(dir, "foreign.fkix");
    for (const bytes of [new Uint8Array(0), new TextEncoder().encode('{"not": "an index"}'), new Uint8Array(4096)]) {
      await writeFile(foreign, bytes);
      assert.equal(await loadKeyIndex(foreign, SCOPE), undefined);
    }
  });

  test("every flipped byte and every truncation is detected: absent, never wrong data", async () => {
    const { index, hashes } = sampleIndex(20);
    const path = join(dir, "small.fkix");
    await saveKeyIndex(index, path);
    const bytes = new Uint8Array(await readFile(path));
    assertSameIndex(decodeKeyIndex(bytes, SCOPE), index, hashes);
    for (let i = 0; i < bytes.length; i++) {
      const corrupt = bytes.slice();
      corrupt[i]! ^= 1 << (i % 8);
      assert.equal(decodeKeyIndex(corrupt, SCOPE), undefined, `byte ${i} flipped`);
    }
    for (let length = 0; length < bytes.length; length++) {
      assert.equal(decodeKeyIndex(bytes.subarray(0, length), SCOPE), undefined, `cut at ${length}`);
    }
  });

  test("a file with a valid CRC but inconsistent content loads as absent", async () => {
    const { index } = sampleIndex(20);
    const path = join(dir, "forged.fkix");
    await saveKeyIndex(index, path);
    const bytes = new Uint8Array(await readFile(path));
    const view = new DataView(bytes.buffer);
    const withCrc = (edit: (copy: DataView) => void) => {
      const copy = bytes.slice();
      const v = new DataView(copy.buffer);
      edit(v);
      v.setUint32(copy.length - 4, crc32(copy.subarray(0, copy.length - 4)), true);
      return copy;
    };
    const entriesAt = bytes.length - 4 - 20 * 20;
    const forged = [
      withCrc((v) => v.setUint32(28, 19, true)), // entry count
      withCrc((v) => v.setUint32(24, 2, true)), // data file count
      withCrc((v) => v.setUint32(entriesAt + 12, 4, true)), // an entry naming data file 4 of 3
      withCrc((v) => {
        for (let w = 0; w < 3; w++) v.setUint32(entriesAt + 20 + w * 4, view.getUint32(entriesAt + w * 4, true), true);
      }), // two entries of one key
      withCrc((v) => v.setUint32(4, 1, true)), // version 1: seven words an entry
      withCrc((v) => v.setUint8(32 + 2, 0xff)), // invalid UTF-8
    ];
    for (const [i, copy] of forged.entries()) assert.equal(decodeKeyIndex(copy, SCOPE), undefined, `forgery ${i}`);
  });
});
