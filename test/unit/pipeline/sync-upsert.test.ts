// Whole syncs in upsert mode: one live row per key, old rows retired by deletion vectors, in
// process against the embedded catalog. The table's rows are compared with a model of the
// latest message per key.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type SyncFixture, sortBy, syncFixture } from "./fixture.ts";

let f: SyncFixture;
/** id -> latest value of `v`, or undefined when deleted. */
const model = new Map<number, string>();

before(async () => {
  f = await syncFixture({
    streams: {
      accounts: { mode: "upsert", dedup_keys: ["id"] },
      sessions: { mode: "upsert", dedup_keys: ["_kafka_key"] },
    },
  });
  f.source.createTopic("accounts", 3).createTopic("sessions");
});

after(() => f.close());

function produceAccounts(updates: [id: number, v: string][]) {
  f.source.produce(
    "accounts",
    // One key stays on one partition, as a keyed producer puts it.
    updates.map(([id, v]) => ({ key: String(id), value: { id, v }, partition: id % 3 })),
  );
  for (const [id, v] of updates) model.set(id, v);
}

async function assertModel() {
  const rows = sortBy(await f.rows("accounts"), "id");
  assert.deepEqual(
    rows.map((r) => [Number(r.id), r.v]),
    [...model].sort(([a], [b]) => a - b),
  );
}

test("first sync: keys repeated in the batch keep their last message; no deletion vector yet", async () => {
  produceAccounts(Array.from({ length: 60 }, (_, i) => [i % 40, `a${i}`]));
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "accounts")!;
  assert.deepEqual([t.messagesRead, t.recordsAdded, t.deletionVectorsAdded, t.positionsDeleted], [60, 40, 0, 0]);
  await assertModel();
  const ops = new Set((await f.rows("accounts")).map((r) => r._op_type));
  assert.deepEqual([...ops], ["c"]);
});

test("updates retire the old rows with deletion vectors, one per data file touched, and mark _op_type u", async () => {
  produceAccounts([
    [1, "b1"],
    [2, "b2"],
    [3, "b3"],
    [1, "b1'"],
    [45, "new"],
  ]);
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "accounts")!;
  assert.deepEqual([t.recordsAdded, t.positionsDeleted, t.deletionVectorsAdded], [4, 3, 1]);
  await assertModel();
  const byId = new Map((await f.rows("accounts")).map((r) => [Number(r.id), r._op_type]));
  assert.deepEqual([byId.get(1), byId.get(45), byId.get(7)], ["u", "c", "c"]);

  // The next updates hit rows of the first file (its DV grows) and of the second (a first DV there).
  produceAccounts([
    [7, "c7"],
    [45, "c45"],
  ]);
  const second = (await f.sync()).report.tables.find((x) => x.topic === "accounts")!;
  assert.deepEqual([second.recordsAdded, second.positionsDeleted, second.deletionVectorsAdded], [2, 2, 2]);
  await assertModel();
});

test("with _kafka_key the only dedup key, a tombstone deletes its key's row", async () => {
  f.source.produce("sessions", [
    { key: "s1", value: { user: "ann" } },
    { key: "s2", value: { user: "bob" } },
  ]);
  await f.sync();
  f.source.produce("sessions", [
    { key: "s1", value: null },
    { key: "s3", value: { user: "cy" } },
  ]);
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "sessions")!;
  assert.deepEqual([t.recordsAdded, t.positionsDeleted, t.tombstonesIgnored], [1, 1, 0]);
  assert.deepEqual(
    sortBy(await f.rows("sessions"), "user").map((r) => r.user),
    ["bob", "cy"],
  );
});

test("a second run with the key index gone rebuilds it from the table and retires the right rows", async () => {
  const { rmSync } = await import("node:fs");
  rmSync(`${f.dir}/state`, { recursive: true, force: true });
  produceAccounts([
    [2, "d2"],
    [39, "d39"],
  ]);
  const t = (await f.sync()).report.tables.find((x) => x.topic === "accounts")!;
  assert.deepEqual([t.recordsAdded, t.positionsDeleted], [2, 2]);
  await assertModel();
});

test("_floe_id is left null where the dedup keys are columns: the key index reads the columns", async () => {
  produceAccounts([[7, "floe-id"]]);
  f.source.produce("sessions", [{ key: "s1", value: { n: 1 } }]);
  await f.sync();
  for (const table of ["accounts", "sessions"]) {
    const ids = new Set((await f.rows(table)).map((r) => r._floe_id));
    assert.deepEqual([...ids], [null], `${table}: no row carries a _floe_id`);
  }
  // The next upsert still finds and retires the row by its key.
  produceAccounts([[7, "floe-id again"]]);
  const { report } = await f.sync();
  assert.equal(report.tables.find((x) => x.topic === "accounts")!.positionsDeleted, 1);
  await assertModel();
});
