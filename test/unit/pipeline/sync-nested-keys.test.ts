// Whole syncs, in process, of streams keyed on a field inside a struct (`dedup_keys:
// [customer.id]`): an upsert replaces the row of its nested key across commits and syncs, a
// message without the field is a dead letter naming it, and a change stream's delete names its
// row by the nested field of its before image.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type SyncFixture, sortBy, syncFixture } from "./fixture.ts";

let f: SyncFixture;

before(async () => {
  f = await syncFixture({
    streams: {
      orders: { mode: "upsert", dedup_keys: ["customer.id", "sku"] },
      changes: { mode: "upsert", format: "debezium", dedup_keys: ["customer.id"] },
    },
  });
  f.source.createTopic("orders", 2).createTopic("changes");
});

after(() => f.close());

function order(customer: number, sku: string, qty: number) {
  return { key: `${customer}`, value: { customer: { id: customer, name: `c${customer}` }, sku, qty } };
}

async function rows(table: string) {
  return sortBy(await f.rows(table), "qty").map((r) => {
    const customer = r.customer as { id: bigint; name: string };
    return [Number(customer.id), r.sku, Number(r.qty)];
  });
}

test("an upsert keyed on customer.id and sku keeps one row per nested key, across syncs", async () => {
  f.source.produce("orders", [order(1, "a", 1), order(2, "a", 2), order(1, "b", 3), order(1, "a", 4)]);
  const first = await f.sync();
  assert.equal(first.report.tables.find((t) => t.topic === "orders")!.deadLetters, 0);
  assert.deepEqual(await rows("orders"), [
    [2, "a", 2],
    [1, "b", 3],
    [1, "a", 4],
  ]);
  f.source.produce("orders", [
    order(2, "a", 5),
    { key: "3", value: { customer: { name: "no id" }, sku: "a", qty: 6 } },
    { key: "4", value: { customer: null, sku: "a", qty: 7 } },
  ]);
  const second = await f.sync();
  assert.equal(second.report.tables.find((t) => t.topic === "orders")!.deadLetters, 2);
  assert.deepEqual(await rows("orders"), [
    [1, "b", 3],
    [1, "a", 4],
    [2, "a", 5],
  ]);
  const dlq = sortBy(await f.rows("orders__dlq"), "_kafka_offset");
  assert.deepEqual(
    dlq.map((r) => [r._error_kind, r._error]),
    [
      ["missing-dedup-key", "dedup key customer.id is missing, null or not a scalar"],
      ["missing-dedup-key", "dedup key customer.id is missing, null or not a scalar"],
    ],
  );
});

test("a change stream keyed on after.customer.id: a delete names its row by before.customer.id", async () => {
  const change = (op: string, id: number, name: string | null, lsn: number) => ({
    key: `{"id":${id}}`,
    value: {
      op,
      before: op === "d" ? { customer: { id } } : null,
      after: op === "d" ? null : { customer: { id, name }, qty: lsn },
      source: { lsn },
      ts_ms: lsn,
    },
  });
  f.source.produce("changes", [change("r", 1, "one", 10), change("r", 2, "two", 11), change("c", 3, "three", 12)]);
  await f.sync();
  f.source.produce("changes", [change("u", 1, "uno", 13), change("d", 2, null, 14), { key: '{"id":2}', value: null }]);
  const { report } = await f.sync();
  assert.equal(report.tables.find((t) => t.topic === "changes")!.deadLetters, 0);
  assert.deepEqual(
    (await rows("changes")).map(([id]) => id),
    [3, 1],
  );
  const names = sortBy(await f.rows("changes"), "qty").map((r) => (r.customer as { name: string }).name);
  assert.deepEqual(names, ["three", "uno"]);
});
