// The Iceberg writer end to end against the real REST catalog: create a v3 table, append,
// replace rows with deletion vectors (twice on one data file, so the second DV merges the
// first), add a column, and read every state back through DuckDB, PyIceberg and Spark.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { arrowRows, createRestTable } from "../helpers/tables.ts";

const namespace = `writer_${process.pid}_${Date.now()}`;
let readers: Readers;

before(async () => {
  readers = await startReaders();
});
after(() => readers?.close());

test("append, deletion vectors (merged on a second delete), schema evolution: all three engines agree", async () => {
  const { catalog, table } = await createRestTable(namespace, "customers");
  assert.equal(table.metadata.formatVersion, 3);
  const ref = restTable(namespace, "customers");

  const first = await writeDataFiles(
    table,
    arrowRows(table, [
      { id: 1n, name: "Aarav", amount: 1.5 },
      { id: 2n, name: "Sofia", amount: 2.5 },
      { id: 3n, name: "Liam", amount: 3.5 },
    ]),
  );
  await table
    .newFastAppend()
    .appendFile(...first)
    .set("floe.offsets", "customers:0=3")
    .commit();
  await readers.assertRows(ref, [
    { id: 1n, name: "Aarav", amount: 1.5 },
    { id: 2n, name: "Sofia", amount: 2.5 },
    { id: 3n, name: "Liam", amount: 3.5 },
  ]);

  // Replace id 3 (row 2 of the first file) with a new version.
  const path = first[0]!.filePath;
  const second = await writeDataFiles(table, arrowRows(table, [{ id: 3n, name: "Liam", amount: 30 }]));
  const s2 = await table
    .newRowDelta()
    .addRows(...second)
    .deleteRows(path, [2])
    .commit();
  assert.equal(s2.summary["added-dvs"], "1");
  assert.equal(s2.summary["added-position-deletes"], "1");
  assert.equal(s2.summary["total-records"], "4");
  await readers.assertRows(ref, [
    { id: 1n, name: "Aarav", amount: 1.5 },
    { id: 2n, name: "Sofia", amount: 2.5 },
    { id: 3n, name: "Liam", amount: 30 },
  ]);

  // A second delete on the same data file: the new DV carries row 2 as well, the old one goes.
  await table.updateSchema((change) => change.addColumn("city", "string"));
  const third = await writeDataFiles(table, arrowRows(table, [{ id: 1n, name: "Aarav", amount: 10, city: "Mumbai" }]));
  const s3 = await table
    .newRowDelta()
    .addRows(...third)
    .deleteRows(path, [0])
    .commit();
  assert.equal(s3.summary["removed-dvs"], "1");
  assert.equal(s3.summary["total-position-deletes"], "2");
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  assert.equal(plan.deletionVectors.size, 1);
  assert.equal(plan.deletionVectors.get(path)?.entry.file.recordCount, 2n);
  await readers.assertRows(ref, [
    { id: 1n, name: "Aarav", amount: 10, city: "Mumbai" },
    { id: 2n, name: "Sofia", amount: 2.5, city: null },
    { id: 3n, name: "Liam", amount: 30, city: null },
  ]);
  assert.equal(table.metadata.nextRowId, 5n);
  await catalog.close();
});
