// In-memory models of what floe sync must leave in a table (system columns, upsert, append): the rows
// of an upsert table (the latest message per key, `_op_type` c for a key new to the table and u
// for one it had, tombstones deleting or ignored) and of an append table (every message), plus
// the report figures a sync of a given batch must show. Messages are produced with explicit
// partitions into fresh topics that only the test writes, so each partition's offsets count
// up from 0 in production order and the model knows every offset.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProduceAcks, Producer } from "@platformatic/kafka";
import { KafkaCluster } from "#src/kafka/connection.ts";
import { listTopicPartitions } from "#src/kafka/discover.ts";
import { planOffsets } from "#src/kafka/plan.ts";
import { bootstrapServers } from "../../dev/kafka.ts";
import type { SqlCatalogRef } from "../../dev/readers.ts";

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type Value = Record<string, Json>;

export interface ModelMessage {
  partition: number;
  offset: bigint;
  key: string | null;
  /** null: a tombstone; a string: raw bytes that are not JSON (a bad message, for the dead-letter table). */
  value: Value | null | string;
  /** The Kafka timestamp to produce it with (milliseconds); absent: the producer's clock. */
  timestamp?: bigint;
}

/** The offsets messages will get, partition by partition, in a topic only the model writes to. */
export class OffsetCounter {
  readonly #next = new Map<number, bigint>();

  assign(
    messages: readonly { partition: number; key: string | null; value: Value | null | string; timestamp?: bigint }[],
  ): ModelMessage[] {
    return messages.map((m) => {
      const offset = this.#next.get(m.partition) ?? 0n;
      this.#next.set(m.partition, offset + 1n);
      return { ...m, offset };
    });
  }

  /** The offset the next message of the partition gets: the partition's end once all is produced. */
  end(partition: number): bigint {
    return this.#next.get(partition) ?? 0n;
  }

  /** Messages produced so far, summed over partitions. */
  get total(): bigint {
    let sum = 0n;
    for (const o of this.#next.values()) sum += o;
    return sum;
  }
}

/**
 * Produces the messages with an idempotent producer (a retried request on a loaded machine must
 * not write a batch twice: the model would be off by that batch), then checks that every
 * partition ends where the counter says.
 */
export async function produceExactly(topic: string, messages: readonly ModelMessage[], counter: OffsetCounter) {
  const producer = new Producer<Buffer | null, Buffer | null>({
    clientId: "floe-test-model",
    bootstrapBrokers: [bootstrapServers],
    idempotent: true,
    timeout: 30_000,
  });
  try {
    // In requests of at most 200 messages: one request must stay below the broker's message.max.bytes.
    for (let at = 0; at < messages.length; at += 200) {
      await producer.send({
        acks: ProduceAcks.ALL,
        messages: messages.slice(at, at + 200).map((m) => ({
          topic,
          partition: m.partition,
          key: m.key === null ? null : Buffer.from(m.key),
          value: m.value === null ? null : Buffer.from(typeof m.value === "string" ? m.value : JSON.stringify(m.value)),
          ...(m.timestamp === undefined ? {} : { timestamp: m.timestamp }),
        })),
      });
    }
  } finally {
    await producer.close();
  }
  const cluster = await KafkaCluster.connect({
    bootstrapServers: [bootstrapServers],
    security: { protocol: "PLAINTEXT" },
  });
  try {
    const plan = await planOffsets(cluster, {
      topics: await listTopicPartitions(cluster, [topic]),
      consumerGroup: "floe-test-model-none",
    });
    for (const p of plan.partitions) {
      if (p.stopOffset !== counter.end(p.partition)) {
        throw new Error(
          `${topic} partition ${p.partition} ends at ${p.stopOffset}, the model at ${counter.end(p.partition)}`,
        );
      }
    }
  } finally {
    await cluster.close();
  }
}

export function base64Key(key: string | null): string | null {
  return key === null ? null : Buffer.from(key).toString("base64");
}

export interface BatchFigures {
  messagesRead: number;
  recordsAdded: number;
  positionsDeleted: number;
  tombstonesIgnored: number;
}

interface LiveRow {
  message: ModelMessage;
  op: "c" | "u";
}

/**
 * An upsert table. `keyOf` names a message's dedup key (null: a tombstone that names no row,
 * counted as ignored). Every message of one key must be in one partition, as Kafka's default
 * partitioner puts them, so that "the last offset per key wins" is well defined.
 */
export class UpsertModel {
  readonly live = new Map<string, LiveRow>();
  readonly #partitionOfKey = new Map<string, number>();

  readonly #keyOf: (m: ModelMessage) => string | null;
  readonly #tombstonesDelete: boolean;

  constructor(keyOf: (m: ModelMessage) => string | null, tombstonesDelete: boolean) {
    this.#keyOf = keyOf;
    this.#tombstonesDelete = tombstonesDelete;
  }

  /** The topic was deleted and re-created: its partitions are new ones, and a key may now be in another. */
  topicRecreated(): void {
    this.#partitionOfKey.clear();
  }

  apply(batch: readonly ModelMessage[]): BatchFigures {
    const figures: BatchFigures = {
      messagesRead: batch.length,
      recordsAdded: 0,
      positionsDeleted: 0,
      tombstonesIgnored: 0,
    };
    const last = new Map<string, ModelMessage>();
    for (const m of batch) {
      if (typeof m.value === "string") continue; // a dead letter
      if (m.value === null && !this.#tombstonesDelete) {
        figures.tombstonesIgnored++;
        continue;
      }
      const key = this.#keyOf(m);
      if (key === null) throw new Error("model: a message without a key");
      const partition = this.#partitionOfKey.get(key);
      if (partition !== undefined && partition !== m.partition) throw new Error(`model: key ${key} in two partitions`);
      this.#partitionOfKey.set(key, m.partition);
      const seen = last.get(key);
      if (!seen || seen.offset < m.offset) last.set(key, m);
    }
    for (const [key, m] of last) {
      const had = this.live.has(key);
      if (had) figures.positionsDeleted++;
      if (m.value === null) {
        this.live.delete(key);
      } else {
        this.live.set(key, { message: m, op: had ? "u" : "c" });
        figures.recordsAdded++;
      }
    }
    return figures;
  }

  /** The table's rows, ordered by (partition, offset): `columns` from the value, then the system columns. */
  rows(columns: readonly string[], convert: (column: string, v: unknown) => unknown = defaultConvert) {
    return [...this.live.values()]
      .sort((a, b) => a.message.partition - b.message.partition || Number(a.message.offset - b.message.offset))
      .map(({ message, op }) => modelRow(message, op, columns, convert));
  }
}

/** An append table: every message is a row, a tombstone too (`_op_type` d, value columns null). */
export class AppendModel {
  readonly messages: ModelMessage[] = [];

  /** Bad messages (string values): they go to the dead-letter table. */
  readonly deadLetters: ModelMessage[] = [];

  apply(batch: readonly ModelMessage[]): BatchFigures {
    const rows = batch.filter((m) => typeof m.value !== "string");
    this.messages.push(...rows);
    this.deadLetters.push(...batch.filter((m) => typeof m.value === "string"));
    return { messagesRead: batch.length, recordsAdded: rows.length, positionsDeleted: 0, tombstonesIgnored: 0 };
  }

  /** The dead-letter table's rows, as read with deadLetterColumns, ordered by (partition, offset). */
  deadLetterRows(): Record<string, unknown>[] {
    return [...this.deadLetters]
      .sort((a, b) => a.partition - b.partition || Number(a.offset - b.offset))
      .map((m) => ({
        _kafka_partition: m.partition,
        _kafka_offset: m.offset,
        _kafka_value: Buffer.from(m.value as string).toString("base64"),
        _error_kind: "not-json",
      }));
  }

  rows(columns: readonly string[], convert: (column: string, v: unknown) => unknown = defaultConvert) {
    return [...this.messages]
      .sort((a, b) => a.partition - b.partition || Number(a.offset - b.offset))
      .map((m) => modelRow(m, m.value === null ? "d" : "c", columns, convert));
  }
}

/**
 * How a value reads back: whole JSON numbers land in long columns (read as bigint), nested
 * objects and arrays in string columns as their JSON text, ISO 8601 timestamp strings in
 * timestamptz columns (read in UTC with microseconds: "2025-01-02T03:04:05.678000Z").
 */
export function defaultConvert(_column: string, v: unknown): unknown {
  if (typeof v === "number" && Number.isInteger(v)) return BigInt(v);
  if (v !== null && typeof v === "object") return JSON.stringify(v);
  if (typeof v === "string" && ISO_TIMESTAMP.test(v)) return `${new Date(v).toISOString().slice(0, -1)}000Z`;
  return v;
}

/** The timestamps the model tests write: milliseconds, and Z or a ±hh:mm offset. */
const ISO_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$/;

function modelRow(
  m: ModelMessage,
  op: string,
  columns: readonly string[],
  convert: (column: string, v: unknown) => unknown,
): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  const value = typeof m.value === "string" ? null : m.value;
  for (const c of columns) row[c] = convert(c, value?.[c] ?? null);
  row._kafka_key = base64Key(m.key);
  row._kafka_partition = m.partition;
  row._kafka_offset = m.offset;
  row._op_type = op;
  return row;
}

export const deadLetterColumns = ["_kafka_partition", "_kafka_offset", "_kafka_value", "_error_kind"];

/** The columns a table is read with to compare it with a model's rows. */
export function modelColumns(columns: readonly string[]): string[] {
  return [...columns, "_kafka_key", "_kafka_partition", "_kafka_offset", "_op_type"];
}

/** A seeded generator (mulberry32): FLOE_SEED replays a failure. */
export class Random {
  readonly seed: number;
  #state: number;

  constructor(seed: number) {
    this.seed = seed;
    this.#state = seed >>> 0;
  }

  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** A sync test's own names and folders: a job name unique to the run, and an embedded (SQLite) warehouse. */
export function syncWorkspace(kind: string) {
  const run = `${process.pid}_${Date.now()}`;
  const name = `${kind}_${run}`;
  const dir = mkdtempSync(join(tmpdir(), `floe-${kind}-`));
  const warehouse = join(dir, "warehouse");
  const catalogRef: SqlCatalogRef = { type: "sql", uri: join(warehouse, "catalog.db"), warehouse, name: "floe" };
  return { run, name, namespace: `${name}_topics`, dir, warehouse, stateDir: join(dir, "state"), catalogRef };
}
