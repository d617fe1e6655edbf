// Discovery against the real broker: full-name matching, internal topics, the no-match error.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { commitGroupOffsets } from "../../src/kafka/commit-offsets.ts";
import { KafkaCluster } from "../../src/kafka/connection.ts";
import { discoverTopics, NoTopicMatchError } from "../../src/kafka/discover.ts";
import { bootstrapServers, createTopic, deleteTopic } from "../helpers/kafka.ts";

const run = `floe-it-discover-${randomUUID().slice(0, 8)}`;
const orders = `${run}-orders`;
const customers = `${run}-customers`;
const ordersDlq = `${run}-orders_dlq`;
let cluster: KafkaCluster;

before(async () => {
  cluster = await KafkaCluster.connect({ bootstrapServers: [bootstrapServers], security: { protocol: "PLAINTEXT" } });
  await Promise.all([createTopic(orders, 3), createTopic(customers, 1), createTopic(ordersDlq, 1)]);
  // A committed offset makes the broker create __consumer_offsets, an internal topic to skip.
  await commitGroupOffsets(cluster, `${run}-group`, new Map([[orders, new Map([[0, 0n]])]]));
});

after(async () => {
  await cluster?.close();
  await Promise.all([deleteTopic(orders), deleteTopic(customers), deleteTopic(ordersDlq)]);
});

test("topics matching the whole pattern are selected with their partition counts", { timeout: 30_000 }, async () => {
  const { topics, skipped } = await discoverTopics(cluster, `${run}-(orders|customers)`);
  assert.deepEqual(topics, [
    { topic: customers, partitions: 1 },
    { topic: orders, partitions: 3 },
  ]);
  assert.deepEqual(
    skipped.find((s) => s.topic === ordersDlq),
    { topic: ordersDlq, reason: "does not match topic_pattern" },
  );
  assert.deepEqual(
    skipped.find((s) => s.topic === "__consumer_offsets"),
    { topic: "__consumer_offsets", reason: "internal topic" },
  );
});

test("a pattern matching everything still skips internal topics", { timeout: 30_000 }, async () => {
  const { topics, skipped } = await discoverTopics(cluster, ".*");
  assert.ok(topics.some((t) => t.topic === ordersDlq));
  assert.ok(!topics.some((t) => t.topic.startsWith("__")));
  assert.ok(skipped.every((s) => s.reason === "internal topic"));
});

test("a pattern that matches nothing is an error listing the topics seen", { timeout: 30_000 }, async () => {
  await assert.rejects(discoverTopics(cluster, `${run}-nothing`), (error: Error) => {
    assert.ok(error instanceof NoTopicMatchError);
    assert.ok(error.topicsSeen.includes(orders));
    assert.match(error.message, new RegExp(`matches no topic.*${customers}`));
    return true;
  });
});
