// The manifest read cache: bounded by the estimated bytes it holds (least recently used out
// first), one load per location however many ask at once, nothing kept of a failed load, and one
// cache per catalog, checked through planFiles on the embedded SQLite catalog.
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { openSqlCatalog, type SqlCatalog } from "#src/iceberg/catalog/sql-catalog.ts";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import type { FileIO } from "#src/iceberg/io/file-io.ts";
import { LocalFileIO } from "#src/iceberg/io/local-file-io.ts";
import { ManifestCache, manifestCacheOf } from "#src/iceberg/scan/manifest-cache.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import { arrowRows, narrowFields } from "../../../helpers/tables.ts";

/** Loads `${location} value`, counting loads by location. */
function loader() {
  const loads = new Map<string, number>();
  const get = (cache: ManifestCache, location: string, bytes: number) =>
    cache.get(
      location,
      async () => {
        loads.set(location, (loads.get(location) ?? 0) + 1);
        return `${location} value`;
      },
      () => bytes,
    );
  return { loads, get };
}

test("holds at most its bound in bytes, the least recently used going first", async () => {
  const cache = new ManifestCache(100);
  const { loads, get } = loader();
  await get(cache, "a", 40);
  await get(cache, "b", 40);
  assert.equal(cache.bytes, 80);
  // Using a makes b the least recently used: c pushes b out, not a.
  assert.equal(await get(cache, "a", 40), "a value");
  await get(cache, "c", 40);
  assert.equal(cache.bytes, 80);
  assert.deepEqual([cache.has("a"), cache.has("b"), cache.has("c")], [true, false, true]);
  await get(cache, "a", 40);
  await get(cache, "b", 40);
  assert.deepEqual(Object.fromEntries(loads), { a: 1, b: 2, c: 1 });
  assert.ok(cache.bytes <= cache.maxBytes);
  // Many more values than fit: the bound holds throughout.
  for (let i = 0; i < 50; i++) {
    await get(cache, `x${i}`, 30);
    assert.ok(cache.bytes <= 100, `after x${i}: ${cache.bytes} bytes`);
  }
  assert.equal(cache.size, 3);
});

test("a value heavier than the whole bound is returned and not kept, and pushes nothing out", async () => {
  const cache = new ManifestCache(100);
  const { loads, get } = loader();
  await get(cache, "small", 10);
  assert.equal(await get(cache, "huge", 500), "huge value");
  assert.equal(cache.has("huge"), false);
  assert.equal(cache.has("small"), true);
  assert.equal(cache.bytes, 10);
  await get(cache, "huge", 500);
  assert.equal(loads.get("huge"), 2);
});

test("callers asking at once share one load; a failed load is not kept", async () => {
  const cache = new ManifestCache(100);
  const { loads, get } = loader();
  const [a, b] = await Promise.all([get(cache, "m", 10), get(cache, "m", 10)]);
  assert.equal(a, b);
  assert.equal(loads.get("m"), 1);
  let attempts = 0;
  const failing = () =>
    cache.get(
      "broken",
      async () => {
        attempts++;
        throw new Error("unreadable");
      },
      () => 1,
    );
  await assert.rejects(failing(), /unreadable/);
  await assert.rejects(failing(), /unreadable/);
  assert.equal(attempts, 2);
  assert.equal(cache.has("broken"), false);
});

test("the bound must be a number of bytes", () => {
  assert.throws(() => new ManifestCache(Number.NaN), /manifest cache: the bound must be a number of bytes >= 0/);
  assert.throws(() => new ManifestCache(-1), RangeError);
});

let warehouse: string;
let reads: string[];
let catalogs: SqlCatalog[];

/** A FileIO of the local disk that records every whole-file read. */
class CountingFileIO extends LocalFileIO implements FileIO {
  override async read(location: string): Promise<Uint8Array> {
    reads.push(location);
    return super.read(location);
  }
}

before(async () => {
  warehouse = await mkdtemp(join(tmpdir(), "floe-manifest-cache-"));
  reads = [];
  const open = () => openSqlCatalog({ warehouse, name: "floe", fileIO: () => new CountingFileIO() });
  catalogs = [await open(), await open()];
});
after(async () => {
  for (const catalog of catalogs) await catalog.close();
  await rm(warehouse, { recursive: true, force: true });
});

test("each catalog has its cache: its tables share it, another catalog's tables read the files again", async () => {
  const [one, two] = catalogs as [SqlCatalog, SqlCatalog];
  await one.createNamespace(["ns"]);
  const identifier = { namespace: ["ns"], name: "t" };
  const table = new Table(
    one,
    await one.createTable(identifier, { schema: { schemaId: 0, fields: narrowFields }, spec: unpartitioned }),
  );
  for (const id of [1n, 2n]) {
    const files = await writeDataFiles(table, arrowRows(table, [{ id, name: `n${id}`, amount: 1 }]));
    await table
      .newFastAppend()
      .appendFile(...files)
      .commit();
  }
  const snapshot = currentSnapshot(table.metadata)!;
  const avroReads = () => reads.filter((r) => r.endsWith(".avro")).length;

  reads = [];
  await planFiles(table, snapshot);
  // The commits wrote these files and read back only the first snapshot's manifest list.
  assert.equal(avroReads(), 3, "a cold plan reads the manifest list and both manifests");
  const other = await Table.load(one, identifier);
  assert.equal(other.manifestCache, table.manifestCache);
  reads = [];
  const plan = await planFiles(other, snapshot);
  assert.equal(plan.dataFiles.size, 2);
  assert.equal(avroReads(), 0, "a second handle of the same catalog reads no manifest again");

  const elsewhere = await Table.load(two, identifier);
  assert.notEqual(elsewhere.manifestCache, table.manifestCache);
  assert.equal(manifestCacheOf(two), elsewhere.manifestCache);
  reads = [];
  assert.equal((await planFiles(elsewhere, snapshot)).dataFiles.size, 2);
  assert.equal(avroReads(), 3, "another catalog reads the manifest list and both manifests itself");
  assert.ok(table.manifestCache.bytes > 0 && table.manifestCache.bytes <= table.manifestCache.maxBytes);
});
