// The read step of a sync: every planned partition with something to read, from its start
// offset to the high watermark listed at plan time, each fetched batch decoded into its
// binding's batch and reported as partition-progress; a round is committed (commit-rounds.ts)
// as soon as the messages or the bytes read since the last reach the job's commit: limits.
import type { Job } from "../job/job.ts";
import type { ReadResult } from "../kafka/read.ts";
import type { CommitRounds } from "./commit-rounds.ts";
import type { SyncEventBody } from "./events.ts";
import type { SyncPlan } from "./plan-sync.ts";
import type { SyncSource } from "./source.ts";
import type { SyncOptions } from "./sync-options.ts";

export async function readBindings(
  job: Job,
  source: SyncSource,
  plan: SyncPlan,
  rounds: CommitRounds,
  options: Pick<SyncOptions, "maxMessagesPerCommit" | "signal">,
  emit: (event: SyncEventBody) => void,
): Promise<ReadResult> {
  let read = 0;
  const readFromPartition = new Map<string, number>();
  const partitions = plan.offsets.partitions;
  const stopOffsets = new Map(partitions.map((p) => [`${p.partition}:${p.topic}`, p.stopOffset]));
  const maxMessages = options.maxMessagesPerCommit ?? job.commit.maxMessages;
  const maxBytes = job.commit.maxBytes;
  return source.readPartitions(
    partitions.filter((p) => p.stopOffset > p.startOffset),
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
      const fromPartition = (readFromPartition.get(key) ?? 0) + batch.messages.length;
      readFromPartition.set(key, fromPartition);
      read += batch.messages.length;
      emit({
        type: "partition-progress",
        topic: batch.topic,
        partition: batch.partition,
        nextOffset: batch.nextOffset,
        stopOffset: stopOffsets.get(key)!,
        messages: fromPartition,
        messagesRead: read,
      });
      if (rounds.buffered.messages >= maxMessages || rounds.buffered.bytes >= maxBytes) await rounds.commit();
      return undefined;
    },
    { maxThreads: job.maxThreads, ...(options.signal ? { signal: options.signal } : {}) },
  );
}
