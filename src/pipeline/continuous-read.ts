// Continuous mode: once a sync has read its planned partitions up to the high watermarks of its
// plan, it keeps reading them as messages come, until it is stopped (its signal) or its time is
// up. It asks the partitions' last stable offsets every POLL_MS, reads from where it got to up to
// them, and commits a round when one of the job's commit: limits is reached: commit.interval
// at low traffic, max_messages or max_bytes at high. After each such commit the consumer group
// is acknowledged too, so that the group's lag is live. Exactly-once holds as in any sync:
// every commit claims its offsets against the table's parent (offset-claim.ts), and the
// job's lock is the caller's for the whole run.
//
// The partitions are the plan's: one added to a topic meanwhile is read from the next run on,
// which plans again (a continuous run ends at its `until`, and the next one starts at once).
import type { Job } from "../job/job.ts";
import type { TopicPartitions } from "../kafka/commit-offsets.ts";
import type { PartitionRange, ReadResult } from "../kafka/read.ts";
import { acknowledge } from "./acknowledge.ts";
import type { CommitRounds } from "./commit-rounds.ts";
import type { SyncPlan } from "./plan-sync.ts";
import type { BindingReads } from "./read-bindings.ts";
import type { SyncSource } from "./source.ts";
import type { SyncOptions } from "./sync-options.ts";

/** How often a caught-up continuous sync asks for new messages. */
export const POLL_MS = 200;

/**
 * Reads on after `first` (the planned read) until the signal, `until` (ms since the epoch) or a
 * read that does not complete; resolves to the sync's whole read, every round but the last committed.
 */
export async function readContinuously(
  job: Job,
  source: SyncSource,
  plan: SyncPlan,
  rounds: CommitRounds,
  reads: BindingReads,
  options: { until: number; signal?: AbortSignal | undefined; membership?: SyncOptions["membership"] },
  first: ReadResult,
): Promise<ReadResult> {
  const started = performance.now() - first.durationMs;
  const { signal, until } = options;
  const partitions = plan.offsets.partitions;
  const topics = topicPartitions(partitions);
  let last = first;
  while (last.status === "complete" && !signal?.aborted && Date.now() < until) {
    if (rounds.due()) {
      await rounds.commit();
      await acknowledge(job, source, plan, rounds.delivered, last, options.membership);
    }
    const now = Date.now();
    await sleep(Math.max(0, Math.min(POLL_MS, rounds.dueAt - now, until - now)), signal);
    if (signal?.aborted || Date.now() >= until) break;
    const watermarks = await source.listWatermarks(topics);
    const ranges: PartitionRange[] = partitions.flatMap((p) => {
      const startOffset = rounds.delivered.get(p.topic)?.get(p.partition) ?? p.startOffset;
      const stopOffset = watermarks.get(p.topic)?.get(p.partition)?.lastStableOffset ?? startOffset;
      return stopOffset > startOffset ? [{ topic: p.topic, partition: p.partition, startOffset, stopOffset }] : [];
    });
    if (ranges.length > 0) last = await reads.read(ranges);
  }
  return {
    ...last,
    messages: reads.messages,
    bytes: reads.bytes,
    durationMs: performance.now() - started,
  };
}

function topicPartitions(partitions: SyncPlan["offsets"]["partitions"]): TopicPartitions[] {
  // A plan lists every partition of a topic it reads, 0 to n-1.
  const counts = new Map<string, number>();
  for (const p of partitions) counts.set(p.topic, Math.max(counts.get(p.topic) ?? 0, p.partition + 1));
  return [...counts].map(([topic, count]) => ({ topic, partitions: count }));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
