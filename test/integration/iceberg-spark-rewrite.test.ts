// Compaction by another engine: floe writes a table of several small files, one with a DV;
// Spark's rewrite_data_files (Iceberg 1.10) compacts it; floe then deletes rows of the files
// Spark wrote (found with planFiles, positions read from the Parquet files themselves) and
// upserts others, and DuckDB, PyIceberg and Spark read exactly the expected rows.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { type Readers, type Row, restTable, startReaders } from "../../dev/readers.ts";
import { arrowRows, byId, createRestTable } from "../helpers/tables.ts";

const namespace = `rewrite_${process.pid}_${Date.now()}`;
let readers: Readers;

before(async () => {
  readers = await startReaders();
});
after(() => readers?.close());

test("Spark rewrite_data_files on a floe table, then a floe row delta on the rewritten files", async (t) => {
  const { catalog, table } = await createRestTable(namespace, "compacted");
  const ref = restTable(namespace, "compacted");
  const expected = new Map<bigint, Row>();

  // Five small files of four rows each.
  const files: string[] = [];
  for (let f = 0; f < 5; f++) {
    const batch: Row[] = [];
    for (let r = 0; r < 4; r++) {
      const i = BigInt(f * 4 + r + 1);
      batch.push({ id: i, name: `n${i}`, amount: Number(i) * 1.25 });
    }
    const written = await writeDataFiles(table, arrowRows(table, batch));
    await table
      .newFastAppend()
      .appendFile(...written)
      .commit();
    files.push(written[0]!.filePath);
    for (const row of batch) expected.set(row.id as bigint, row);
  }
  // A DV on the second file (ids 5..8): replace id 6, delete id 8.
  const upsert = { id: 6n, name: "n6-v2", amount: 600 };
  await table
    .newRowDelta()
    .addRows(...(await writeDataFiles(table, arrowRows(table, [upsert]))))
    .deleteRows(files[1]!, [1, 3])
    .commit();
  expected.set(6n, upsert);
  expected.delete(8n);
  await readers.assertRows(ref, byId(expected.values()), { orderBy: ["id"] });
  const beforeRewrite = await planFiles(table, currentSnapshot(table.metadata));
  assert.equal(beforeRewrite.dataFiles.size, 6);
  assert.equal(beforeRewrite.deletionVectors.size, 1);

  // Spark compacts: every small file is rewritten, the DV's deletes applied.
  const [result] = await readers.spark(
    `CALL rest.system.rewrite_data_files(table => '${namespace}.compacted', options => map('min-input-files','2'))`,
  );
  t.diagnostic(`rewrite_data_files: ${JSON.stringify(result, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`);
  assert.ok(result);
  assert.equal(result.rewritten_data_files_count, 6);
  assert.ok(Number(result.added_data_files_count) >= 1);
  await readers.assertRows(ref, byId(expected.values()), { orderBy: ["id"] });

  // floe finds the files Spark wrote.
  await table.refresh();
  const rewrite = currentSnapshot(table.metadata)!;
  assert.equal(rewrite.summary.operation, "replace");
  const plan = await planFiles(table, rewrite);
  const rewritten = [...plan.dataFiles.values()].filter((f) => f.entry.snapshotId === rewrite.snapshotId);
  assert.ok(rewritten.length >= 1);
  assert.equal(rewritten.length, plan.dataFiles.size, "every live file is one Spark wrote");
  for (const path of files) assert.ok(!plan.dataFiles.has(path), `${path} was rewritten away`);
  // A DV of a rewritten-away file no longer applies.
  assert.equal(plan.deletionVectors.size, 0);

  // Where each id lives now: read the positions from the Parquet files Spark wrote.
  const location = new Map<bigint, { path: string; position: number }>();
  for (const { entry } of rewritten) {
    const path = entry.file.filePath;
    const positions = await readers.sql(
      "duckdb",
      `SELECT id, file_row_number AS position FROM read_parquet('${path.replaceAll("'", "''")}', file_row_number = true)`,
      null,
    );
    for (const { id: rowId, position } of positions)
      location.set(rowId as bigint, { path, position: Number(position) });
  }
  assert.deepEqual(
    [...location.keys()].sort((a, b) => (a < b ? -1 : 1)),
    [...expected.keys()].sort((a, b) => (a < b ? -1 : 1)),
  );

  // floe deletes rows of the rewritten files (ids 1 and 13) and replaces two others (6 and 18).
  const replacements = [
    { id: 6n, name: "n6-v3", amount: 6000 },
    { id: 18n, name: "n18-v2", amount: 1800 },
  ];
  const delta = table.newRowDelta().addRows(...(await writeDataFiles(table, arrowRows(table, replacements))));
  const victims = Map.groupBy([1n, 13n, 6n, 18n], (i) => location.get(i)!.path);
  for (const [path, ids] of victims)
    delta.deleteRows(
      path,
      ids.map((i) => location.get(i)!.position),
    );
  const snapshot = await delta.commit();
  assert.equal(snapshot.summary["added-position-deletes"], "4");
  expected.delete(1n);
  expected.delete(13n);
  for (const row of replacements) expected.set(row.id as bigint, row);
  await readers.assertRows(ref, byId(expected.values()), { orderBy: ["id"] });

  // And a second delete on the same rewritten file merges with the DV floe just wrote.
  const again = location.get(2n)!;
  const second = await table.newRowDelta().deleteRows(again.path, [again.position]).commit();
  assert.equal(second.summary["added-dvs"], "1");
  expected.delete(2n);
  await readers.assertRows(ref, byId(expected.values()), { orderBy: ["id"] });
  const final = await planFiles(table, currentSnapshot(table.metadata));
  assert.equal(
    final.deletionVectors.get(again.path)?.entry.file.recordCount,
    BigInt((victims.get(again.path)?.length ?? 0) + 1),
  );

  // Spark rewrites the manifests: floe's DV entry now stands, EXISTING, in a manifest Java wrote.
  // A third delete on the same file replaces that entry there: still one live DV for the file.
  await readers.spark(`CALL rest.system.rewrite_manifests(table => '${namespace}.compacted')`);
  await table.refresh();
  const replaced = new Set(replacements.map((r) => r.id));
  const third = [...expected.keys()]
    .filter((id) => !replaced.has(id))
    .map((id) => ({ id, ...location.get(id)! }))
    .find((l) => l.path === again.path)!;
  const after = await table.newRowDelta().deleteRows(third.path, [third.position]).commit();
  assert.equal(after.summary["removed-dvs"], "1");
  expected.delete(third.id);
  await readers.assertRows(ref, byId(expected.values()), { orderBy: ["id"] });
  const merged = await planFiles(table, currentSnapshot(table.metadata));
  assert.equal(
    merged.deletionVectors.get(third.path)?.entry.file.recordCount,
    BigInt((victims.get(third.path)?.length ?? 0) + 2),
  );
  await catalog.close();
});
