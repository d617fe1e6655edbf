// Kafka chores of the tests, the demo and the benchmarks, against the broker of
// dev/services/kafka.ts, or the one they are given (the secure broker as its super user, see
// dev/kafka-secure.ts; for a benchmark, another).
// Each call opens its own client and closes it, so a test never leaks a connection.

import { spawnSync } from "node:child_process";
import {
  Admin,
  type BaseOptions,
  ConfigResourceTypes,
  findErrorBy,
  IncrementalAlterConfigOperationTypes,
  ProduceAcks,
  Producer,
} from "@platformatic/kafka";
import { KafkaCluster } from "../src/kafka/connection.ts";
import { brokerPort } from "./services/kafka/config.ts";

export const bootstrapServers = `127.0.0.1:${brokerPort()}`;

const clientId = "floe-dev";

/** A broker to run the chores on, and how to connect to it; a bare "host:port" is a PLAINTEXT one. */
export type DevBroker = Pick<BaseOptions, "bootstrapBrokers" | "sasl" | "tls" | "tlsServerName"> | string;

const connectionOf = (broker: DevBroker) => (typeof broker === "string" ? { bootstrapBrokers: [broker] } : broker);

/** The plain development broker. */
export const plainBroker: DevBroker = { bootstrapBrokers: [bootstrapServers] };

export interface TestMessage {
  key?: string | Buffer | null;
  /** null produces a tombstone. */
  value: string | Buffer | null;
  partition?: number;
}

/** The development broker as floe connects to it (close it in `after`). */
export function connectCluster(): Promise<KafkaCluster> {
  return KafkaCluster.connect({ bootstrapServers: [bootstrapServers], security: { protocol: "PLAINTEXT" } });
}

/** The topics a test file creates, named `<run>-<name>`, all deleted by deleteAll (in `after`). */
export class TestTopics {
  readonly run: string;
  readonly #created: string[] = [];

  constructor(run: string) {
    this.run = run;
  }

  async create(name: string, partitions = 1): Promise<string> {
    const topic = `${this.run}-${name}`;
    this.#created.push(topic);
    await createTopic(topic, partitions);
    return topic;
  }

  async deleteAll(): Promise<void> {
    await Promise.all(this.#created.map((topic) => deleteTopic(topic)));
  }
}

/** Creates the topic and returns once every partition has a leader, so that produce succeeds at once. */
export async function createTopic(name: string, partitions = 1, broker: DevBroker = plainBroker): Promise<void> {
  await withAdmin(broker, async (admin) => {
    await admin.createTopics({ topics: [name], partitions, replicas: 1 });
    await until(`topic ${name}: no leader for all ${partitions} partitions`, async () => {
      const topic = (await admin.metadata({ topics: [name], forceUpdate: true })).topics.get(name);
      return topic?.partitionsCount === partitions && topic.partitions.every((p) => p.leader >= 0);
    });
  });
}

/**
 * Deletes the topic and returns once the broker no longer lists it, so that a topic of the same
 * name can be created at once; a topic that does not exist is already what the caller wants.
 */
export async function deleteTopic(name: string, broker: DevBroker = plainBroker): Promise<void> {
  await withAdmin(broker, async (admin) => {
    try {
      await admin.deleteTopics({ topics: [name] });
    } catch (error) {
      if (!findErrorBy(error as Error, "apiId", "UNKNOWN_TOPIC_OR_PARTITION")) throw error;
    }
    await until(
      `topic ${name}: still listed after its deletion`,
      async () => !(await admin.listTopics()).includes(name),
    );
  });
}

/**
 * Deletes the topic while the calling process stands still: a child process deletes it, and this
 * thread waits for the child without running a timer or a socket callback meanwhile. A test
 * calls it from a sync's event to delete a topic at that exact moment, however loaded the machine.
 */
export function deleteTopicNow(name: string): void {
  const script = `import { deleteTopic } from ${JSON.stringify(import.meta.url)}; await deleteTopic(${JSON.stringify(name)});`;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: 120_000,
  });
  if (child.status !== 0) throw new Error(`deleting topic ${name} failed: ${child.error?.message ?? child.stderr}`);
}

/** Sets a topic's configuration entry (retention.ms, say). */
export async function setTopicConfig(topic: string, name: string, value: string, broker: DevBroker = plainBroker) {
  await withAdmin(broker, (admin) =>
    admin.incrementalAlterConfigs({
      resources: [
        {
          resourceType: ConfigResourceTypes.TOPIC,
          resourceName: topic,
          configs: [{ name, configOperation: IncrementalAlterConfigOperationTypes.SET, value }],
        },
      ],
    }),
  );
}

/** Produces the messages in order, acknowledged by the broker before this resolves. */
export async function produce(topic: string, messages: TestMessage[], broker: DevBroker = plainBroker): Promise<void> {
  // Buffers pass through untouched; null must reach the wire as null (a null key or a tombstone).
  // Idempotent: the client retries a whole multi-partition request when one partition answers
  // "not leader" (common right after topic creation); without idempotence the others get duplicates.
  const producer = new Producer<Buffer | null, Buffer | null>({
    clientId,
    ...connectionOf(broker),
    idempotent: true,
  });
  try {
    await producer.send({
      acks: ProduceAcks.ALL,
      messages: messages.map((m) => ({
        topic,
        key: toBytes(m.key ?? null),
        value: toBytes(m.value),
        ...(m.partition === undefined ? {} : { partition: m.partition }),
      })),
    });
  } finally {
    await producer.close();
  }
}

function toBytes(data: string | Buffer | null): Buffer | null {
  return typeof data === "string" ? Buffer.from(data) : data;
}

export async function withAdmin<T>(broker: DevBroker, work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Admin({ clientId, ...connectionOf(broker) });
  try {
    return await work(admin);
  } finally {
    await admin.close();
  }
}

/** Polls `condition` until it holds; after 30 s fails with `what`. */
async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} after 30 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
