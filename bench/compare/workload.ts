// The input of the comparison and the model of what each result table must hold.
//
// One topic of `messages` orders (bench/orders.ts) on `partitions` partitions, keyed and
// partitioned by order id, as a producer partitioning by key would. The first `keys` messages
// (one in ten by default) bring ids 0..keys-1; every later message draws one of those ids, so
// nine messages in ten update a key that exists. Appending lands every message; an upsert keeps
// the latest message of each id (the highest offset of its partition, which is the highest n).
//
// The pre-load topic brings ids 0..preloadKeys-1 once each, for the upsert into a table that
// already holds that many keys: the measured messages then all update existing keys.
import { ensureBenchTopic } from "../bench-topic.ts";
import { type OrderFields, order, orderFields } from "../orders.ts";

export interface Workload {
  topic: string;
  messages: number;
  partitions: number;
  size: number;
  /** Distinct ids in the topic. */
  keys: number;
  /** Bytes of the message values, for MB/s. */
  valueBytes: number;
}

export function workload(messages: number, partitions: number, size: number): Workload {
  const keys = Math.max(1, Math.floor(messages / 10));
  return {
    topic: `floe-bench-compare-${messages}m-${partitions}p-${size}b`,
    messages,
    partitions,
    size,
    keys,
    valueBytes: totalBytes(messages, (n) => order(n, idOf(n, keys), size).length),
  };
}

/** Message n's order id: its own for the first `keys` messages, then one of those, spread by a multiplicative hash. */
export function idOf(n: number, keys: number): number {
  return n < keys ? n : (Math.imul(n, 0x9e3779b1) >>> 0) % keys;
}

export function ensureTopic(bootstrap: string, w: Workload): Promise<void> {
  return ensureBenchTopic({
    bootstrap,
    topic: w.topic,
    partitions: w.partitions,
    messages: w.messages,
    message: (n) => {
      const id = idOf(n, w.keys);
      return { partition: id % w.partitions, key: Buffer.from(String(id)), value: order(n, id, w.size) };
    },
  });
}

export function preloadTopic(w: Workload, preloadKeys: number): string {
  return `floe-bench-compare-preload-${preloadKeys}k-${w.partitions}p-${w.size}b`;
}

export function ensurePreloadTopic(bootstrap: string, w: Workload, preloadKeys: number): Promise<void> {
  return ensureBenchTopic({
    bootstrap,
    topic: preloadTopic(w, preloadKeys),
    partitions: w.partitions,
    messages: preloadKeys,
    // Message numbers after the measured topic's, so a row's created_at tells which topic wrote it.
    message: (n) => ({ partition: n % w.partitions, key: Buffer.from(String(n)), value: preloadOrder(w, n) }),
  });
}

function preloadOrder(w: Workload, id: number): Buffer {
  return order(w.messages + id, id, w.size);
}

/** What a result table must hold: its row count, distinct ids, and the rows of a sample of ids. */
export interface Expected {
  rows: number;
  ids: number;
  /** Per sampled id: the fields of its latest message, and how many rows the id has (every message's in append mode, one otherwise). */
  sample: Map<number, { latest: OrderFields; rows: number }>;
}

export type Mode = "append" | "upsert" | "upsert-preloaded";

/** The model of the table a mode makes of the workload (for upsert-preloaded, over `preloadKeys` ids). */
export function expected(w: Workload, mode: Mode, preloadKeys = 0): Expected {
  const sampleIds = spread(w.keys, 20);
  if (mode === "upsert-preloaded") sampleIds.push(...spread(preloadKeys - w.keys, 5).map((i) => w.keys + i));
  const latest = new Map<number, number>();
  const occurrences = new Map<number, number>();
  const wanted = new Set(sampleIds);
  for (let n = 0; n < w.messages; n++) {
    const id = idOf(n, w.keys);
    if (!wanted.has(id)) continue;
    latest.set(id, n);
    occurrences.set(id, (occurrences.get(id) ?? 0) + 1);
  }
  const sample: Expected["sample"] = new Map();
  for (const id of sampleIds) {
    const n = latest.get(id);
    sample.set(id, {
      // An id the measured topic never brings keeps its pre-loaded row.
      latest: orderFields(n ?? w.messages + id),
      rows: mode === "append" ? (occurrences.get(id) ?? 0) : 1,
    });
  }
  if (mode === "append") return { rows: w.messages, ids: w.keys, sample };
  if (mode === "upsert") return { rows: w.keys, ids: w.keys, sample };
  const all = Math.max(preloadKeys, w.keys);
  return { rows: all, ids: all, sample };
}

function spread(count: number, n: number): number[] {
  if (count <= 0) return [];
  const picked = new Set<number>();
  for (let i = 0; i < n; i++) picked.add(Math.floor((i * count) / n + count / (2 * n)));
  return [...picked].sort((a, b) => a - b);
}

function totalBytes(messages: number, size: (n: number) => number): number {
  let sum = 0;
  for (let n = 0; n < messages; n++) sum += size(n);
  return sum;
}
