// Position delete files in a v3 table (spec "Deletion Vectors": existing position delete files
// are valid in tables upgraded from v2, and "must be merged into the DV for a data file when one
// is created"), on the embedded SQLite catalog: a real Parquet position delete file (file_path,
// pos with their reserved field ids) added the way a v2 writer adds it, then planned, read,
// previewed, and merged into floe's first DV of that data file, the delete file scoped to it
// removed in the same commit. An equality delete file that applies is refused with the way out.
import assert from "node:assert/strict";
import { test } from "node:test";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { deletedPositionsOf } from "#src/iceberg/scan/deleted-positions.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { previewRows } from "#src/iceberg/scan/preview-rows.ts";
import { type ContentFile, FileContent } from "#src/iceberg/spec/manifest.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import type { NestedField } from "#src/iceberg/spec/types.ts";
import { AddDeleteFiles } from "../../../helpers/foreign-commits.ts";
import { scratchCatalog } from "../../../helpers/scratch-catalog.ts";
import { arrowRows, narrowFields } from "../../../helpers/tables.ts";

const scratch = scratchCatalog("position-deletes");

const newTable = (fields: readonly NestedField[]) => scratch.newTable({ fields });

/** A table with two data files of ids 1..6 and 7..12, and a Parquet position delete file of rows of both. */
async function tableWithPositionDeletes(scoped: boolean) {
  const table = await newTable(narrowFields);
  const rows = (ids: number[]) => ids.map((id) => ({ id: BigInt(id), name: `n${id}`, amount: 1 }));
  const [a] = await writeDataFiles(table, arrowRows(table, rows([1, 2, 3, 4, 5, 6])));
  const [b] = await writeDataFiles(table, arrowRows(table, rows([7, 8, 9, 10, 11, 12])));
  await table.newFastAppend().appendFile(a!, b!).commit();
  // The position delete file's own columns, by their reserved ids (spec "Position Delete Files").
  const side = await newTable([
    { id: 2147483546, name: "file_path", required: true, type: "string" },
    { id: 2147483545, name: "pos", required: true, type: "long" },
  ]);
  const deleted = scoped
    ? [
        { file_path: a!.filePath, pos: 1n },
        { file_path: a!.filePath, pos: 4n },
      ]
    : [
        { file_path: a!.filePath, pos: 1n },
        { file_path: a!.filePath, pos: 4n },
        { file_path: b!.filePath, pos: 0n },
      ];
  const [written] = await writeDataFiles(side, arrowRows(side, deleted));
  const deletes: ContentFile = {
    ...written!,
    content: FileContent.POSITION_DELETES,
    ...(scoped ? { referencedDataFile: a!.filePath } : {}),
  };
  // Bounds of a multi-file delete file span both paths: it is not scoped to either.
  if (!scoped) {
    delete (deletes as { lowerBounds?: unknown }).lowerBounds;
    delete (deletes as { upperBounds?: unknown }).upperBounds;
  }
  await new AddDeleteFiles(table, [deletes]).commit();
  return { table, a: a!.filePath, b: b!.filePath, deletes: written!.filePath };
}

const ids = (rows: Record<string, unknown>[]) => rows.map((r) => Number(r.id)).sort((x, y) => x - y);

test("a position delete file is planned for the data files it names and read by the preview", async () => {
  const { table, a, b } = await tableWithPositionDeletes(false);
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  assert.equal(plan.positionDeletes.get(a)?.length, 1);
  assert.equal(plan.positionDeletes.get(b)?.length, 1);
  assert.deepEqual([...((await deletedPositionsOf(table.io, plan, a))?.toArray() ?? [])], [1n, 4n]);
  assert.deepEqual([...((await deletedPositionsOf(table.io, plan, b))?.toArray() ?? [])], [0n]);
  const preview = await previewRows(table, 100);
  assert.equal(preview.liveRows, 9);
  assert.deepEqual(ids(preview.rows), [1, 3, 4, 6, 8, 9, 10, 11, 12]);
});

test("a data file's first DV holds its position deletes; the delete file scoped to it is removed", async () => {
  const { table, a, deletes } = await tableWithPositionDeletes(true);
  const snapshot = await table.newRowDelta().deleteRows(a, [2]).commit();
  assert.equal(snapshot.summary["added-dvs"], "1");
  assert.equal(snapshot.summary["removed-position-delete-files"], "1");
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  assert.equal(plan.positionDeletes.size, 0, `${deletes} is no longer live`);
  assert.deepEqual([...(await deletedPositionsOf(table.io, plan, a))!.toArray()], [1n, 2n, 4n]);
  assert.deepEqual(ids((await previewRows(table, 100)).rows), [1, 4, 6, 7, 8, 9, 10, 11, 12]);
});

test("a delete file of several data files stays until each has a DV, and is ignored for those that have one", async () => {
  const { table, a, b } = await tableWithPositionDeletes(false);
  const first = await table.newRowDelta().deleteRows(a, [0]).commit();
  assert.equal(first.summary["removed-position-delete-files"], undefined);
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  assert.equal(plan.positionDeletes.get(a), undefined, "the DV of a holds its deletes");
  assert.equal(plan.positionDeletes.get(b)?.length, 1);
  assert.deepEqual([...(await deletedPositionsOf(table.io, plan, a))!.toArray()], [0n, 1n, 4n]);
  assert.deepEqual(ids((await previewRows(table, 100)).rows), [3, 4, 6, 8, 9, 10, 11, 12]);
});

test("an equality delete file that applies to live rows is refused, naming the rewrite that applies it", async () => {
  const table = await newTable(narrowFields);
  const [a] = await writeDataFiles(table, arrowRows(table, [{ id: 1n, name: "n1", amount: 1 }]));
  await table.newFastAppend().appendFile(a!).commit();
  const side = await newTable([{ id: 1, name: "id", required: false, type: "long" }]);
  const [written] = await writeDataFiles(side, arrowRows(side, [{ id: 1n }]));
  await new AddDeleteFiles(table, [{ ...written!, content: FileContent.EQUALITY_DELETES, equalityIds: [1] }]).commit();
  await assert.rejects(planFiles(table, currentSnapshot(table.metadata)), (error: Error) => {
    assert.equal(error.name, "EqualityDeletesError");
    assert.match(
      error.message,
      /ns\.t\d+: 1 equality delete file\(s\) written by another engine apply to its live data files/,
    );
    assert.match(
      error.message,
      /CALL <catalog>\.system\.rewrite_data_files\(table => 'ns\.t\d+', options => map\('delete-file-threshold', '1'/,
    );
    return true;
  });
});
