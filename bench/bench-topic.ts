// The input topic of a benchmark: created with `partitions` partitions and filled with exactly
// `messages` messages, once. A topic that already holds that many is reused, so repeated runs
// measure the reader, not the producer.
import { Admin, ProduceAcks, Producer } from "@platformatic/kafka";
import { createTopic, deleteTopic } from "../dev/kafka.ts";

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
  if ((await messagesIn(spec)) === BigInt(messages)) return;
  await deleteTopic(topic, bootstrap);
  await createTopic(topic, partitions, bootstrap);
  await produce(spec);
}

/** The messages the topic holds (the sum of its partitions' end offsets), undefined when it does not exist. */
async function messagesIn({ bootstrap, topic, partitions }: BenchTopic): Promise<bigint | undefined> {
  const admin = new Admin({ clientId: "floe-bench", bootstrapBrokers: [bootstrap] });
  try {
    if (!(await admin.listTopics()).includes(topic)) return undefined;
    const listed = await admin.listOffsets({
      topics: [
        { name: topic, partitions: range(partitions).map((partitionIndex) => ({ partitionIndex, timestamp: -1n })) },
      ],
    });
    return listed[0]!.partitions.reduce((sum, p) => sum + p.offset, 0n);
  } finally {
    await admin.close();
  }
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
