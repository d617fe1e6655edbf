// Reading planned partitions against the real broker: exactly [start, stop) while producers keep
// writing, null keys and tombstones, transactions, and clean stops.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { subscribe, tracingChannel, unsubscribe } from "node:diagnostics_channel";
import { syncBuiltinESMExports } from "node:module";
import net from "node:net";
import { after, before, test } from "node:test";
import { Admin, ProduceAcks, Producer } from "@platformatic/kafka";
import { commitGroupOffsets } from "#src/kafka/commit-offsets.ts";
import type { KafkaCluster } from "#src/kafka/connection.ts";
import { planOffsets } from "#src/kafka/plan.ts";
import { type KafkaMessage, KafkaReadError, readPartitions } from "#src/kafka/read.ts";
import { bootstrapServers, connectCluster, produce, type TestMessage, TestTopics } from "../../dev/kafka.ts";

const run = `floe-it-read-${randomUUID().slice(0, 8)}`;
const topics = new TestTopics(run);
let cluster: KafkaCluster;

before(async () => {
  cluster = await connectCluster();
});

after(async () => {
  await cluster?.close();
  await topics.deleteAll();
});

/**
 * Produces `rounds` batches of `size` messages to each partition, value "<partition>:<offset>".
 * One produce call per partition and round: the library re-sends a whole multi-partition request
 * when one partition answers "not leader", which would duplicate the others.
 */
async function fill(topic: string, partitions: number, rounds: number, size: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (let partition = 0; partition < partitions; partition++) {
      const messages: TestMessage[] = Array.from({ length: size }, (_, i) => ({
        key: `k${i % 7}`,
        value: `${partition}:${round * size + i}`,
        partition,
      }));
      await produce(topic, messages);
    }
  }
}

function text(bytes: Uint8Array | null): string | null {
  return bytes === null ? null : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString();
}

test("exactly [start, stop) of 3 partitions with 3 threads while a producer keeps producing", {
  timeout: 120_000,
}, async () => {
  const topic = await topics.create("exact", 3);
  await fill(topic, 3, 3, 100);
  const group = `${run}-exact`;
  // Partition 0 resumes mid-batch from the table, partition 1 mid-batch from the group, partition 2 from the log start.
  await commitGroupOffsets(
    cluster,
    group,
    new Map([
      [
        topic,
        new Map([
          [0, 10n],
          [1, 120n],
        ]),
      ],
    ]),
  );
  const plan = await planOffsets(cluster, {
    topics: [{ topic, partitions: 3 }],
    consumerGroup: group,
    tableOffsets: new Map([[topic, new Map([[0, 50n]])]]),
  });
  assert.deepEqual(
    plan.partitions.map((p) => [p.startOffset, p.stopOffset]),
    [
      [50n, 300n],
      [120n, 300n],
      [0n, 300n],
    ],
  );

  // Keep producing past the stop offsets for the whole read.
  const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
    clientId: "floe-test",
    bootstrapBrokers: [bootstrapServers],
    idempotent: true,
  });
  let producing = true;
  let late = 0;
  const produceLate = async () => {
    const partition = late % 3;
    await producer.send({
      acks: ProduceAcks.ALL,
      messages: [{ topic, partition, value: Buffer.from(`${partition}:late:${late++}`) }],
    });
  };
  // Every partition has messages past its stop offset before the read starts, and gets more during it.
  for (let i = 0; i < 3; i++) await produceLate();
  const background = (async () => {
    while (producing) await produceLate();
  })();

  const received = new Map<number, KafkaMessage[]>([
    [0, []],
    [1, []],
    [2, []],
  ]);
  // Fetches in flight, seen through the library's diagnostics channel.
  const fetches = tracingChannel("plt:kafka:consumer:fetches");
  let fetching = 0;
  let maxFetching = 0;
  const onFetch = {
    start: () => {
      maxFetching = Math.max(maxFetching, ++fetching);
    },
    asyncStart: () => {
      fetching--;
    },
    end: () => {},
    asyncEnd: () => {},
    error: () => {},
  };
  fetches.subscribe(onFetch);
  let overlapping = false;
  let delivering = false;
  try {
    const result = await readPartitions(
      cluster,
      plan.partitions,
      async (batch) => {
        if (delivering) overlapping = true;
        delivering = true;
        received.get(batch.partition)!.push(...batch.messages);
        assert.equal(batch.nextOffset, batch.messages.at(-1)!.offset + 1n);
        // Slow consumer: gives the producer time to append beyond the stop offsets.
        await new Promise((r) => setTimeout(r, 2));
        delivering = false;
      },
      { maxThreads: 3, maxBytesPerFetch: 1024 },
    );
    assert.equal(result.status, "complete");
    assert.deepEqual(
      result.partitions.map((p) => [p.partition, p.nextOffset, p.complete, p.messages]),
      [
        [0, 300n, true, 250],
        [1, 300n, true, 180],
        [2, 300n, true, 300],
      ],
    );
    assert.equal(result.messages, 730);
  } finally {
    fetches.unsubscribe(onFetch);
    producing = false;
    await background;
    await producer.close();
  }
  assert.ok(late > 3, "the producer wrote during the read");
  assert.equal(overlapping, false, "batches are delivered one at a time");
  // Partitions are fetched in parallel, never more than one fetch per thread.
  assert.ok(maxFetching > 1 && maxFetching <= 3, `fetches in flight at once: ${maxFetching}`);
  for (const [partition, messages] of received) {
    const start = Number(plan.partitions[partition]!.startOffset);
    assert.deepEqual(
      messages.map((m) => [m.topic, m.partition, m.offset, text(m.value)]),
      Array.from({ length: 300 - start }, (_, i) => [topic, partition, BigInt(start + i), `${partition}:${start + i}`]),
      `partition ${partition}`,
    );
  }
});

test("null keys and tombstones come through as null, empty ones as empty, with headers and timestamps", {
  timeout: 60_000,
}, async () => {
  const topic = await topics.create("nulls", 1);
  const producer = new Producer<Buffer | null, Buffer | null, Buffer, Buffer>({
    clientId: "floe-test",
    bootstrapBrokers: [bootstrapServers],
    idempotent: true,
  });
  try {
    await producer.send({
      acks: ProduceAcks.ALL,
      messages: [
        { topic, partition: 0, key: null, value: Buffer.from("no key"), timestamp: 1_700_000_000_123n },
        { topic, partition: 0, key: Buffer.from("k"), value: null },
        { topic, partition: 0, key: null, value: null },
        {
          topic,
          partition: 0,
          key: Buffer.alloc(0),
          value: Buffer.alloc(0),
          // A Map: with the default (no-op) serializers, an object's string keys make send() hang.
          headers: new Map([[Buffer.from("source"), Buffer.from("web")]]),
        },
      ],
    });
  } finally {
    await producer.close();
  }
  const plan = await planOffsets(cluster, { topics: [{ topic, partitions: 1 }], consumerGroup: `${run}-nulls` });
  const messages: KafkaMessage[] = [];
  await readPartitions(cluster, plan.partitions, (batch) => {
    messages.push(...batch.messages);
  });
  assert.deepEqual(
    messages.map((m) => [m.offset, text(m.key), text(m.value)]),
    [
      [0n, null, "no key"],
      [1n, "k", null],
      [2n, null, null],
      [3n, "", ""],
    ],
  );
  assert.equal(messages[0]!.timestamp, 1_700_000_000_123n);
  assert.ok(messages[1]!.timestamp > 1_700_000_000_123n);
  assert.deepEqual(
    messages[3]!.headers.map(([k, v]) => [text(k), text(v)]),
    [["source", "web"]],
  );
  assert.deepEqual(messages[0]!.headers, []);
});

test("transaction markers and aborted transactions are skipped; the read ends at the stop offset", {
  timeout: 60_000,
}, async () => {
  const topic = await topics.create("txn", 1);
  await produce(topic, [
    { value: "a0", partition: 0 },
    { value: "a1", partition: 0 },
  ]);
  const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
    clientId: "floe-test",
    bootstrapBrokers: [bootstrapServers],
    idempotent: true,
    transactionalId: `${run}-txn`,
    acks: ProduceAcks.ALL,
  });
  try {
    const send = async (values: string[], outcome: "commit" | "abort") => {
      const transaction = await producer.beginTransaction();
      // One send per value: one record batch each, so that a small fetch sees the aborted
      // records without their abort marker, which comes in a later response.
      for (const value of values)
        await transaction.send({ messages: [{ topic, partition: 0, value: Buffer.from(value) }] });
      await (outcome === "commit" ? transaction.commit() : transaction.abort());
    };
    await send(["t1", "t2"], "commit"); // offsets 2, 3, marker 4
    await send(["x1", "x2", "x3"], "abort"); // offsets 5, 6, 7, marker 8
    await produce(topic, [{ value: "b0", partition: 0 }]); // offset 9
    await send(["t3"], "commit"); // offset 10, marker 11
    await send(["x4"], "abort"); // offset 12, marker 13
  } finally {
    await producer.close();
  }
  // The coordinator writes a transaction's marker after EndTxn has answered: until the last
  // abort marker (offset 13) is in the log, the last stable offset stays at 12.
  let plan = await planOffsets(cluster, { topics: [{ topic, partitions: 1 }], consumerGroup: `${run}-txn` });
  for (const deadline = Date.now() + 30_000; plan.partitions[0]!.stopOffset < 14n && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    plan = await planOffsets(cluster, { topics: [{ topic, partitions: 1 }], consumerGroup: `${run}-txn` });
  }
  assert.equal(plan.partitions[0]!.stopOffset, 14n);
  for (const maxBytesPerFetch of [1, 1024 * 1024]) {
    const messages: KafkaMessage[] = [];
    const result = await readPartitions(
      cluster,
      plan.partitions,
      (batch) => {
        messages.push(...batch.messages);
      },
      { maxBytesPerFetch },
    );
    assert.deepEqual(
      messages.map((m) => [m.offset, text(m.value)]),
      [
        [0n, "a0"],
        [1n, "a1"],
        [2n, "t1"],
        [3n, "t2"],
        [9n, "b0"],
        [10n, "t3"],
      ],
      `maxBytesPerFetch ${maxBytesPerFetch}`,
    );
    assert.equal(result.status, "complete");
    assert.equal(result.partitions[0]!.nextOffset, 14n);
  }
});

test("an offset deleted during the read stops it cleanly, reporting what was read", { timeout: 60_000 }, async () => {
  const topic = await topics.create("deleted", 2);
  await fill(topic, 2, 10, 10);
  const plan = await planOffsets(cluster, { topics: [{ topic, partitions: 2 }], consumerGroup: `${run}-deleted` });
  const admin = new Admin({ clientId: "floe-test", bootstrapBrokers: [bootstrapServers] });
  const delivered = new Map<number, bigint>();
  try {
    let deleted = false;
    const result = await readPartitions(
      cluster,
      plan.partitions,
      async (batch) => {
        delivered.set(batch.partition, batch.nextOffset);
        if (!deleted && batch.partition === 0) {
          deleted = true;
          // Retention catches up with the reader: everything below 80 goes.
          await admin.deleteRecords({ topics: [{ name: topic, partitions: [{ partition: 0, offset: 80n }] }] });
        }
      },
      // One record batch (10 messages) per fetch: the read is far from offset 80 when it happens.
      { maxThreads: 1, maxBytesPerFetch: 1 },
    );
    assert.equal(result.status, "failed");
    assert.ok(result.error instanceof KafkaReadError);
    assert.equal(result.error.topic, topic);
    assert.equal(result.error.partition, 0);
    assert.match(result.error.message, /no longer in the log/);
    assert.match(result.error.message, new RegExp(`reading ${topic} partition 0 at offset ${result.error.offset}`));
    const p0 = result.partitions[0]!;
    assert.equal(p0.complete, false);
    assert.equal(p0.nextOffset, delivered.get(0));
    assert.equal(BigInt(p0.messages), p0.nextOffset);
    assert.ok(p0.nextOffset < 80n);
    // With one thread, partition 1 waited its turn and was not read.
    assert.equal(result.partitions[1]!.nextOffset, 0n);
  } finally {
    await admin.close();
  }
});

test("a broker lost mid-read stops the read cleanly, reporting what was read", { timeout: 60_000 }, async () => {
  const topic = await topics.create("broker-lost", 2);
  await fill(topic, 2, 10, 10);
  const plan = await planOffsets(cluster, { topics: [{ topic, partitions: 2 }], consumerGroup: `${run}-lost` });

  // The broker "goes away": the reader's open connections are cut and new ones are refused.
  // The library imports net.createConnection by name; syncBuiltinESMExports makes it see the stub.
  const connections: { socket?: net.Socket }[] = [];
  const onInstance = (message: unknown) => {
    const { type, instance } = message as { type: string; instance: { socket?: net.Socket } };
    if (type === "connection") connections.push(instance);
  };
  subscribe("plt:kafka:instances", onInstance);
  const createConnection = net.createConnection;
  const refuse = () => {
    net.createConnection = (() => {
      const socket = new net.Socket();
      const error = Object.assign(new Error("connect ECONNREFUSED (test: broker gone)"), { code: "ECONNREFUSED" });
      process.nextTick(() => socket.destroy(error));
      return socket;
    }) as typeof net.createConnection;
    syncBuiltinESMExports();
    for (const connection of connections) connection.socket?.destroy();
  };
  const delivered = new Map<number, bigint>();
  try {
    const result = await readPartitions(
      cluster,
      plan.partitions,
      (batch) => {
        delivered.set(batch.partition, batch.nextOffset);
        if (delivered.size === 2 && net.createConnection === createConnection) refuse();
      },
      { maxThreads: 2, maxBytesPerFetch: 1, retries: 1 },
    );
    assert.equal(result.status, "failed");
    assert.ok(result.error instanceof KafkaReadError, String(result.error));
    assert.match(
      result.error.message,
      /cannot connect to Kafka at 127\.0\.0\.1:\d+ over PLAINTEXT: connection refused/,
    );
    for (const p of result.partitions) {
      // Each partition reports exactly what its callback accepted: what the caller may commit.
      assert.equal(p.complete, false);
      assert.equal(p.nextOffset, delivered.get(p.partition));
      assert.equal(BigInt(p.messages), p.nextOffset);
    }
  } finally {
    net.createConnection = createConnection;
    syncBuiltinESMExports();
    unsubscribe("plt:kafka:instances", onInstance);
  }
});

test("a batch declined by the callback stops the read without counting it", { timeout: 60_000 }, async () => {
  const topic = await topics.create("declined", 1);
  await fill(topic, 1, 3, 10);
  const plan = await planOffsets(cluster, { topics: [{ topic, partitions: 1 }], consumerGroup: `${run}-declined` });
  let calls = 0;
  const result = await readPartitions(cluster, plan.partitions, () => (++calls === 2 ? false : undefined), {
    maxBytesPerFetch: 1,
  });
  assert.equal(result.status, "aborted");
  assert.equal(calls, 2);
  assert.equal(result.partitions[0]!.nextOffset, 10n);
  assert.equal(result.messages, 10);
});

test("an error of the callback stops the read and is thrown", { timeout: 60_000 }, async () => {
  const topic = await topics.create("callback", 2);
  await fill(topic, 2, 3, 10);
  const plan = await planOffsets(cluster, { topics: [{ topic, partitions: 2 }], consumerGroup: `${run}-callback` });
  const failure = new Error("decode failed");
  let calls = 0;
  await assert.rejects(
    readPartitions(
      cluster,
      plan.partitions,
      () => {
        calls++;
        throw failure;
      },
      { maxThreads: 2, maxBytesPerFetch: 1 },
    ),
    (error) => error === failure,
  );
  assert.equal(calls, 1);
});

test("aborting stops the read with the progress made so far", { timeout: 60_000 }, async () => {
  const topic = await topics.create("abort", 1);
  await fill(topic, 1, 5, 10);
  const plan = await planOffsets(cluster, { topics: [{ topic, partitions: 1 }], consumerGroup: `${run}-abort` });
  const controller = new AbortController();
  const result = await readPartitions(
    cluster,
    plan.partitions,
    () => {
      controller.abort();
    },
    { maxBytesPerFetch: 1, signal: controller.signal },
  );
  assert.equal(result.status, "aborted");
  assert.equal(result.partitions[0]!.nextOffset, 10n);
  assert.equal(result.messages, 10);
});

test("a partition listed twice is refused before any fetch", { timeout: 10_000 }, async () => {
  const range = { topic: `${run}-twice`, partition: 0, startOffset: 0n, stopOffset: 5n };
  await assert.rejects(
    readPartitions(cluster, [range, { ...range, startOffset: 2n }], () => undefined),
    /partition 0 is listed twice/,
  );
});

test("ranges with nothing to read complete without a fetch", { timeout: 10_000 }, async () => {
  const result = await readPartitions(
    cluster,
    [{ topic: `${run}-never-created`, partition: 0, startOffset: 5n, stopOffset: 5n }],
    () => assert.fail("no batch expected"),
  );
  assert.equal(result.status, "complete");
  assert.equal(result.partitions[0]!.nextOffset, 5n);
});
