// topic_pattern matches whole topic names; internal topics never match.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  compileTopicPattern,
  InvalidTopicPatternError,
  isInternalTopic,
  NoTopicMatchError,
  selectTopics,
} from "../../../src/kafka/discover.ts";

test("the pattern must match the whole name, with or without anchors", () => {
  for (const pattern of ["customers|orders", "^(customers|orders)$", "(customers|orders)"]) {
    const matcher = compileTopicPattern(pattern);
    assert.ok(matcher.test("customers"), pattern);
    assert.ok(matcher.test("orders"), pattern);
    assert.ok(!matcher.test("orders_dlq"), pattern);
    assert.ok(!matcher.test("old_customers"), pattern);
  }
  assert.ok(compileTopicPattern("orders\\..*").test("orders.v2"));
  assert.ok(!compileTopicPattern("orders\\..*").test("ordersXv2"));
});

test("internal topics are __-prefixed and _schemas", () => {
  assert.ok(isInternalTopic("__consumer_offsets"));
  assert.ok(isInternalTopic("__transaction_state"));
  assert.ok(isInternalTopic("_schemas"));
  assert.ok(!isInternalTopic("_orders"));
  assert.ok(!isInternalTopic("schemas"));
});

test("selectTopics sorts, matches and gives each skipped topic its reason", () => {
  const { matched, skipped } = selectTopics(["orders", "__consumer_offsets", "customers", "audit", "_schemas"], ".*");
  assert.deepEqual(matched, ["audit", "customers", "orders"]);
  assert.deepEqual(skipped, [
    { topic: "__consumer_offsets", reason: "internal topic" },
    { topic: "_schemas", reason: "internal topic" },
  ]);
  const some = selectTopics(["orders", "orders_dlq", "customers"], "orders|customers");
  assert.deepEqual(some.matched, ["customers", "orders"]);
  assert.deepEqual(some.skipped, [{ topic: "orders_dlq", reason: "does not match topic_pattern" }]);
});

test("a pattern written to match internal topics still does not", () => {
  assert.deepEqual(selectTopics(["__consumer_offsets"], "__.*").matched, []);
});

test("an invalid pattern is a typed error that quotes it", () => {
  assert.throws(
    () => compileTopicPattern("orders("),
    (error: Error) => error instanceof InvalidTopicPatternError && error.message.includes("orders("),
  );
});

test("the no-match error lists the topics seen, and shortens a long list", () => {
  const error = new NoTopicMatchError("^x$", ["a", "b"]);
  assert.match(error.message, /topic_pattern \^x\$ matches no topic/);
  assert.match(error.message, /topics seen: a, b$/);
  const many = new NoTopicMatchError(
    "x",
    Array.from({ length: 60 }, (_, i) => `t${i}`),
  );
  assert.match(many.message, /and 10 more$/);
  assert.match(new NoTopicMatchError("x", []).message, /the cluster has no topic/);
});
