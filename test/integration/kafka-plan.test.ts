// Planning against the real broker: log start, high watermark, last stable offset, the group's
// committed offsets read without joining, table offsets winning, and retention losses.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { Admin, ProduceAcks, Producer } from "@platformatic/kafka";
import { commitGroupOffsets } from "#src/kafka/commit-offsets.ts";
import type { KafkaCluster } from "#src/kafka/connection.ts";
import { planOffsets } from "#src/kafka/plan.ts";
import { bootstrapServers, connectCluster, produce, TestTopics } from "../../dev/kafka.ts";

const run = `floe-it-plan-${randomUUID().slice(0, 8)}`;
const topics = new TestTopics(run);
let cluster: KafkaCluster;

before(async () => {
  cluster = await connectCluster();
});

after(async () => {
  await cluster?.close();
  await topics.deleteAll();
});

/** A fresh topic with `counts[p]` messages in partition p. */
async function topicWith(name: string, counts: number[]): Promise<string> {
  const topic = await topics.create(name, counts.length);
  // One produce call per partition: the library re-sends a whole multi-partition request when one
  // partition answers "not leader" (common right after creation), duplicating the others.
  for (const [partition, count] of counts.entries()) {
    await produce(
      topic,
      Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: `{"i":${i}}`, partition })),
    );
  }
  return topic;
}

test("without group or table offsets every partition starts at its log start", { timeout: 30_000 }, async () => {
  const topic = await topicWith("fresh", [5, 3]);
  const plan = await planOffsets(cluster, { topics: [{ topic, partitions: 2 }], consumerGroup: `${run}-none` });
  assert.deepEqual(
    plan.partitions.map((p) => [p.partition, p.startFrom, p.startOffset, p.stopOffset, p.groupOffset, p.tableOffset]),
    [
      [0, "log-start", 0n, 5n, null, null],
      [1, "log-start", 0n, 3n, null, null],
    ],
  );
  assert.equal(plan.partitions[0]!.highWatermark, 5n);
  assert.equal(plan.partitions[0]!.lastStableOffset, 5n);
  assert.equal(plan.offsetsToRead, 8n);
  assert.deepEqual(plan.lost, []);
  assert.deepEqual(plan.ahead, []);
});

test("the group's committed offsets are used, and the table's win over them", { timeout: 30_000 }, async () => {
  const topic = await topicWith("group", [6, 4, 2]);
  const group = `${run}-group`;
  await commitGroupOffsets(
    cluster,
    group,
    new Map([
      [
        topic,
        new Map([
          [0, 2n],
          [1, 3n],
        ]),
      ],
    ]),
  );

  const byGroup = await planOffsets(cluster, { topics: [{ topic, partitions: 3 }], consumerGroup: group });
  assert.deepEqual(
    byGroup.partitions.map((p) => [p.startFrom, p.startOffset, p.stopOffset]),
    [
      ["group", 2n, 6n],
      ["group", 3n, 4n],
      ["log-start", 0n, 2n],
    ],
  );

  // The table is behind the group on partition 0 (a crash between the Iceberg commit and the
  // group commit cannot do that, but a restored table can) and ahead on partition 2.
  const tableOffsets = new Map([
    [
      topic,
      new Map([
        [0, 1n],
        [2, 2n],
      ]),
    ],
  ]);
  const byTable = await planOffsets(cluster, {
    topics: [{ topic, partitions: 3 }],
    consumerGroup: group,
    tableOffsets,
  });
  assert.deepEqual(
    byTable.partitions.map((p) => [p.startFrom, p.startOffset, p.stopOffset, p.groupOffset, p.tableOffset]),
    [
      ["table", 1n, 6n, 2n, 1n],
      ["group", 3n, 4n, 3n, null],
      ["table", 2n, 2n, null, 2n],
    ],
  );
  assert.equal(byTable.offsetsToRead, 5n + 1n + 0n);
});

test("records deleted below the resume offset are reported as lost, per partition", { timeout: 30_000 }, async () => {
  const topic = await topicWith("retention", [10, 10]);
  const group = `${run}-retention`;
  await commitGroupOffsets(
    cluster,
    group,
    new Map([
      [
        topic,
        new Map([
          [0, 2n],
          [1, 8n],
        ]),
      ],
    ]),
  );
  // Retention as the broker applies it: the log start offset moves to 6 on both partitions.
  const admin = new Admin({ clientId: "floe-test", bootstrapBrokers: [bootstrapServers] });
  try {
    await admin.deleteRecords({
      topics: [{ name: topic, partitions: [0, 1].map((partition) => ({ partition, offset: 6n })) }],
    });
  } finally {
    await admin.close();
  }

  const plan = await planOffsets(cluster, { topics: [{ topic, partitions: 2 }], consumerGroup: group });
  assert.deepEqual(plan.lost, [
    { topic, partition: 0, resumeOffset: 2n, startFrom: "group", logStartOffset: 6n, lost: 4n },
  ]);
  assert.deepEqual(
    plan.partitions.map((p) => [p.logStartOffset, p.startOffset, p.stopOffset]),
    [
      [6n, 6n, 10n],
      [6n, 8n, 10n],
    ],
  );

  const fromTable = await planOffsets(cluster, {
    topics: [{ topic, partitions: 2 }],
    consumerGroup: group,
    tableOffsets: new Map([[topic, new Map([[1, 1n]])]]),
  });
  assert.deepEqual(
    fromTable.lost.map((l) => [l.partition, l.startFrom, l.lost]),
    [
      [0, "group", 4n],
      [1, "table", 5n],
    ],
  );
});

test("a table offset past the end of the log is reported, not read from", { timeout: 30_000 }, async () => {
  const topic = await topicWith("ahead", [3]);
  const plan = await planOffsets(cluster, {
    topics: [{ topic, partitions: 1 }],
    consumerGroup: `${run}-ahead`,
    tableOffsets: new Map([[topic, new Map([[0, 50n]])]]),
  });
  assert.deepEqual(plan.ahead, [{ topic, partition: 0, resumeOffset: 50n, startFrom: "table", highWatermark: 3n }]);
  assert.equal(plan.partitions[0]!.stopOffset, plan.partitions[0]!.startOffset);
});

test("an open transaction holds the stop offset at the last stable offset", { timeout: 60_000 }, async () => {
  const topic = await topicWith("open-txn", [2]);
  const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
    clientId: "floe-test",
    bootstrapBrokers: [bootstrapServers],
    idempotent: true,
    transactionalId: `${run}-txn`,
    acks: ProduceAcks.ALL,
  });
  try {
    const transaction = await producer.beginTransaction();
    await transaction.send({ messages: [{ topic, partition: 0, value: Buffer.from("pending") }] });
    const plan = await planOffsets(cluster, { topics: [{ topic, partitions: 1 }], consumerGroup: `${run}-txn` });
    const [p] = plan.partitions;
    assert.equal(p!.highWatermark, 3n);
    assert.equal(p!.lastStableOffset, 2n);
    assert.equal(p!.stopOffset, 2n);
    await transaction.abort();
  } finally {
    await producer.close();
  }
});
