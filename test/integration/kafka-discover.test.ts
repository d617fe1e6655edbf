// Discovery against the real broker: the cluster's topics with their partition counts, and the
// job's selection over that real listing (full-name matching, internal topics skipped).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { parseJob } from "#src/job/load-job.ts";
import { selectTopics } from "#src/job/topics.ts";
import { commitGroupOffsets } from "#src/kafka/commit-offsets.ts";
import type { KafkaCluster } from "#src/kafka/connection.ts";
import { listTopicPartitions, listTopics } from "#src/kafka/discover.ts";
import { bootstrapServers, connectCluster, createTopic, deleteTopic } from "../../dev/kafka.ts";

const run = `floe_it_discover_${randomUUID().slice(0, 8)}`;
const orders = `${run}_orders`;
const customers = `${run}_customers`;
const ordersDlq = `${run}_orders_dlq`;
let cluster: KafkaCluster;

before(async () => {
  cluster = await connectCluster();
  await Promise.all([createTopic(orders, 3), createTopic(customers, 1), createTopic(ordersDlq, 1)]);
  // A committed offset makes the broker create __consumer_offsets, an internal topic to skip.
  await commitGroupOffsets(cluster, `${run}-group`, new Map([[orders, new Map([[0, 0n]])]]));
});

after(async () => {
  await cluster?.close();
  await Promise.all([deleteTopic(orders), deleteTopic(customers), deleteTopic(ordersDlq)]);
});

test("the cluster lists its topics, internal ones included, with partition counts and topic ids", {
  timeout: 30_000,
}, async () => {
  const topics = await listTopics(cluster);
  assert.ok(topics.includes("__consumer_offsets"));
  assert.ok([orders, customers, ordersDlq].every((t) => topics.includes(t)));
  const listed = await listTopicPartitions(cluster, [orders, customers]);
  assert.deepEqual(
    listed.map(({ topic, partitions }) => ({ topic, partitions })),
    [
      { topic: orders, partitions: 3 },
      { topic: customers, partitions: 1 },
    ],
  );
  // Topic ids as kafka-topics.sh prints them: 16 bytes in URL-safe base64, one per topic.
  for (const { topicId } of listed) assert.match(topicId ?? "", /^[A-Za-z0-9_-]{22}$/);
  assert.notEqual(listed[0]?.topicId, listed[1]?.topicId);
  await assert.rejects(listTopicPartitions(cluster, [`${run}_gone`]), new RegExp(`${run}_gone`));
});

test("a job selects whole-name matches of the real listing and skips internal topics", {
  timeout: 30_000,
}, async () => {
  const job = parseJob(
    `name: discover\nsource:\n  kafka:\n    bootstrap_servers: [${bootstrapServers}]\n    topic_pattern: ${run}_(orders|customers)\n`,
    "job.yaml",
  );
  const { selected, skipped } = selectTopics(job, await listTopics(cluster));
  assert.deepEqual(
    selected.map((s) => s.topic),
    [customers, orders],
  );
  assert.equal(skipped.find((s) => s.topic === ordersDlq)?.reason, "does not match topic_pattern");
  assert.equal(skipped.find((s) => s.topic === "__consumer_offsets")?.reason, "internal topic");
});
