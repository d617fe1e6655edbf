// Bad messages: to the dead-letter table beside the topic's table (dlq), counted and dropped
// (skip), or failing the sync (fail) with a classified error; whole syncs in process.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { SyncEvent } from "#src/pipeline/events.ts";
import { type SyncFixture, sortBy, syncFixture } from "./fixture.ts";

let f: SyncFixture;

before(async () => {
  f = await syncFixture({
    streams: {
      orders: { mode: "upsert", dedup_keys: ["id"], on_error: "dlq" },
      clicks: { mode: "append", on_error: "skip" },
      payments: { mode: "append", on_error: "fail" },
    },
  });
  f.source.createTopic("orders").createTopic("clicks").createTopic("payments");
});

after(() => f.close());

test("dlq: each bad message is a row of orders__dlq with its raw bytes and reason, committed before the table", async () => {
  f.source.produce("orders", [
    { key: "a", value: { id: 1, amount: 5 } },
    { key: "b", value: "not json" },
    { key: "c", value: { amount: 7 } },
    { key: "d", value: [1, 2] },
    { key: "e", value: { id: 2, amount: "seven" } },
    { key: "f", value: { id: 3, amount: 9 } },
  ]);
  const { report, events } = await f.sync();
  const orders = report.tables.find((t) => t.topic === "orders")!;
  assert.deepEqual([orders.messagesRead, orders.recordsAdded, orders.deadLetters], [6, 2, 4]);

  const dlq = events.filter((e): e is Extract<SyncEvent, { type: "dead-letters" }> => e.type === "dead-letters");
  assert.equal(dlq.length, 1);
  assert.deepEqual(
    { table: dlq[0]!.table, count: dlq[0]!.count, reasons: dlq[0]!.reasons },
    {
      table: "unit_topics.orders__dlq",
      count: 4,
      reasons: { "not-json": 1, "missing-dedup-key": 1, "not-object": 1, "type-mismatch": 1 },
    },
  );
  // The dead letters land before the topic's table: its offsets never run ahead of them.
  const order = events.map((e) => (e.type === "table-committed" ? `table:${e.report.topic}` : e.type));
  assert.ok(order.indexOf("dead-letters") < order.indexOf("table:orders"));

  const rows = sortBy(await f.rows("orders__dlq"), "_kafka_offset");
  assert.deepEqual(
    rows.map((r) => [r._kafka_offset, r._error_kind, Buffer.from(String(r._kafka_key), "base64").toString()]),
    [
      [1n, "not-json", "b"],
      [2n, "missing-dedup-key", "c"],
      [3n, "not-object", "d"],
      [4n, "type-mismatch", "e"],
    ],
  );
  assert.equal(Buffer.from(String(rows[0]!._kafka_value), "base64").toString(), "not json");
  assert.deepEqual(
    sortBy(await f.rows("orders"), "id").map((r) => [r.id, r.amount]),
    [
      [1n, 5n],
      [3n, 9n],
    ],
  );
});

test("skip: bad messages are counted, and a topic whose every message is bad gets no table", async () => {
  f.source.produce("clicks", [{ value: "{" }, { value: "nope" }]);
  const { report, events } = await f.sync();
  const clicks = report.tables.find((t) => t.topic === "clicks")!;
  assert.deepEqual([clicks.messagesRead, clicks.skipped, clicks.deadLetters, clicks.snapshotId], [2, 2, 0, null]);
  assert.ok(!events.some((e) => e.type === "dead-letters"));
  assert.equal(await f.catalog.tableExists({ namespace: ["unit_topics"], name: "clicks" }), false);
  assert.equal(f.source.groups.get("floe_unit")?.get("clicks")?.get(0), 2n, "the group carries the offsets");
});

test("fail: the sync fails naming topic, partition and offset; the failed event says bad-message, not retryable", async () => {
  f.source.produce("payments", [{ value: { n: 1 } }, { value: "broken" }]);
  const { error, events } = await f.failingSync();
  assert.equal((error as Error).name, "BadMessageError");
  assert.match((error as Error).message, /^payments partition 0 offset 1: not-json: .*\(on_error: fail\)$/);
  const last = events.at(-1)!;
  assert.equal(last.type, "failed");
  assert.ok(last.type === "failed");
  assert.deepEqual(
    { kind: last.error.kind, retryable: last.error.retryable, name: last.error.name },
    { kind: "bad-message", retryable: false, name: "BadMessageError" },
  );
  assert.equal(await f.catalog.tableExists({ namespace: ["unit_topics"], name: "payments" }), false);
});
