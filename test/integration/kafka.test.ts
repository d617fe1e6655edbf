// Smoke test of the Kafka test service: what the tests produce through the helpers, a consumer reads back.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, test } from "node:test";
import { Consumer, stringDeserializers } from "@platformatic/kafka";
import { bootstrapServers, createTopic, deleteTopic, produce } from "../../dev/kafka.ts";

const topic = `floe-smoke-${randomUUID()}`;

after(() => deleteTopic(topic));

test("messages produced to the test broker are consumed back unchanged", { timeout: 30_000 }, async () => {
  const value = JSON.stringify({ id: 1, written: new Date().toISOString() });
  await createTopic(topic, 1);
  // The tombstone checks that null reaches the broker as null, which upsert deletes rely on.
  await produce(topic, [
    { key: "k1", value },
    { key: "k1", value: null },
  ]);

  const consumer = new Consumer({
    groupId: `floe-smoke-${randomUUID()}`,
    clientId: "floe-smoke",
    bootstrapBrokers: [bootstrapServers],
    deserializers: stringDeserializers,
    maxWaitTime: 500,
  });
  try {
    const stream = await consumer.consume({ topics: [topic], mode: "earliest", autocommit: false });
    try {
      const received = [];
      for await (const message of stream) {
        received.push({ key: message.key, value: message.value, offset: message.offset });
        if (received.length === 2) break;
      }
      assert.deepEqual(received, [
        { key: "k1", value, offset: 0n },
        // The string deserializer turns an empty value into "" and only a null one into undefined.
        { key: "k1", value: undefined, offset: 1n },
      ]);
    } finally {
      await stream.close();
    }
  } finally {
    await consumer.close();
  }
});
