// Rows another engine writes into an upsert table carry no `_floe_id` (an INSERT, a MERGE) or a
// stale one (an UPDATE of a dedup column copies it): floe takes their keys from the dedup columns,
// so its next upsert of such a key retires them, and a key the table now holds twice keeps only
// its later row once floe commits. In process, against the embedded catalog; the other engine is
// played by commits of this test (test/integration/sync-foreign-writer.test.ts has Spark).
import assert from "node:assert/strict";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { FLOE_ID } from "#src/decode/system-columns.ts";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { ColumnBatchBuilder } from "#src/iceberg/parquet/column-batch.ts";
import { readKeyColumns } from "#src/iceberg/parquet/key-column-reader.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { currentSchema, currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import { type SyncFixture, sortBy, syncFixture } from "./fixture.ts";

let f: SyncFixture;
const model = new Map<number, string>();

before(async () => {
  f = await syncFixture({ streams: { accounts: { mode: "upsert", dedup_keys: ["id"] } } });
  f.source.createTopic("accounts", 2);
});
after(() => f.close());

function produce(updates: [id: number, v: string][]) {
  f.source.produce(
    "accounts",
    updates.map(([id, v]) => ({ key: String(id), value: { id, v }, partition: id % 2 })),
  );
  for (const [id, v] of updates) model.set(id, v);
}

async function assertModel(step: string) {
  const rows = sortBy(await f.rows("accounts"), "id");
  assert.deepEqual(
    rows.map((r) => [Number(r.id), r.v]),
    [...model].sort(([a], [b]) => a - b),
    step,
  );
}

const load = () => Table.load(f.catalog, { namespace: [f.job.namespace], name: "accounts" });

/** The data file and position of the live row of `id`, with its `_floe_id`. */
async function locate(table: Table, id: number) {
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  const schema = currentSchema(table.metadata);
  const idField = schema.fields.find((x) => x.name === "id")!;
  const floeId = schema.fields.find((x) => x.name === FLOE_ID)!;
  for (const [path] of plan.dataFiles) {
    const { columns } = await readKeyColumns(await table.io.read(path), schema, [idField.id, floeId.id]);
    const position = columns.get(idField.id)!.indexOf(BigInt(id));
    if (position >= 0) return { path, position, floeId: columns.get(floeId.id)![position] as string };
  }
  throw new Error(`no row of id ${id}`);
}

async function foreignRows(table: Table, rows: Record<string, unknown>[]) {
  const batch = new ColumnBatchBuilder(currentSchema(table.metadata));
  for (const row of rows) batch.appendRow(row);
  return writeDataFiles(table, batch.build());
}

test("rows of another writer without or with a stale _floe_id are retired by floe's next upserts", async () => {
  produce(Array.from({ length: 10 }, (_, id) => [id, `floe${id}`]));
  await f.sync();
  await assertModel("first sync");

  let table = await load();
  // An INSERT of keys the table holds (3, 4, 7), no _floe_id: the table now holds them twice.
  await table
    .newFastAppend()
    .appendFile(
      ...(await foreignRows(table, [
        { id: 3n, v: "other3" },
        { id: 4n, v: "other4" },
        { id: 7n, v: "other7" },
      ])),
    )
    .commit();
  // An UPDATE of a dedup column, 5 -> 50: the old row deleted, the new one with 5's _floe_id.
  table = await load();
  const five = await locate(table, 5);
  await table
    .newRowDelta()
    .addRows(...(await foreignRows(table, [{ id: 50n, v: "other50", [FLOE_ID]: five.floeId }])))
    .deleteRows(five.path, [five.position])
    .commit();
  model.delete(5);
  model.set(50, "other50");
  // A MERGE's update of key 8: its old row deleted, the new one written without _floe_id.
  table = await load();
  const eight = await locate(table, 8);
  await table
    .newRowDelta()
    .addRows(...(await foreignRows(table, [{ id: 8n, v: "other8" }])))
    .deleteRows(eight.path, [eight.position])
    .commit();
  model.set(8, "other8");

  // floe upserts 3, 4, 5, 50 and 8; 7 it does not touch, but its commit leaves one row of it: the later.
  produce([
    [3, "floe3b"],
    [4, "floe4b"],
    [5, "floe5b"],
    [50, "floe50b"],
    [8, "floe8b"],
  ]);
  model.set(7, "other7");
  const { report } = await f.sync();
  const t = report.tables[0]!;
  // 3, 4, 50 and 8 had a row; 3, 4 and 7 had a second one.
  assert.equal(t.duplicatesRetired, 3);
  assert.equal(t.positionsDeleted, 7);
  assert.deepEqual(
    t.keyIndex?.map((k) => [k.how, k.duplicateKeys, k.rowsWithoutKey]),
    [["caught-up", 3, 0]],
  );
  await assertModel("after floe's upserts");

  // The same from an index rebuilt from nothing (a lost state directory): 9 inserted again by the
  // other writer, then floe upserts 3 and 7.
  table = await load();
  await table
    .newFastAppend()
    .appendFile(...(await foreignRows(table, [{ id: 9n, v: "other9" }])))
    .commit();
  model.set(9, "other9");
  for (const file of readdirSync(join(f.dir, "state"))) rmSync(join(f.dir, "state", file), { recursive: true });
  produce([
    [3, "floe3c"],
    [7, "floe7c"],
  ]);
  const next = (await f.sync()).report.tables[0]!;
  assert.deepEqual(
    next.keyIndex?.map((k) => [k.how, k.duplicateKeys]),
    [["rebuilt", 1]],
  );
  assert.equal(next.duplicatesRetired, 1);
  await assertModel("after a rebuild");
});
