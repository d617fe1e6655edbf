// What the streams step of a new job shows: the cluster's topics (a pattern narrows them) with
// their partitions and retained messages (high watermark minus log start), and per topic the
// columns a sync would infer from a sample of its last messages, each with an example value,
// so that dedup keys are picked from real fields. Reads a sample; writes nothing.
import { isInternalTopic, topicMatcher } from "../config/topics.ts";
import { SchemaInference } from "../decode/infer-schema.ts";
import { SchemaSample } from "../decode/schema-sample.ts";
import type { PartitionRange } from "../kafka/read.ts";
import type { SyncSource } from "./source.ts";

export interface DiscoveredColumn {
  name: string;
  /** The Iceberg type inferred; undefined when the sample gave only nulls. */
  type: string | undefined;
  nullable: boolean;
  /** The first non-null value sampled, as JSON text, cut at 80 characters. */
  example: string | undefined;
}

export interface DiscoveredStream {
  topic: string;
  partitions: { partition: number; logStartOffset: string; highWatermark: string; retained: number }[];
  retained: number;
  sampled: number;
  columns: DiscoveredColumn[];
}

export interface StreamDiscovery {
  topics: DiscoveredStream[];
  /** Topics left out, and why (internal, beyond the limit). */
  skipped: { topic: string; reason: string }[];
}

export interface DiscoveryOptions {
  /** A regular expression matched against the whole topic name; absent: every topic. */
  topicPattern?: string | undefined;
  /** Messages sampled per topic (the last ones of each partition). */
  sample?: number;
  /** At most this many topics are described and sampled. */
  maxTopics?: number;
  maxThreads?: number;
}

const utf8 = new TextDecoder();

export async function discoverStreams(source: SyncSource, options: DiscoveryOptions = {}): Promise<StreamDiscovery> {
  const matcher = options.topicPattern ? topicMatcher(options.topicPattern) : undefined;
  const skipped: StreamDiscovery["skipped"] = [];
  const names: string[] = [];
  for (const topic of await source.listTopics()) {
    if (isInternalTopic(topic)) skipped.push({ topic, reason: "internal topic" });
    else if (matcher && !matcher.test(topic)) continue;
    else if (names.length >= (options.maxTopics ?? 100))
      skipped.push({ topic, reason: "beyond the first 100; narrow the pattern" });
    else names.push(topic);
  }
  const described = await source.describeTopics(names);
  const watermarks = await source.listWatermarks(described.map((d) => ({ topic: d.topic, partitions: d.partitions })));
  const quota = options.sample ?? 200;
  const samples = new Map<
    string,
    { sample: SchemaSample; examples: Map<string, string>; seen: Map<string, number>; messages: number }
  >();
  const ranges: PartitionRange[] = [];
  const topics: DiscoveredStream[] = described.map((d) => {
    const parts = [...(watermarks.get(d.topic) ?? new Map()).entries()].sort(([a], [b]) => a - b);
    const perPartition = BigInt(Math.ceil(quota / Math.max(1, parts.length)));
    samples.set(d.topic, {
      sample: new SchemaSample(new SchemaInference(undefined), undefined),
      examples: new Map(),
      seen: new Map(),
      messages: 0,
    });
    for (const [partition, w] of parts) {
      const start =
        w.highWatermark - perPartition > w.logStartOffset ? w.highWatermark - perPartition : w.logStartOffset;
      if (w.highWatermark > start)
        ranges.push({ topic: d.topic, partition, startOffset: start, stopOffset: w.highWatermark });
    }
    const partitions = parts.map(([partition, w]) => ({
      partition,
      logStartOffset: String(w.logStartOffset),
      highWatermark: String(w.highWatermark),
      retained: Number(w.highWatermark - w.logStartOffset),
    }));
    return {
      topic: d.topic,
      partitions,
      retained: partitions.reduce((sum, p) => sum + p.retained, 0),
      sampled: 0,
      columns: [],
    };
  });
  if (ranges.length > 0) {
    const result = await source.readPartitions(
      ranges,
      (batch) => {
        const s = samples.get(batch.topic)!;
        for (const message of batch.messages) {
          s.sample.add(message.value);
          s.messages++;
          const fields = parseObject(message.value);
          for (const [name, value] of Object.entries(fields ?? {})) {
            s.seen.set(name, (s.seen.get(name) ?? 0) + 1);
            if (value !== null && !s.examples.has(name)) s.examples.set(name, JSON.stringify(value).slice(0, 80));
          }
        }
        return undefined;
      },
      { maxThreads: options.maxThreads ?? 2 },
    );
    if (result.error) throw result.error;
  }
  for (const t of topics) {
    const s = samples.get(t.topic)!;
    const result = s.sample.result();
    t.sampled = s.messages;
    t.columns = result.columns.map((c) => ({
      name: c.name,
      type: c.type,
      nullable: (c.values.null ?? 0) > 0 || (s.seen.get(c.name) ?? 0) < s.messages,
      example: s.examples.get(c.name),
    }));
  }
  return { topics, skipped };
}

function parseObject(value: Uint8Array | null): Record<string, unknown> | undefined {
  if (value === null) return undefined;
  try {
    const parsed: unknown = JSON.parse(utf8.decode(value));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
