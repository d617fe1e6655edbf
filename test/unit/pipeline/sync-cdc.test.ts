// Whole syncs of Debezium change streams, in process: the table holds exactly the source table's
// rows after snapshot reads, inserts, updates, deletes with their tombstones, a primary-key
// change, replays and duplicates, and a column added upstream; deletes leave no row and no
// dead letter, and envelopes that do not parse follow on_error.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type ChangeMessage, DebeziumTable, sourceRow } from "../../helpers/debezium-events.ts";
import { type SyncFixture, sortBy, syncFixture } from "./fixture.ts";

let f: SyncFixture;
const keyed = new DebeziumTable("pg", "customers");
const wholeKey = new DebeziumTable("pg", "orders");

before(async () => {
  f = await syncFixture({
    streams: {
      // Keyed on the key's id, which becomes column id; the op and the LSN as metadata columns.
      "pg.public.customers": {
        mode: "upsert",
        format: "debezium",
        key_columns: { id: "id" },
        cdc_columns: ["op", "source.lsn"],
      },
      // No dedup_keys: the whole Kafka key, Debezium's primary key.
      "pg.public.orders": { mode: "upsert", format: "debezium" },
      // Not a change stream: a JSON key's fields as columns of plain values that lack them.
      profiles: { mode: "upsert", key_columns: { user: "user_id", region: "region" }, dedup_keys: ["user_id"] },
    },
  });
  f.source.createTopic("pg.public.customers", 2).createTopic("pg.public.orders").createTopic("profiles");
});

after(() => f.close());

function produce(topic: string, messages: ChangeMessage[]) {
  // One key stays on one partition, as Debezium's producer puts it.
  f.source.produce(
    topic,
    messages.map((m) => ({
      key: m.key,
      value: m.value,
      partition: topic.endsWith("customers") ? keyPartition(m.key) : 0,
    })),
  );
}

function keyPartition(key: string): number {
  return (JSON.parse(key).payload.id as number) % 2;
}

async function assertModel(table: string, source: DebeziumTable) {
  const rows = sortBy(await f.rows(table), "id");
  const expected = [...source.rows.values()].sort((a, b) => a.id - b.id);
  assert.deepEqual(
    rows.map((r) => [Number(r.id), r.name, r.balance, r.born, ...source.extraColumns.map((c) => r[c] ?? null)]),
    expected.map((r) => [r.id, r.name, r.balance, r.born, ...source.extraColumns.map((c) => r[c] ?? null)]),
  );
}

test("snapshot reads land as rows, with the Debezium logical types mapped and the metadata columns", async () => {
  produce("pg.public.customers", keyed.snapshot([1, 2, 3, 4, 5].map((id) => sourceRow(id, `n${id}`))));
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "pg.public.customers")!;
  assert.deepEqual([t.recordsAdded, t.deadLetters], [5, 0]);
  await assertModel("pg_public_customers", keyed);
  const row = (await f.rows("pg_public_customers")).find((r) => Number(r.id) === 1)!;
  assert.equal(row._cdc_op, "r");
  assert.equal(typeof row._cdc_lsn, "bigint");
  // MicroTimestamp -> timestamptz; the row's _cdc_timestamp is the source's ts_ms.
  assert.equal((row.updated_at as Date).toISOString?.() ?? row.updated_at, "2026-01-01T00:00:01.000Z");
  assert.ok(row._cdc_timestamp !== row._kafka_timestamp);
});

test("inserts, updates, deletes and their tombstones, and a primary-key change, in one sync", async () => {
  produce("pg.public.customers", [
    ...keyed.insert(sourceRow(6, "n6")),
    ...keyed.update(1, { name: "one" }),
    ...keyed.update(1, { name: "uno" }),
    ...keyed.delete(2),
    ...keyed.changeKey(3, 30),
    ...keyed.update(30, { name: "thirty" }),
  ]);
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "pg.public.customers")!;
  assert.equal(t.deadLetters, 0);
  await assertModel("pg_public_customers", keyed);
  const ops = new Map((await f.rows("pg_public_customers")).map((r) => [Number(r.id), r._cdc_op]));
  assert.deepEqual([ops.get(1), ops.get(6), ops.get(30)], ["u", "c", "u"]);
});

test("a replayed older event never overwrites a newer one in its batch; a duplicated event is idempotent", async () => {
  const update = keyed.update(4, { name: "four" });
  const newer = keyed.update(4, { name: "FOUR" });
  // The connector restarts and replays: the older update arrives after the newer one.
  produce("pg.public.customers", [...update, ...newer, ...update, ...newer, ...newer]);
  await f.sync();
  await assertModel("pg_public_customers", keyed);
  // A replay of a delete after its key was re-created does not delete the newer row.
  const del = keyed.delete(5);
  const back = keyed.insert(sourceRow(5, "five again"));
  produce("pg.public.customers", [...del, ...back, del[0]!]);
  await f.sync();
  await assertModel("pg_public_customers", keyed);
});

test("a column added upstream evolves the table; rows written before read it as null", async () => {
  keyed.addColumn("email");
  produce("pg.public.customers", [
    ...keyed.update(1, { email: "one@example.com" }),
    ...keyed.insert(sourceRow(7, "n7")),
  ]);
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "pg.public.customers")!;
  assert.deepEqual(t.columnsAdded, ["email"]);
  await assertModel("pg_public_customers", keyed);
});

test("without dedup_keys or key_columns, the whole Kafka key identifies the row; a delete and its tombstone delete it", async () => {
  produce("pg.public.orders", [
    ...wholeKey.snapshot([1, 2, 3].map((id) => sourceRow(id, `o${id}`))),
    ...wholeKey.update(2, { name: "two" }),
    ...wholeKey.delete(3),
  ]);
  await f.sync();
  await assertModel("pg_public_orders", wholeKey);
  produce("pg.public.orders", [...wholeKey.delete(1), ...wholeKey.changeKey(2, 20)]);
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "pg.public.orders")!;
  assert.deepEqual([t.deadLetters, t.recordsAdded], [0, 1]);
  await assertModel("pg_public_orders", wholeKey);
});

test("envelopes that do not parse are dead letters naming what is wrong", async () => {
  const good = keyed.update(6, { name: "six" });
  produce("pg.public.customers", [
    { key: good[0]!.key, value: { payload: { after: { id: 6 } }, schema: null } },
    { key: good[0]!.key, value: { op: "x", after: { id: 6 } } },
    { key: good[0]!.key, value: { op: "u", before: null, after: null } },
    ...good,
  ]);
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "pg.public.customers")!;
  assert.equal(t.deadLetters, 3);
  const dlq = sortBy(await f.rows("pg_public_customers__dlq"), "_kafka_offset");
  assert.deepEqual(
    dlq.map((r) => [r._error_kind, r._error]),
    [
      ["bad-envelope", "the envelope has no op"],
      ["bad-envelope", 'op "x" is none of c, u, d, r (create, update, delete, read)'],
      ["bad-envelope", 'after is null for op "u" (update)'],
    ],
  );
  await assertModel("pg_public_customers", keyed);
});

test("across syncs, a replayed older change neither overwrites nor deletes the newer row the table holds", async () => {
  const older = keyed.update(6, { name: "six, older" });
  const olderDelete = keyed.delete(7);
  const again = keyed.insert(sourceRow(7, "seven again"));
  produce("pg.public.customers", [...keyed.update(6, { name: "six, newer" }), ...again]);
  await f.sync();
  await assertModel("pg_public_customers", keyed);
  // The connector replays from an older offset: the older update of 6 and the delete of 7.
  produce("pg.public.customers", [...older, ...olderDelete]);
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "pg.public.customers")!;
  assert.deepEqual([t.recordsAdded, t.positionsDeleted], [0, 0]);
  await assertModel("pg_public_customers", keyed);
  const row = (await f.rows("pg_public_customers")).find((r) => Number(r.id) === 6)!;
  assert.equal(typeof row._cdc_position, "string");
});

test("key_columns: a JSON key's fields fill the columns a plain value lacks, and may be its dedup key", async () => {
  f.source.produce("profiles", [
    { key: JSON.stringify({ user: 1, region: "eu" }), value: { plan: "free" } },
    { key: JSON.stringify({ user: 2, region: "us" }), value: { plan: "pro", region: "us-east" } },
    { key: JSON.stringify({ user: 1, region: "eu" }), value: { plan: "pro" } },
    // No key: no user_id, a dead letter like any message without its dedup key.
    { key: null, value: { plan: "free" } },
  ]);
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "profiles")!;
  assert.equal(t.deadLetters, 1);
  assert.deepEqual(
    sortBy(await f.rows("profiles"), "user_id").map((r) => [Number(r.user_id), r.region, r.plan]),
    [
      [1, "eu", "pro"],
      // The value's own field wins over the key's.
      [2, "us-east", "pro"],
    ],
  );
});

test("a delete whose before image is null (REPLICA IDENTITY NOTHING) names its row by the key's columns", async () => {
  const [d, tombstone] = keyed.delete(30);
  const value = d!.value as { payload: { before: unknown } };
  value.payload.before = null;
  produce("pg.public.customers", [d!, tombstone!]);
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "pg.public.customers")!;
  assert.deepEqual([t.deadLetters, t.positionsDeleted], [0, 1]);
  await assertModel("pg_public_customers", keyed);
});
