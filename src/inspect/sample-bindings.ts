// A sample of each binding's messages, run through the schema inference a sync would
// use (the table as it is, the declared columns): what `floe check` shows per binding, and what
// a discovery command proposes. Per partition, the sample takes the first messages the sync
// would read, or, when there is nothing to read, the last messages in the log.
import { SchemaSample, type StreamSample } from "../decode/schema-sample.ts";
import { currentSchema } from "../iceberg/spec/table-metadata.ts";
import type { PartitionRange } from "../kafka/read.ts";
import { bindingInference } from "../pipeline/binding-batch.ts";
import type { SyncPlan } from "../pipeline/plan-sync.ts";
import { RegistryDecoders } from "../pipeline/registry-decoders.ts";
import type { SyncSource } from "../pipeline/source.ts";
import { type RegistrySettings, SchemaRegistryClient } from "../registry/client.ts";
import { RegistrySample } from "./registry-sample.ts";

export interface SampleOptions {
  /** At most this many messages per topic, shared out over its partitions. */
  readonly messagesPerTopic: number;
  readonly maxThreads: number;
  readonly signal?: AbortSignal;
  /** The job's schema registry: Avro and Protobuf bindings are sampled through it. */
  readonly registry?: RegistrySettings | undefined;
}

/**
 * Topic -> what its sample says; every binding of the plan has an entry, empty when its topic is.
 * A sample of 0 messages reads nothing and has no entry at all (the plan alone was asked for).
 */
export async function sampleBindings(
  source: SyncSource,
  plan: SyncPlan,
  options: SampleOptions,
): Promise<Map<string, StreamSample>> {
  if (options.messagesPerTopic === 0) return new Map();
  const samples = new Map<string, SchemaSample | RegistrySample>();
  const ranges: PartitionRange[] = [];
  const decoders = options.registry && new RegistryDecoders(new SchemaRegistryClient(options.registry));
  for (const { binding, table } of plan.bindings) {
    const schema = table && { schema: currentSchema(table.metadata), lastColumnId: table.metadata.lastColumnId };
    const viaRegistry = binding.format !== "json" || binding.keyFormat !== "bytes";
    samples.set(
      binding.topic,
      viaRegistry && decoders
        ? new RegistrySample(binding, schema, decoders)
        : new SchemaSample(bindingInference(binding, schema), schema, binding.columns, binding.envelope),
    );
    const partitions = plan.offsets.partitions.filter((p) => p.topic === binding.topic);
    const quota = BigInt(Math.ceil(options.messagesPerTopic / Math.max(1, partitions.length)));
    for (const p of partitions) {
      const range =
        p.stopOffset > p.startOffset
          ? { startOffset: p.startOffset, stopOffset: min(p.stopOffset, p.startOffset + quota) }
          : { startOffset: max(p.logStartOffset, p.stopOffset - quota), stopOffset: p.stopOffset };
      if (range.stopOffset > range.startOffset) ranges.push({ topic: p.topic, partition: p.partition, ...range });
    }
  }
  if (ranges.length > 0) {
    const result = await source.readPartitions(
      ranges,
      async (batch) => {
        const sample = samples.get(batch.topic)!;
        if (sample instanceof RegistrySample) await sample.add(batch.messages);
        else for (const message of batch.messages) sample.add(message.value);
        return undefined;
      },
      { maxThreads: options.maxThreads, ...(options.signal ? { signal: options.signal } : {}) },
    );
    if (result.error) throw result.error;
  }
  return new Map([...samples].map(([topic, sample]) => [topic, sample.result()]));
}

const min = (a: bigint, b: bigint) => (a < b ? a : b);
const max = (a: bigint, b: bigint) => (a > b ? a : b);
