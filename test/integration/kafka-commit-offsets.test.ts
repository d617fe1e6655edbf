// The consumer group as offset storage, against the real broker: commit and read back without
// joining, and a clear refusal while another consumer is a member of the group.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { Consumer } from "@platformatic/kafka";
import {
  ConsumerGroupActiveError,
  commitGroupOffsets,
  describeGroup,
  readGroupOffsets,
} from "#src/kafka/commit-offsets.ts";
import type { KafkaCluster } from "#src/kafka/connection.ts";
import { bootstrapServers, connectCluster, createTopic, deleteTopic, produce } from "../../dev/kafka.ts";

const run = `floe-it-commit-${randomUUID().slice(0, 8)}`;
const orders = `${run}-orders`;
const customers = `${run}-customers`;
let cluster: KafkaCluster;

before(async () => {
  cluster = await connectCluster();
  await Promise.all([createTopic(orders, 3), createTopic(customers, 1)]);
});

after(async () => {
  await cluster?.close();
  await Promise.all([deleteTopic(orders), deleteTopic(customers)]);
});

test("offsets committed without joining read back, per partition, and later commits replace only theirs", {
  timeout: 30_000,
}, async () => {
  const group = `${run}-plain`;
  assert.deepEqual(await readGroupOffsets(cluster, group), new Map());
  assert.equal((await describeGroup(cluster, group)).exists, false);

  await commitGroupOffsets(
    cluster,
    group,
    new Map([
      [
        orders,
        new Map([
          [0, 10n],
          [1, 20n],
          [2, 0n],
        ]),
      ],
      [customers, new Map([[0, 7n]])],
    ]),
  );
  await commitGroupOffsets(cluster, group, new Map([[orders, new Map([[1, 25n]])]]));

  assert.deepEqual(
    await readGroupOffsets(cluster, group, [
      { topic: orders, partitions: 3 },
      { topic: customers, partitions: 1 },
    ]),
    new Map([
      [
        orders,
        new Map([
          [0, 10n],
          [1, 25n],
          [2, 0n],
        ]),
      ],
      [customers, new Map([[0, 7n]])],
    ]),
  );
  // Without topics: everything the group has.
  const all = await readGroupOffsets(cluster, group);
  assert.deepEqual(
    all.get(orders),
    new Map([
      [0, 10n],
      [1, 25n],
      [2, 0n],
    ]),
  );
  const activity = await describeGroup(cluster, group);
  assert.equal(activity.exists, true);
  assert.equal(activity.state, "Empty");
});

test("partitions without a committed offset are absent", { timeout: 30_000 }, async () => {
  const group = `${run}-partial`;
  await commitGroupOffsets(cluster, group, new Map([[orders, new Map([[1, 3n]])]]));
  assert.deepEqual(
    await readGroupOffsets(cluster, group, [{ topic: orders, partitions: 3 }]),
    new Map([[orders, new Map([[1, 3n]])]]),
  );
});

for (const groupProtocol of ["classic", "consumer"] as const) {
  test(`a group with an active ${groupProtocol} member is refused with an error naming it`, {
    timeout: 60_000,
  }, async () => {
    const group = `${run}-active-${groupProtocol}`;
    await produce(customers, [{ key: "k", value: "{}" }]);
    await commitGroupOffsets(cluster, group, new Map([[customers, new Map([[0, 0n]])]]));
    const member = new Consumer({
      clientId: "other-app",
      groupId: group,
      bootstrapBrokers: [bootstrapServers],
      groupProtocol,
      maxWaitTime: 200,
      // The member must not commit itself: the offsets read back below are floe's.
      autocommit: false,
    });
    try {
      const stream = await member.consume({ topics: [customers], mode: "committed" });
      stream.on("data", () => {});
      await waitUntil(async () => (await describeGroup(cluster, group)).state === "Stable");

      const refused = (error: Error) => {
        assert.ok(error instanceof ConsumerGroupActiveError, String(error));
        assert.equal(error.group, group);
        assert.match(error.message, new RegExp(`consumer group ${group} has active members`));
        if (groupProtocol === "classic") assert.match(error.message, /other-app on 127\.0\.0\.1 /);
        return true;
      };
      await assert.rejects(commitGroupOffsets(cluster, group, new Map([[customers, new Map([[0, 1n]])]])), refused);
      assert.deepEqual(
        await readGroupOffsets(cluster, group, [{ topic: customers, partitions: 1 }]),
        new Map([[customers, new Map([[0, 0n]])]]),
      );
    } finally {
      await member.close(true);
    }
    // Once the member has left, the group is storage again.
    await waitUntil(async () => (await describeGroup(cluster, group)).state === "Empty");
    await commitGroupOffsets(cluster, group, new Map([[customers, new Map([[0, 1n]])]]));
    assert.deepEqual(await readGroupOffsets(cluster, group), new Map([[customers, new Map([[0, 1n]])]]));
  });
}

async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in 30 s");
    await new Promise((r) => setTimeout(r, 100));
  }
}
