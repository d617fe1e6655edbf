// The write step of a sync: the messages read so far, one batch per binding, committed in
// rounds. Each round writes every binding's tables (write-binding.ts) with the offsets read up
// to then, and starts new batches: the read step commits a round whenever the job's commit:
// limits are reached, so that memory stays bounded and a long sync that dies keeps what it committed.

import type { Catalog } from "../iceberg/catalog/catalog.ts";
import { currentSchema } from "../iceberg/spec/table-metadata.ts";
import type { CommitPolicy } from "../job/commit-policy.ts";
import type { BindingSettings, Job } from "../job/job.ts";
import type { TopicPartitionOffsets } from "../kafka/commit-offsets.ts";
import { SchemaRegistryClient } from "../registry/client.ts";
import { BindingBatch } from "./binding-batch.ts";
import type { SyncEventBody } from "./events.ts";
import type { ClaimMember } from "./offset-claim.ts";
import type { SyncPlan } from "./plan-sync.ts";
import { RegistryDecoders } from "./registry-decoders.ts";
import { committedPosition, offsetsOfTopic } from "./snapshot-offsets.ts";
import { type BindingTables, beginWriteBinding } from "./write-binding.ts";

export class CommitRounds {
  /** Topic -> partition -> the next offset after what was read: what the next round's commits absorb. */
  readonly delivered: TopicPartitionOffsets = new Map();
  readonly #plan: SyncPlan;
  readonly #tables: Map<string, BindingTables>;
  readonly #decoders: RegistryDecoders | undefined;
  #batches: Map<string, BindingBatch>;
  /** Messages, and bytes of their keys and values, read since the last round. */
  #buffered = { messages: 0, bytes: 0 };
  /** When the round's first message was read (ms since the epoch); undefined while it has none. */
  #firstReadAt: number | undefined;
  readonly #policy: CommitPolicy;
  /** The second step of the round handed off last (handOff), while it may still be running. */
  #writing: Promise<void> | undefined;

  constructor(
    job: Job,
    catalog: Catalog,
    plan: SyncPlan,
    stateDir: string,
    emit: (event: SyncEventBody) => void,
    member?: ClaimMember,
  ) {
    this.#plan = plan;
    this.#policy = job.commit;
    const { bindings, topicIds, recreated, offsets } = plan;
    this.#tables = new Map(
      bindings.map((t): [string, BindingTables] => [
        t.binding.topic,
        {
          job,
          catalog,
          table: t.table,
          deadLetterTable: t.deadLetterTable,
          tablePosition: t.tablePosition,
          deadLetterPosition: t.deadLetterPosition,
          deadLetterResumed: t.resumed.deadLetterTable,
          stateDir,
          topicIds,
          emit,
          member,
        },
      ]),
    );
    // One registry client for the sync: a schema id names the same schema in every topic.
    const registry = job.source.schemaRegistry;
    this.#decoders =
      registry !== undefined && bindings.some((t) => usesRegistry(t.binding))
        ? new RegistryDecoders(new SchemaRegistryClient(registry))
        : undefined;
    // A re-created topic's tables record every partition from where it starts now, read or not:
    // their offsets of the deleted topic must not survive in a partition nothing was read from. So
    // do the tables of a topic resumed where the user chose: later syncs resume from what they record.
    const restarted = new Set([
      ...recreated.map((r) => r.topic),
      ...bindings.filter((t) => t.resumed.table || t.resumed.deadLetterTable).map((t) => t.binding.topic),
    ]);
    for (const p of offsets.partitions.filter((p) => restarted.has(p.topic))) {
      this.markRead(p.topic, p.partition, p.startOffset);
    }
    this.#batches = this.#newBatches();
  }

  /** The batch the messages of `topic` are added to. */
  batch(topic: string): BindingBatch {
    return this.#batches.get(topic)!;
  }

  /** Records that `partition` of `topic` was read up to `nextOffset`: `messages` more of them, of `bytes`. */
  markRead(topic: string, partition: number, nextOffset: bigint, messages = 0, bytes = 0): void {
    const offsets = this.delivered.get(topic) ?? new Map<number, bigint>();
    offsets.set(partition, nextOffset);
    this.delivered.set(topic, offsets);
    if (messages > 0 && this.#firstReadAt === undefined) this.#firstReadAt = Date.now();
    this.#buffered.messages += messages;
    this.#buffered.bytes += bytes;
  }

  /** Whether the round has reached a limit of the job's commit: policy, at `now`. */
  due(now = Date.now()): boolean {
    const { messages, bytes } = this.#buffered;
    const policy = this.#policy;
    return messages >= policy.maxMessages || bytes >= policy.maxBytes || now >= this.dueAt;
  }

  /** When the round's interval is up (ms since the epoch); Infinity while it holds no message. */
  get dueAt(): number {
    return this.#firstReadAt === undefined ? Number.POSITIVE_INFINITY : this.#firstReadAt + this.#policy.intervalMs;
  }

  get buffered(): { readonly messages: number; readonly bytes: number } {
    return this.#buffered;
  }

  /** Commits every binding's batch with the offsets read so far, then starts new batches; resolves once all is committed. */
  async commit(): Promise<void> {
    await this.handOff();
    await this.settled();
  }

  /**
   * Starts committing every binding's batch with the offsets read so far and starts new batches,
   * so that reading goes on while the round's files are encoded and committed (the second step
   * of beginWriteBinding). It first waits for the round handed off before, and throws its error:
   * a round's tables are committed in order, one round at a time, and the next round's batches
   * start from the schema the previous round gave its tables.
   */
  async handOff(): Promise<void> {
    await this.settled();
    // The bindings' tables are committed one after the other, as a whole round would be: only
    // the last one's files are left encoding and committing while reading goes on.
    let last: (() => Promise<unknown>) | undefined;
    for (const { binding } of this.#plan.bindings) {
      await last?.();
      const topic = binding.topic;
      const readOffsets: TopicPartitionOffsets = new Map([[topic, new Map(this.delivered.get(topic))]]);
      last = await beginWriteBinding(this.#tables.get(topic)!, this.#batches.get(topic)!, readOffsets);
    }
    this.#batches = this.#newBatches();
    this.#buffered = { messages: 0, bytes: 0 };
    this.#firstReadAt = undefined;
    const writing = (async () => {
      await last?.();
    })();
    // Awaited by the next handOff or settled(); until then its failure must not count as unhandled.
    writing.catch(() => {});
    this.#writing = writing;
  }

  /** Resolves once the round handed off last is committed; rejects with its error. */
  async settled(): Promise<void> {
    const writing = this.#writing;
    this.#writing = undefined;
    await writing;
  }

  #newBatches(): Map<string, BindingBatch> {
    const { topicIds } = this.#plan;
    return new Map(
      this.#plan.bindings.map(({ binding }) => {
        const { table, deadLetterTable } = this.#tables.get(binding.topic)!;
        const deadLetters =
          deadLetterTable &&
          offsetsOfTopic(
            committedPosition(deadLetterTable.metadata, deadLetterTable.name),
            binding.topic,
            topicIds.get(binding.topic),
          );
        return [
          binding.topic,
          new BindingBatch(
            binding,
            table && { schema: currentSchema(table.metadata), lastColumnId: table.metadata.lastColumnId },
            deadLetters ?? new Map(),
            usesRegistry(binding) ? this.#decoders : undefined,
          ),
        ];
      }),
    );
  }
}

function usesRegistry(binding: BindingSettings): boolean {
  return binding.format !== "json" || binding.keyFormat !== "bytes";
}
