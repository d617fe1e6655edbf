// The read step of a sync: partitions read from a start offset to a stop offset, each fetched
// batch decoded into its binding's batch and reported as partition-progress; a round is
// committed (commit-rounds.ts) as soon as it reaches one of the job's commit: limits. A sync
// reads each planned partition up to the high watermark listed at plan time; a continuous sync
// (continuous-read.ts) then reads again from where it got to, with the same counters.
import type { Job } from "../job/job.ts";
import type { PartitionRange, ReadResult } from "../kafka/read.ts";
import type { CommitRounds } from "./commit-rounds.ts";
import type { SyncEventBody } from "./events.ts";
import type { SyncSource } from "./source.ts";
import type { SyncOptions } from "./sync-options.ts";

export class BindingReads {
  /** Messages read in this sync, from every partition. */
  messages = 0;
  /** Key and value bytes read in this sync. */
  bytes = 0;
  readonly #fromPartition = new Map<string, number>();
  readonly #job: Job;
  readonly #source: SyncSource;
  readonly #rounds: CommitRounds;
  readonly #signal: AbortSignal | undefined;
  readonly #emit: (event: SyncEventBody) => void;

  constructor(
    job: Job,
    source: SyncSource,
    rounds: CommitRounds,
    options: Pick<SyncOptions, "signal">,
    emit: (event: SyncEventBody) => void,
  ) {
    this.#job = job;
    this.#source = source;
    this.#rounds = rounds;
    this.#signal = options.signal;
    this.#emit = emit;
  }

  /** Reads the ranges that hold something, committing rounds as they fill; the result counts this call's messages. */
  async read(ranges: readonly PartitionRange[]): Promise<ReadResult> {
    const rounds = this.#rounds;
    const stopOffsets = new Map(ranges.map((p) => [`${p.partition}:${p.topic}`, p.stopOffset]));
    const result = await this.#source.readPartitions(
      ranges.filter((p) => p.stopOffset > p.startOffset),
      async (batch) => {
        const bindingBatch = rounds.batch(batch.topic);
        await bindingBatch.prepare(batch.messages);
        let bytes = 0;
        for (const message of batch.messages) {
          bindingBatch.add(message);
          bytes += (message.key?.length ?? 0) + (message.value?.length ?? 0);
        }
        rounds.markRead(batch.topic, batch.partition, batch.nextOffset, batch.messages.length, bytes);
        const key = `${batch.partition}:${batch.topic}`;
        const fromPartition = (this.#fromPartition.get(key) ?? 0) + batch.messages.length;
        this.#fromPartition.set(key, fromPartition);
        this.messages += batch.messages.length;
        this.bytes += bytes;
        this.#emit({
          type: "partition-progress",
          topic: batch.topic,
          partition: batch.partition,
          nextOffset: batch.nextOffset,
          stopOffset: stopOffsets.get(key)!,
          messages: fromPartition,
          messagesRead: this.messages,
        });
        // The round's files are encoded and committed while the next messages are read.
        if (rounds.due()) await rounds.handOff();
        return undefined;
      },
      { maxThreads: this.#job.maxThreads, ...(this.#signal ? { signal: this.#signal } : {}) },
    );
    return result;
  }
}
