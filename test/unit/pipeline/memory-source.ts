// A Kafka cluster in memory, as a sync's source (src/pipeline/source.ts): topics with ids, partitions
// as arrays of messages at consecutive offsets, a log start that retention can move, consumer
// groups' committed offsets, and reads that can be made to fail at an offset. For unit tests
// that run whole syncs in a few milliseconds; the real cluster is tested in test/integration/.
import { randomBytes } from "node:crypto";
import type { TopicPartitionOffsets, TopicPartitions } from "#src/kafka/commit-offsets.ts";
import type { DiscoveredTopic } from "#src/kafka/discover.ts";
import type { TopicPartitionWatermarks } from "#src/kafka/plan.ts";
import {
  type BatchHandler,
  type KafkaMessage,
  KafkaReadError,
  type PartitionProgress,
  type PartitionRange,
  type ReadResult,
} from "#src/kafka/read.ts";
import type { SyncSource } from "#src/pipeline/source.ts";

export interface MemoryMessage {
  key?: string | null;
  /** An object or array is written as its JSON; a string as its bytes; null is a tombstone. */
  value: unknown;
  partition?: number;
  /** Milliseconds since the epoch; default a fixed time plus the offset. */
  timestamp?: bigint;
}

interface MemoryTopic {
  id: string;
  partitions: { logStart: bigint; messages: KafkaMessage[] }[];
}

const encoder = new TextEncoder();
const BASE_TIME = 1_700_000_000_000n;

export class MemorySource implements SyncSource {
  readonly description = "the in-memory test cluster";
  /** Messages per batch handed to a sync. */
  batchSize = 100;
  /** `topic:partition` -> the offset at which reading that partition fails, as a broker loss would. */
  readonly failReads = new Map<string, bigint>();
  /** Group -> its committed offsets. */
  readonly groups = new Map<string, TopicPartitionOffsets>();
  /** Every group commit, as sent. */
  readonly groupCommits: { group: string; offsets: TopicPartitionOffsets }[] = [];
  /** Every call of readPartitions, with its ranges. */
  readonly reads: PartitionRange[][] = [];
  /** Awaited before each batch is read: a test's other writer acts at that point of the sync. */
  beforeBatch?: ((topic: string, partition: number, offset: bigint) => Promise<void>) | undefined;
  readonly #topics = new Map<string, MemoryTopic>();

  /** `id`: the topic id, to make another test cluster hold the same topic. */
  createTopic(name: string, partitions = 1, id = randomBytes(16).toString("base64url")): this {
    this.#topics.set(name, {
      id,
      partitions: Array.from({ length: partitions }, () => ({ logStart: 0n, messages: [] })),
    });
    return this;
  }

  /** Deletes the topic and creates it again, empty, with a new id. */
  recreateTopic(name: string): this {
    return this.createTopic(name, this.#topic(name).partitions.length);
  }

  topicId(name: string): string {
    return this.#topic(name).id;
  }

  produce(topic: string, messages: readonly MemoryMessage[]): this {
    const t = this.#topic(topic);
    for (const m of messages) {
      const partition = t.partitions[m.partition ?? 0];
      if (!partition) throw new Error(`${topic} has no partition ${m.partition}`);
      const offset = partition.logStart + BigInt(partition.messages.length);
      partition.messages.push({
        topic,
        partition: m.partition ?? 0,
        offset,
        timestamp: m.timestamp ?? BASE_TIME + offset,
        key: m.key === undefined || m.key === null ? null : encoder.encode(m.key),
        value: bytesOf(m.value),
        headers: [],
      });
    }
    return this;
  }

  /** Retention: the messages below `offset` are gone. */
  deleteRecords(topic: string, partition: number, offset: bigint): this {
    const p = this.#topic(topic).partitions[partition]!;
    p.messages = p.messages.filter((m) => m.offset >= offset);
    p.logStart = offset;
    return this;
  }

  async listTopics(): Promise<string[]> {
    return [...this.#topics.keys()].sort();
  }

  async describeTopics(topics: readonly string[]): Promise<DiscoveredTopic[]> {
    return topics.map((topic) => ({
      topic,
      partitions: this.#topic(topic).partitions.length,
      topicId: this.#topic(topic).id,
    }));
  }

  async listWatermarks(topics: readonly TopicPartitions[]): Promise<TopicPartitionWatermarks> {
    const watermarks: TopicPartitionWatermarks = new Map();
    for (const { topic } of topics) {
      const byPartition = new Map();
      this.#topic(topic).partitions.forEach((p, i) => {
        const end = p.logStart + BigInt(p.messages.length);
        byPartition.set(i, { logStartOffset: p.logStart, highWatermark: end, lastStableOffset: end });
      });
      watermarks.set(topic, byPartition);
    }
    return watermarks;
  }

  async readGroupOffsets(group: string, topics: readonly TopicPartitions[]): Promise<TopicPartitionOffsets> {
    const committed = this.groups.get(group) ?? new Map();
    return new Map(
      topics.flatMap(({ topic }) => (committed.has(topic) ? [[topic, new Map(committed.get(topic))]] : [])),
    );
  }

  async commitGroupOffsets(group: string, offsets: TopicPartitionOffsets): Promise<void> {
    this.groupCommits.push({ group, offsets: new Map([...offsets].map(([t, p]) => [t, new Map(p)])) });
    const committed = this.groups.get(group) ?? new Map<string, Map<number, bigint>>();
    for (const [topic, partitions] of offsets) {
      const into = committed.get(topic) ?? new Map<number, bigint>();
      for (const [partition, offset] of partitions) into.set(partition, offset);
      committed.set(topic, into);
    }
    this.groups.set(group, committed);
  }

  /** One partition after the other, `batchSize` messages a batch; a failing read stops every partition. */
  async readPartitions(
    ranges: readonly PartitionRange[],
    onBatch: BatchHandler,
    options: { maxThreads: number; signal?: AbortSignal },
  ): Promise<ReadResult> {
    this.reads.push(ranges.map((r) => ({ ...r })));
    const progress: PartitionProgress[] = ranges.map((r) => ({
      ...r,
      nextOffset: r.startOffset,
      complete: r.startOffset >= r.stopOffset,
      messages: 0,
      bytes: 0,
    }));
    let status: ReadResult["status"] = "complete";
    let error: KafkaReadError | undefined;
    read: for (const p of progress) {
      const log = this.#topic(p.topic).partitions[p.partition]!;
      const failAt = this.failReads.get(`${p.topic}:${p.partition}`);
      while (p.nextOffset < p.stopOffset) {
        if (options.signal?.aborted) {
          status = "aborted";
          break read;
        }
        if (failAt !== undefined && p.nextOffset >= failAt) {
          status = "failed";
          error = new KafkaReadError(p.topic, p.partition, p.nextOffset, "the broker went away (test)");
          break read;
        }
        await this.beforeBatch?.(p.topic, p.partition, p.nextOffset);
        let end = p.nextOffset + BigInt(this.batchSize);
        if (end > p.stopOffset) end = p.stopOffset;
        if (failAt !== undefined && end > failAt) end = failAt;
        const messages = log.messages.filter((m) => m.offset >= p.nextOffset && m.offset < end);
        if ((await onBatch({ topic: p.topic, partition: p.partition, messages, nextOffset: end })) === false) {
          status = "aborted";
          break read;
        }
        p.nextOffset = end;
        p.messages += messages.length;
        for (const m of messages) p.bytes += (m.key?.length ?? 0) + (m.value?.length ?? 0);
      }
      p.complete = p.nextOffset >= p.stopOffset;
    }
    const result: ReadResult = {
      status,
      partitions: progress,
      messages: progress.reduce((sum, p) => sum + p.messages, 0),
      bytes: progress.reduce((sum, p) => sum + p.bytes, 0),
      durationMs: 0,
    };
    if (error) result.error = error;
    return result;
  }

  #topic(name: string): MemoryTopic {
    const topic = this.#topics.get(name);
    if (!topic) throw new Error(`no topic ${name} in the test cluster`);
    return topic;
  }
}

function bytesOf(value: unknown): Uint8Array | null {
  if (value === null) return null;
  if (value instanceof Uint8Array) return value;
  return encoder.encode(typeof value === "string" ? value : JSON.stringify(value));
}
