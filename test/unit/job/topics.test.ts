// Which topics a job selects, the skip reasons, and table names.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "#src/job/config-error.ts";
import { parseJob } from "#src/job/load-job.ts";
import { selectTopics, sharedTables, TopicSelectionError, tableNameFor } from "#src/job/topics.ts";

const job = (kafka: string, streams = "") =>
  parseJob(`name: j\nsource:\n  kafka:\n    bootstrap_servers: [k:9092]\n${kafka}${streams}`, "job.yaml");

test("table names: lowercased, characters outside [a-z0-9_] become _", () => {
  assert.equal(tableNameFor("Orders.EU-west"), "orders_eu_west");
  assert.equal(tableNameFor("customers"), "customers");
});

test("the pattern matches whole names; internal topics never match; skips say why", () => {
  const selection = selectTopics(
    job(
      "    topic_pattern: (customers|orders)\n",
      "streams:\n  orders: {mode: upsert, dedup_keys: [id], table: sales}\n",
    ),
    ["orders", "customers", "customers_v2", "__consumer_offsets", "_schemas"],
  );
  assert.deepEqual(
    selection.selected.map((s) => [s.topic, s.table, s.mode]),
    [
      ["customers", "customers", "append"],
      ["orders", "sales", "upsert"],
    ],
  );
  assert.deepEqual(selection.skipped, [
    { topic: "__consumer_offsets", reason: "internal topic" },
    { topic: "_schemas", reason: "internal topic" },
    { topic: "customers_v2", reason: "does not match topic_pattern" },
  ]);
  assert.deepEqual(selectTopics(job("    topic_pattern: .*\n"), ["__consumer_offsets", "a"]).skipped, [
    { topic: "__consumer_offsets", reason: "internal topic" },
  ]);
});

test("without a pattern the job syncs exactly the topics under streams", () => {
  const selection = selectTopics(job("", "streams:\n  orders: {mode: append}\n"), ["orders", "payments"]);
  assert.deepEqual(
    selection.selected.map((s) => s.topic),
    ["orders"],
  );
  assert.deepEqual(selection.skipped, [{ topic: "payments", reason: "not listed under streams" }]);
});

test("a pattern that matches nothing is an error listing the topics seen", () => {
  assert.throws(
    () => selectTopics(job("    topic_pattern: ^(customers|orders)$\n"), ["payments", "__consumer_offsets", "clicks"]),
    (error: unknown) => {
      assert.ok(error instanceof TopicSelectionError);
      assert.equal(
        error.message,
        "topic_pattern ^(customers|orders)$ selects none of the 2 topics on the cluster: clicks, payments",
      );
      return true;
    },
  );
});

test("two topics on one table, or on a dead-letter table, are an error", () => {
  assert.throws(() => selectTopics(job("    topic_pattern: .*\n"), ["Orders", "orders"]), /Orders and orders/);
  assert.throws(() => selectTopics(job("    topic_pattern: .*\n"), ["orders", "orders__dlq"]), /table orders__dlq/);
});

test("one rule for two topics on one table: the listed streams when the job loads, the selected topics at a sync", () => {
  assert.deepEqual(
    sharedTables([
      { topic: "Orders", table: "orders" },
      { topic: "orders", table: "orders" },
      { topic: "orders.dlq", table: "orders__dlq" },
    ]),
    [
      { topic: "orders", table: "orders", other: "Orders" },
      { topic: "orders", table: "orders__dlq", other: "Orders" },
      { topic: "orders.dlq", table: "orders__dlq", other: "orders" },
    ],
  );
  // Listed: a job file error at the stream's line.
  assert.throws(
    () => job("    topic_pattern: .*\n", "streams:\n  a.b: {mode: append}\n  c: {mode: append, table: a_b}\n"),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.issues.some((i) => i.line === 8 && /writes table a_b, as a\.b does/.test(i.message)),
  );
  // One listed, one selected by the pattern only: found when the cluster's topics are known.
  const listedOne = job("    topic_pattern: .*\n", "streams:\n  c: {mode: append, table: a_b}\n");
  assert.throws(() => selectTopics(listedOne, ["a.b", "c"]), /topics a\.b and c would both write table a_b/);
});
