// The input topic of a benchmark: created with `partitions` partitions and filled with exactly
// `messages` messages, once. A topic that already holds that many is reused, so repeated runs
// measure the reader, not the producer.
import { Admin, ProduceAcks, Producer } from "@platformatic/kafka";

export interface BenchTopic {
  bootstrap: string;
  topic: string;
  partitions: number;
  messages: number;
  /** Message number n: its partition, key and value. */
  message(n: number): { partition: number; key: Buffer; value: Buffer };
}

export async function ensureBenchTopic(spec: BenchTopic): Promise<void> {
  const { bootstrap, topic, partitions, messages } = spec;
  const admin = new Admin({ clientId: "floe-bench", bootstrapBrokers: [bootstrap] });
  const waitFor = async (condition: () => Promise<boolean>) => {
    const deadline = Date.now() + 30_000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`topic ${topic}: timed out waiting for the broker`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  try {
    if ((await admin.listTopics()).includes(topic)) {
      const listed = await admin.listOffsets({
        topics: [
          { name: topic, partitions: range(partitions).map((partitionIndex) => ({ partitionIndex, timestamp: -1n })) },
        ],
      });
      const total = listed[0]!.partitions.reduce((sum, p) => sum + p.offset, 0n);
      if (total === BigInt(messages)) return;
      await admin.deleteTopics({ topics: [topic] });
      await waitFor(async () => !(await admin.listTopics()).includes(topic));
    }
    await admin.createTopics({ topics: [topic], partitions, replicas: 1 });
    await waitFor(async () => {
      const metadata = await admin.metadata({ topics: [topic], forceUpdate: true });
      return metadata.topics.get(topic)?.partitions.every((p) => p.leader >= 0) ?? false;
    });
  } finally {
    await admin.close();
  }
  await produce(spec);
}

async function produce({ bootstrap, topic, messages, message }: BenchTopic): Promise<void> {
  const started = performance.now();
  const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
    clientId: "floe-bench",
    bootstrapBrokers: [bootstrap],
    // Without idempotence the library re-sends a whole request when one partition answers
    // "not leader", and the partitions that had accepted it get duplicates.
    idempotent: true,
  });
  try {
    const batch = 5000;
    const inflight: Promise<unknown>[] = [];
    for (let i = 0; i < messages; i += batch) {
      const chunk = [];
      for (let n = i; n < Math.min(messages, i + batch); n++) chunk.push({ topic, ...message(n) });
      inflight.push(producer.send({ acks: ProduceAcks.ALL, messages: chunk }));
      if (inflight.length >= 8) await inflight.shift();
    }
    await Promise.all(inflight);
  } finally {
    await producer.close();
  }
  console.log(`produced ${messages} messages in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
