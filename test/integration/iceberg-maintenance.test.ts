// The maintenance actions on a table written as floe writes it (many small appends and upserts,
// each upsert a DV on older files), each checked with DuckDB, PyIceberg and Spark against a
// model of the rows: RewriteFiles through rewriteDataFiles (row lineage kept, read back from
// Spark's _row_id and _last_updated_sequence_number), a DV committed while a rewrite runs
// (never lost), RewriteManifests, ExpireSnapshots (only unreferenced files removed) and
// DeleteOrphanFiles (never a referenced or young file), and the merging of small manifests on
// commit (MergeAppend's min-count-to-merge), row ids kept.
import assert from "node:assert/strict";
import { utimes } from "node:fs/promises";
import { after, before, test } from "node:test";
import { openSqlCatalog } from "#src/iceberg/catalog/sql-catalog.ts";
import { reachableLocations } from "#src/iceberg/commit/delete-orphan-files.ts";
import { RewriteConflictError } from "#src/iceberg/commit/rewrite-files.ts";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { readManifestList } from "#src/iceberg/scan/read-manifests.ts";
import { unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import { type Readers, type Row, restTable, startReaders } from "../../dev/readers.ts";
import { syncWorkspace } from "../helpers/sync-model.ts";
import { arrowRows, byId, createRestTable, narrowFields } from "../helpers/tables.ts";

const namespace = `maint_${process.pid}_${Date.now()}`;
let readers: Readers;

before(async () => {
  readers = await startReaders();
});
after(() => readers?.close());

interface Model {
  rows: Map<bigint, Row>;
  /** Where each live id is: data file and position. */
  at: Map<bigint, { path: string; position: number }>;
}

/** `commits` small commits: appends of new ids, and upserts that replace older ids through DVs. */
async function writeHistory(table: Table, commits: number): Promise<Model> {
  const model: Model = { rows: new Map(), at: new Map() };
  let next = 1n;
  for (let c = 0; c < commits; c++) {
    const batch: Row[] = [];
    const replaced: bigint[] = [];
    if (c % 2 === 1) {
      // Upsert two older ids (a DV on their files) and add one new id.
      const ids = [...model.at.keys()];
      for (const id of [ids[(c * 7) % ids.length]!, ids[(c * 3 + 1) % ids.length]!]) {
        if (replaced.includes(id)) continue;
        replaced.push(id);
        batch.push({ id, name: `v${c}-${id}`, amount: c * 10 + Number(id) });
      }
    }
    for (let r = 0; r < 3; r++, next++) batch.push({ id: next, name: `n${next}`, amount: Number(next) / 4 });
    const files = await writeDataFiles(table, arrowRows(table, batch));
    assert.equal(files.length, 1);
    if (replaced.length === 0)
      await table
        .newFastAppend()
        .appendFile(...files)
        .commit();
    else {
      const delta = table.newRowDelta().addRows(...files);
      for (const [path, group] of Map.groupBy(replaced, (id) => model.at.get(id)!.path)) {
        delta.deleteRows(
          path,
          group.map((id) => model.at.get(id)!.position),
        );
      }
      await delta.commit();
    }
    batch.forEach((row, position) => {
      model.rows.set(row.id as bigint, row);
      model.at.set(row.id as bigint, { path: files[0]!.filePath, position });
    });
  }
  return model;
}

async function lineage(ns: string, name: string): Promise<Map<string, string>> {
  const rows = await readers.spark(`SELECT id, _row_id, _last_updated_sequence_number FROM rest.${ns}.${name}`);
  return new Map(rows.map((r) => [String(r.id), `${r._row_id}/${r._last_updated_sequence_number}`]));
}

async function assertModel(table: Table, model: Model): Promise<void> {
  await readers.assertRows(
    restTable(table.identifier.namespace[0]!, table.identifier.name),
    byId(model.rows.values()),
    {
      orderBy: ["id"],
    },
  );
}

test("rewriteDataFiles compacts small files and their DVs into one file, rows and row lineage kept", async () => {
  const { table } = await createRestTable(`${namespace}_compact`, "compact");
  const model = await writeHistory(table, 12);
  await assertModel(table, model);
  const before = await planFiles(table, currentSnapshot(table.metadata));
  assert.equal(before.dataFiles.size, 12);
  assert.ok(before.deletionVectors.size > 0);
  const lineageBefore = await lineage(`${namespace}_compact`, "compact");

  const result = await table.rewriteDataFiles({ targetFileSizeBytes: 4 * 1024 * 1024 });
  assert.equal(result.rewrittenDataFiles, 12);
  assert.equal(result.rewrittenDeleteFiles, before.deletionVectors.size);
  assert.equal(result.addedDataFiles, 1);
  assert.equal(result.rows, model.rows.size);
  await table.refresh();
  const snapshot = currentSnapshot(table.metadata)!;
  assert.equal(snapshot.summary.operation, "replace");
  const after = await planFiles(table, snapshot);
  assert.equal(after.dataFiles.size, 1);
  assert.equal(after.deletionVectors.size, 0);
  await assertModel(table, model);
  assert.deepEqual(
    await lineage(`${namespace}_compact`, "compact"),
    lineageBefore,
    "rows keep _row_id and _last_updated_sequence_number",
  );

  // Nothing left to do: a second pass commits nothing.
  const again = await table.rewriteDataFiles({ targetFileSizeBytes: 4 * 1024 * 1024 });
  assert.equal(again.rewrittenDataFiles, 0);
});

test("a DV committed on a file while rewriteDataFiles runs is not lost: the rewrite starts again", async () => {
  const { table } = await createRestTable(`${namespace}_race`, "race");
  const model = await writeHistory(table, 8);
  const victim = [...model.at.entries()][0]!;

  // The concurrent commit, between the rewrite's plan and its commit: a delete of one row.
  const concurrentDelete = async (attempt: number) => {
    if (attempt !== 0) return;
    await table.newRowDelta().deleteRows(victim[1].path, [victim[1].position]).commit();
    model.rows.delete(victim[0]);
    model.at.delete(victim[0]);
  };
  // Without a retry, the conflict is reported, never committed over.
  await assert.rejects(
    table.rewriteDataFiles({ targetFileSizeBytes: 4 * 1024 * 1024, attempts: 1, beforeCommit: concurrentDelete }),
    (error) => error instanceof RewriteConflictError && error.dataFiles.includes(victim[1].path),
  );
  await assertModel(table, model);

  const second = [...model.at.entries()][0]!;
  const result = await table.rewriteDataFiles({
    targetFileSizeBytes: 4 * 1024 * 1024,
    beforeCommit: async (attempt) => {
      if (attempt !== 0) return;
      await table.newRowDelta().deleteRows(second[1].path, [second[1].position]).commit();
      model.rows.delete(second[0]);
      model.at.delete(second[0]);
    },
  });
  assert.equal(result.retries, 1);
  assert.equal(result.rows, model.rows.size);
  await assertModel(table, model);
});

test("rewriteManifests and expireSnapshots: readable, only unreferenced files removed", async () => {
  const { table } = await createRestTable(`${namespace}_expire`, "expire");
  const model = await writeHistory(table, 10);
  await table.rewriteDataFiles({ targetFileSizeBytes: 4 * 1024 * 1024 });
  await table.refresh();
  const manifestsBefore = await readManifestList(table, currentSnapshot(table.metadata)!);

  await table.rewriteManifests().commit();
  await table.refresh();
  const manifestsAfter = await readManifestList(table, currentSnapshot(table.metadata)!);
  assert.ok(manifestsAfter.length <= 2, `${manifestsAfter.length} manifests after the rewrite`);
  assert.ok(manifestsAfter.length < manifestsBefore.length || manifestsBefore.length <= 2);
  await assertModel(table, model);

  const snapshots = table.metadata.snapshots.length;
  const plan = await table
    .expireSnapshots()
    .retainLast(2)
    .expireOlderThan(Date.now() + 1000)
    .plan();
  assert.equal(plan.expiredSnapshotIds.length, snapshots - 2);
  const result = await table
    .expireSnapshots()
    .retainLast(2)
    .expireOlderThan(Date.now() + 1000)
    .commit();
  assert.deepEqual(result.expiredSnapshotIds.toSorted(), plan.expiredSnapshotIds.toSorted());
  assert.equal(table.metadata.snapshots.length, 2);
  assert.ok(result.files.dataFiles.length >= 10, "the compacted-away files are gone");
  for (const path of [
    ...result.files.dataFiles,
    ...result.files.deleteFiles,
    ...result.files.manifests,
    ...result.files.manifestLists,
  ]) {
    assert.equal(await table.io.exists(path), false, `${path} was removed`);
  }
  const reachable = await reachableLocations(table, table.metadata, table.metadataLocation);
  for (const path of reachable) assert.ok(await table.io.exists(path), `${path} is still referenced and present`);
  await assertModel(table, model);

  // The current snapshot always stays.
  const last = await table
    .expireSnapshots()
    .retainLast(1)
    .expireOlderThan(Date.now() + 1000)
    .commit();
  assert.equal(last.expiredSnapshotIds.length, 1);
  assert.equal(table.metadata.snapshots.length, 1);
  await assertModel(table, model);
});

test("deleteOrphanFiles removes old unreferenced files only, never a referenced or young one", async () => {
  const { table } = await createRestTable(`${namespace}_orphans`, "orphans");
  const model = await writeHistory(table, 4);
  const dataDir = `${table.metadata.location}/data`;
  const oldOrphan = `${dataDir}/old-orphan.parquet`;
  const youngOrphan = `${dataDir}/young-orphan.parquet`;
  const notIceberg = `${dataDir}/notes.txt`;
  for (const path of [oldOrphan, youngOrphan, notIceberg]) await table.io.write(path, new Uint8Array([1, 2, 3]));
  const dayAgo = new Date(Date.now() - 24 * 3600 * 1000);
  await utimes(oldOrphan, dayAgo, dayAgo);
  await utimes(notIceberg, dayAgo, dayAgo);
  // Every file of the table is old too: age alone must not make a referenced file an orphan.
  const reachable = await reachableLocations(table, table.metadata, table.metadataLocation);
  for (const path of reachable) await utimes(path, dayAgo, dayAgo);

  const result = await table
    .deleteOrphanFiles()
    .olderThan(Date.now() - 3600 * 1000)
    .execute();
  assert.deepEqual(
    result.orphans.map((f) => f.location),
    [oldOrphan],
  );
  assert.equal(await table.io.exists(oldOrphan), false);
  assert.equal(await table.io.exists(youngOrphan), true);
  assert.equal(await table.io.exists(notIceberg), true);
  for (const path of reachable) assert.ok(await table.io.exists(path), `${path} kept`);
  await assertModel(table, model);
});

test("commits merge small manifests once min-count-to-merge is reached; every row keeps its _row_id", async () => {
  const { table } = await createRestTable(`${namespace}_merge`, "merge");
  await table.setProperties({ "commit.manifest.min-count-to-merge": "4" });
  const model = await writeHistory(table, 3);
  const early = await lineage(`${namespace}_merge`, "merge");
  // Nine more commits on top, each adding a data manifest (and, for upserts, a delete manifest).
  let next = 100n;
  for (let c = 0; c < 9; c++) {
    const batch = [0, 1].map(() => ({ id: next, name: `m${next++}`, amount: 1 }));
    await table
      .newFastAppend()
      .appendFile(...(await writeDataFiles(table, arrowRows(table, batch))))
      .commit();
    for (const row of batch) model.rows.set(row.id, row);
    const manifests = await readManifestList(table, currentSnapshot(table.metadata)!);
    assert.ok(manifests.length <= 4, `commit ${c}: ${manifests.length} manifests`);
  }
  await assertModel(table, model);
  const late = await lineage(`${namespace}_merge`, "merge");
  for (const [id, value] of early) assert.equal(late.get(id), value, `id ${id} keeps its row id through merges`);
  const rowIds = [...late.values()].map((v) => v.split("/")[0]);
  assert.equal(new Set(rowIds).size, rowIds.length, "row ids are unique");
});

test("the embedded SQLite catalog: compaction, manifest rewrite, expiry and orphan removal, read by the three readers", async () => {
  const ws = syncWorkspace("maintsql");
  const catalog = await openSqlCatalog({ warehouse: ws.warehouse, uri: ws.catalogRef.uri, name: "floe" });
  try {
    await catalog.createNamespace(["m"]);
    const created = await catalog.createTable(
      { namespace: ["m"], name: "t" },
      { schema: { schemaId: 0, fields: narrowFields }, spec: unpartitioned },
    );
    const table = new Table(catalog, created);
    const model = await writeHistory(table, 10);
    await table.rewriteDataFiles({ targetFileSizeBytes: 4 * 1024 * 1024 });
    await table.rewriteManifests().commit();
    const expired = await table
      .expireSnapshots()
      .retainLast(1)
      .expireOlderThan(Date.now() + 1000)
      .commit();
    assert.equal(expired.expiredSnapshotIds.length, 11);
    assert.equal(table.metadata.snapshots.length, 1);
    for (const path of expired.files.dataFiles) assert.equal(await table.io.exists(path), false);
    const orphans = await table
      .deleteOrphanFiles()
      .olderThan(Date.now() + 1000)
      .execute();
    const reachable = await reachableLocations(table, table.metadata, table.metadataLocation);
    for (const f of orphans.orphans) assert.ok(!reachable.has(f.location));
    for (const path of reachable) assert.ok(await table.io.exists(path), `${path} kept`);
    await readers.assertRows({ catalog: ws.catalogRef, namespace: "m", table: "t" }, byId(model.rows.values()), {
      orderBy: ["id"],
    });
  } finally {
    await catalog.close();
  }
});
