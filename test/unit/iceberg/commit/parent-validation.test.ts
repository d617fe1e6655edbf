// Per-attempt checks of a snapshot producer against the parent it commits on (spec "Commit
// Conflict Resolution and Retry": a retry re-validates, it does not only rebuild the manifest
// list), on the embedded SQLite catalog and local files. A concurrent writer is simulated by a
// second table handle that commits while the first attempt is being built, so the first
// attempt meets a conflict and the second one runs on the other writer's snapshot.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ValidationError } from "#src/iceberg/commit/validation-error.ts";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { readDeletedPositions } from "#src/iceberg/scan/deleted-positions.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { readManifestList } from "#src/iceberg/scan/read-manifests.ts";
import type { Snapshot } from "#src/iceberg/spec/snapshot.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import { scratchCatalog } from "../../../helpers/scratch-catalog.ts";
import { arrowRows } from "../../../helpers/tables.ts";

const scratch = scratchCatalog("parent-validation");

/** A new table with one data file of ids 1..4, and a second handle on it (the other writer). */
async function tableWithRows(): Promise<{ table: Table; other: Table; firstFile: string }> {
  const table = await scratch.newTable();
  const [file] = await writeDataFiles(
    table,
    arrowRows(
      table,
      [1n, 2n, 3n, 4n].map((id) => ({ id, name: `n${id}`, amount: 1 })),
    ),
  );
  await table.newFastAppend().appendFile(file!).commit();
  return { table, other: await Table.load(scratch.catalog(), table.identifier), firstFile: file!.filePath };
}

async function rowsOf(table: Table, ids: bigint[]) {
  return writeDataFiles(
    table,
    arrowRows(
      table,
      ids.map((id) => ({ id, name: `n${id}`, amount: 2 })),
    ),
  );
}

test("validate() runs at every attempt against that attempt's parent", async () => {
  const { table, other } = await tableWithRows();
  const first = currentSnapshot(table.metadata)!;
  const seen: (bigint | undefined)[] = [];
  let concurrent: Snapshot | undefined;
  const append = table.newFastAppend().appendFile(...(await rowsOf(table, [5n])));
  append.validate(async (_base, parent) => {
    seen.push(parent?.snapshotId);
    if (!concurrent)
      concurrent = await other
        .newFastAppend()
        .appendFile(...(await rowsOf(other, [6n])))
        .commit();
  });
  await append.commit();
  assert.deepEqual(seen, [first.snapshotId, concurrent!.snapshotId]);
  assert.equal(currentSnapshot(table.metadata)!.parentSnapshotId, concurrent!.snapshotId);
});

test("a validation that fails on the refreshed parent stops the commit: nothing lands", async () => {
  const { table, other } = await tableWithRows();
  let concurrent: Snapshot | undefined;
  const append = table.newFastAppend().appendFile(...(await rowsOf(table, [5n])));
  append.validate(async (_base, parent) => {
    if (parent?.summary["writer"] === "other") throw new ValidationError("the other writer got there first");
    if (!concurrent) {
      concurrent = await other
        .newFastAppend()
        .appendFile(...(await rowsOf(other, [6n])))
        .set("writer", "other")
        .commit();
    }
  });
  await assert.rejects(append.commit(), /the other writer got there first/);
  await table.refresh();
  assert.equal(currentSnapshot(table.metadata)!.snapshotId, concurrent!.snapshotId);
});

test("setFromParent() computes a summary property from the parent of the attempt that lands", async () => {
  const { table, other } = await tableWithRows();
  let concurrent: Snapshot | undefined;
  const append = table.newFastAppend().appendFile(...(await rowsOf(table, [5n])));
  append.setFromParent((_base, parent) => ({ "parent-writer": parent?.summary["writer"] ?? "none" }));
  append.validate(async () => {
    if (!concurrent) {
      concurrent = await other
        .newFastAppend()
        .appendFile(...(await rowsOf(other, [6n])))
        .set("writer", "other")
        .commit();
    }
  });
  const landed = await append.commit();
  assert.equal(landed.summary["parent-writer"], "other");
});

test("a row delta with a delete planner plans again on a moved parent, over the other writer's DV", async () => {
  const { table, other, firstFile } = await tableWithRows();
  const first = currentSnapshot(table.metadata)!;
  const planned: (bigint | undefined)[] = [];
  let concurrent: Snapshot | undefined;
  const delta = table.newRowDelta().addRows(...(await rowsOf(table, [1n])));
  delta.deleteRowsPlannedOn(async (_base, parent) => {
    planned.push(parent?.snapshotId);
    if (!concurrent) {
      // The other writer deletes row 1 (id 2) of the same file: a DV the first plan did not see.
      concurrent = await other.newRowDelta().deleteRows(firstFile, [1]).commit();
    }
    return [{ path: firstFile, positions: [0] }];
  });
  await delta.commit();
  assert.deepEqual(planned, [first.snapshotId, concurrent!.snapshotId]);

  const plan = await planFiles(table, currentSnapshot(table.metadata));
  const dv = plan.deletionVectors.get(firstFile);
  assert.ok(dv, "the data file has one live DV");
  assert.deepEqual([...(await readDeletedPositions(table.io, dv.entry.file)).toArray()], [0n, 1n]);
});

test("without a planner, another writer's DV on the same file is a conflict: nothing lands", async () => {
  const { table, other, firstFile } = await tableWithRows();
  const delta = table.newRowDelta().deleteRows(firstFile, [0]);
  let concurrent: Snapshot | undefined;
  delta.validate(async () => {
    concurrent ??= await other.newRowDelta().deleteRows(firstFile, [1]).commit();
  });
  await assert.rejects(delta.commit(), ValidationError);
  await table.refresh();
  assert.equal(currentSnapshot(table.metadata)!.snapshotId, concurrent!.snapshotId);
});

test("a manifest whose entries are all DELETED is listed by the snapshot that deleted them, not by later ones", async () => {
  const { table, firstFile } = await tableWithRows();
  await table.newRowDelta().deleteRows(firstFile, [0]).commit();
  const replacing = await table.newRowDelta().deleteRows(firstFile, [1]).commit();
  const withDeleted = await readManifestList(table, replacing);
  const deletedOnly = withDeleted.filter((m) => m.addedFilesCount + m.existingFilesCount === 0);
  assert.equal(deletedOnly.length, 1, "the replaced DV's manifest, rewritten with its entry DELETED");
  const next = await table
    .newFastAppend()
    .appendFile(...(await rowsOf(table, [9n])))
    .commit();
  const listed = new Set((await readManifestList(table, next)).map((m) => m.manifestPath));
  assert.equal(listed.has(deletedOnly[0]!.manifestPath), false);
  const plan = await planFiles(table, next);
  assert.deepEqual(
    [...(await readDeletedPositions(table.io, plan.deletionVectors.get(firstFile)!.entry.file)).toArray()],
    [0n, 1n],
  );
});
