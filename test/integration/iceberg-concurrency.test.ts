// Two writers on one table, against the real REST catalog and the embedded SQLite catalog.
// - Compatible commits racing each other (appends, and row deltas on different data files)
//   all land: the loser of each race gets a conflict (REST 409 / the SQL catalog's
//   compare-and-swap), reloads, rebuilds its manifest list over the winner's snapshot and
//   commits again. The conflicts are counted by a catalog wrapper, and the snapshots form
//   one chain with row lineage intact.
// - A real conflict: two row deltas deleting rows of the same data file. One lands; the other
//   throws ValidationError on its retry and nothing of it reaches the table.
// DuckDB, PyIceberg and Spark read the final rows of each table.
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { TableIdentifier } from "#src/iceberg/catalog/catalog.ts";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { openSqlCatalog } from "#src/iceberg/catalog/sql-catalog.ts";
import { ValidationError } from "#src/iceberg/commit/validation-error.ts";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import type { DataFile } from "#src/iceberg/spec/manifest.ts";
import { unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import { currentSnapshot, snapshotById } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import { type CountingCatalog, countingCommits } from "../../dev/counting-catalog.ts";
import { type Readers, type Row, restTable, startReaders, type TableRef } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { arrowRows, byId } from "../helpers/tables.ts";

let readers: Readers;
before(async () => {
  readers = await startReaders();
});
after(() => readers?.close());

const schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: "id", required: true, type: "long" as const },
    { id: 2, name: "writer", required: false, type: "string" as const },
  ],
};

async function write(table: Table, rows: Row[]): Promise<DataFile> {
  const files = await writeDataFiles(table, arrowRows(table, rows));
  assert.equal(files.length, 1);
  return files[0]!;
}

/**
 * Writers A and B each commit `rounds` times, both at once in every round: A appends, B appends
 * in even rounds and deletes rows of A's earlier files (each file once, so no DV conflicts) in odd ones.
 */
async function racingWriters(
  catalogs: [CountingCatalog, CountingCatalog],
  id: TableIdentifier,
  ref: TableRef,
  log: (message: string) => void,
) {
  const rounds = 8;
  const created = await catalogs[0].createTable(id, { schema, spec: unpartitioned });
  const a = new Table(catalogs[0], created);
  const b = await Table.load(catalogs[1], id);
  const expected = new Map<bigint, Row>();
  const aFiles: { path: string; ids: bigint[] }[] = [];
  const allAFiles: { path: string; ids: bigint[] }[] = [];
  let next = 1n;
  const snapshots: bigint[] = [];

  for (let round = 0; round < rounds; round++) {
    const aIds = [next++, next++, next++];
    const aRows = aIds.map((i) => ({ id: i, writer: `a${round}` }));
    const aFile = await write(a, aRows);
    const commitA = a.newFastAppend().appendFile(aFile).set("floe.writer", "a");
    let commitB: { commit(): Promise<{ snapshotId: bigint }> };
    let bEffect: () => void;
    if (round % 2 === 0 || aFiles.length === 0) {
      const bRows = [{ id: next++, writer: `b${round}` }];
      const bFile = await write(b, bRows);
      commitB = b.newFastAppend().appendFile(bFile).set("floe.writer", "b");
      bEffect = () => {
        for (const row of bRows) expected.set(row.id, row);
      };
    } else {
      // Row 1 of the oldest of A's files that B has not deleted from yet. A writer plans its
      // deletes on the table as it is (RowDelta validates against the handle's metadata), so B
      // reloads first; A's commit of this round is still to come, so the race stays.
      const target = aFiles.shift()!;
      await b.refresh();
      commitB = b.newRowDelta().deleteRows(target.path, [1]).set("floe.writer", "b");
      bEffect = () => expected.delete(target.ids[1]!);
    }
    const landed = await Promise.all([commitA.commit(), commitB.commit()]);
    snapshots.push(...landed.map((s) => s.snapshotId));
    for (const row of aRows) expected.set(row.id, row);
    aFiles.push({ path: aFile.filePath, ids: aIds });
    allAFiles.push({ path: aFile.filePath, ids: aIds });
    bEffect();
  }

  const conflicts = catalogs[0].counts.conflicts + catalogs[1].counts.conflicts;
  log(
    `${rounds} rounds, ${snapshots.length} snapshots: ${conflicts} conflicts retried ` +
      `(writer A ${catalogs[0].counts.conflicts}, writer B ${catalogs[1].counts.conflicts})`,
  );
  assert.ok(conflicts >= rounds, `every round races two commits over one parent; saw ${conflicts} conflicts`);

  // Every snapshot of both writers landed, in one linear chain from the current snapshot back.
  await a.refresh();
  const metadata = a.metadata;
  const chain: bigint[] = [];
  for (
    let s = currentSnapshot(metadata);
    s;
    s = s.parentSnapshotId === undefined ? undefined : snapshotById(metadata, s.parentSnapshotId)
  ) {
    chain.push(s.snapshotId);
  }
  assert.equal(chain.length, rounds * 2);
  assert.deepEqual(new Set(chain), new Set(snapshots));
  // Row lineage: each snapshot starts where the previous one ended.
  let rowId = 0n;
  for (const snapshotId of chain.reverse()) {
    const s = snapshotById(metadata, snapshotId)!;
    assert.equal(s.firstRowId, rowId, `first-row-id of snapshot ${snapshotId}`);
    rowId += s.addedRows ?? 0n;
  }
  assert.equal(metadata.nextRowId, rowId);
  assert.equal(metadata.nextRowId, next - 1n, "one row id per row ever written");

  await readers.assertRows(ref, byId(expected.values()), { orderBy: ["id"] });
  return { a, b, expected, target: allAFiles[0]! };
}

/** Two row deltas that delete rows of the same data file, racing: one lands, the other must not. */
async function conflictingDeletes(
  a: Table,
  b: Table,
  expected: Map<bigint, Row>,
  file: { path: string; ids: bigint[] },
  ref: TableRef,
) {
  await Promise.all([a.refresh(), b.refresh()]);
  const plan = await planFiles(a, currentSnapshot(a.metadata));
  // A's first file: B deleted its row 1 already, so both deltas would merge into its DV.
  const target = file.path;
  assert.ok(plan.deletionVectors.has(target));
  const before = a.metadata;

  const rowsA = [{ id: 1000n, writer: "conflict-a" }];
  const rowsB = [{ id: 2000n, writer: "conflict-b" }];
  const deltaA = a
    .newRowDelta()
    .addRows(await write(a, rowsA))
    .deleteRows(target, [0]);
  const deltaB = b
    .newRowDelta()
    .addRows(await write(b, rowsB))
    .deleteRows(target, [2]);
  const [resultA, resultB] = await Promise.allSettled([deltaA.commit(), deltaB.commit()]);
  const outcomes = [resultA.status, resultB.status].sort();
  assert.deepEqual(outcomes, ["fulfilled", "rejected"], "exactly one of two conflicting row deltas lands");
  const loser = (resultA.status === "rejected" ? resultA : resultB) as PromiseRejectedResult;
  assert.ok(loser.reason instanceof ValidationError, `the loser throws ValidationError, got ${loser.reason}`);
  const [winnerRows, loserDelta, loserTable] = resultA.status === "fulfilled" ? [rowsA, deltaB, b] : [rowsB, deltaA, a];
  const winnerPosition = resultA.status === "fulfilled" ? 0 : 2;

  await loserTable.refresh();
  const metadata = loserTable.metadata;
  assert.equal(snapshotById(metadata, loserDelta.snapshotId), undefined, "nothing of the loser lands");
  assert.equal(metadata.snapshots.length, before.snapshots.length + 1);
  const after = await planFiles(loserTable, currentSnapshot(metadata));
  const dv = after.deletionVectors.get(target)!;
  const previous = plan.deletionVectors.get(target)!;
  assert.equal(dv.entry.file.recordCount, previous.entry.file.recordCount + 1n, "the winner's DV merged the old one");

  const deletedId = file.ids[winnerPosition]!;
  assert.ok(expected.has(deletedId), "the winner deleted a live row");
  expected.delete(deletedId);
  for (const row of winnerRows) expected.set(row.id, row);
  await readers.assertRows(ref, byId(expected.values()), { orderBy: ["id"] });
}

test("REST catalog: two writers racing on one table both land (409 path), a DV conflict does not", async (t) => {
  const namespace = `concurrency_${process.pid}_${Date.now()}`;
  const catalogs: [CountingCatalog, CountingCatalog] = [
    countingCommits(await connectRestCatalog({ uri: restCatalog.uri })),
    countingCommits(await connectRestCatalog({ uri: restCatalog.uri })),
  ];
  try {
    await catalogs[0].createNamespace([namespace]);
    const id = { namespace: [namespace], name: "race" };
    const ref = restTable(namespace, "race");
    const { a, b, expected, target } = await racingWriters(catalogs, id, ref, (m) => t.diagnostic(m));
    await conflictingDeletes(a, b, expected, target, ref);
  } finally {
    await Promise.all(catalogs.map((c) => c.close()));
  }
});

test("SQLite catalog: two writers (two database connections) racing on one table both land, a DV conflict does not", async (t) => {
  const warehouse = await mkdtemp(join(tmpdir(), "floe-concurrency-"));
  const catalogs: [CountingCatalog, CountingCatalog] = [
    countingCommits(await openSqlCatalog({ warehouse, name: "floe_race" })),
    countingCommits(await openSqlCatalog({ warehouse, name: "floe_race" })),
  ];
  try {
    await catalogs[0].createNamespace(["race_ns"]);
    const id = { namespace: ["race_ns"], name: "race" };
    const catalog = { type: "sql" as const, uri: join(warehouse, "catalog.db"), warehouse, name: "floe_race" };
    // Spark's JDBC catalog over SQLite keeps the first metadata location it saw: read the final
    // state of each phase through a catalog ref of its own (a new Spark session).
    const refs = [1, 2].map(
      (phase) => ({ catalog: { ...catalog, phase }, namespace: "race_ns", table: "race" }) as TableRef,
    );
    const { a, b, expected, target } = await racingWriters(catalogs, id, refs[0]!, (m) => t.diagnostic(m));
    await conflictingDeletes(a, b, expected, target, refs[1]!);
  } finally {
    await Promise.all(catalogs.map((c) => c.close()));
    await rm(warehouse, { recursive: true, force: true });
  }
});
