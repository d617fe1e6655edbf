// The acknowledge step of a sync: the consumer group's offsets committed after every table,
// so that the tables always hold at least what the group says was consumed. The tables' offsets
// win at the next sync, so a group commit that fails after a read that stopped early loses
// nothing: the sync is partial, not failed. A member of the job's consumer group (the job's
// `cluster:`) commits as the member, in its generation: the broker refuses a stale generation.
import type { Job } from "../job/job.ts";
import { GroupCommitTopicsGoneError, type TopicPartitionOffsets } from "../kafka/commit-offsets.ts";
import { GroupMembershipError } from "../kafka/group-member.ts";
import type { PartitionPlan } from "../kafka/plan.ts";
import type { ReadResult } from "../kafka/read.ts";
import { faultPoint } from "./fault-points.ts";
import type { SyncPlan } from "./plan-sync.ts";
import type { SyncSource } from "./source.ts";
import type { SyncOptions } from "./sync-options.ts";

/**
 * The offset this sync last committed for a planned partition; absent, the group holds what the
 * plan listed (a continuous sync acknowledges after every commit round).
 */
const committedByThisSync = new WeakMap<PartitionPlan, bigint>();

/** Commits the group's offsets; resolves to why the commit failed when that does not fail the sync. */
export async function acknowledge(
  job: Job,
  source: SyncSource,
  plan: SyncPlan,
  delivered: TopicPartitionOffsets,
  read: ReadResult,
  membership?: SyncOptions["membership"],
): Promise<string | undefined> {
  // The group gets every planned partition, read or not: one with nothing to read gets the
  // offset it started from (the table's), so that a group left behind by a sync killed between
  // its table commits and its group commit catches up even when no new message comes. A partition
  // the group already holds at that offset (as the plan listed it, or as this sync committed it)
  // is left out, and a sync that moves no offset sends no commit: two round trips to the group
  // coordinator less at every sync that finds nothing new.
  const acknowledged: TopicPartitionOffsets = new Map();
  const moved: [PartitionPlan, bigint][] = [];
  for (const p of plan.offsets.partitions) {
    const offset = delivered.get(p.topic)?.get(p.partition) ?? p.startOffset;
    if (offset === (committedByThisSync.get(p) ?? p.groupOffset)) continue;
    const offsets = acknowledged.get(p.topic) ?? new Map<number, bigint>();
    offsets.set(p.partition, offset);
    acknowledged.set(p.topic, offsets);
    moved.push([p, offset]);
  }
  await faultPoint("before-group-commit");
  if (acknowledged.size === 0) return undefined;
  try {
    if (membership) await membership.commitOffsets(acknowledged);
    else await source.commitGroupOffsets(job.consumerGroup, acknowledged);
    for (const [p, offset] of moved) committedByThisSync.set(p, offset);
    return undefined;
  } catch (error) {
    // A read that stopped on a broker loss is usually followed by a group commit that fails
    // the same way. The tables hold what was read and their offsets (they win at the next
    // sync): a sync stopped by a rebalance or a broker loss commits what it has and reports it
    // as partial, and the next sync resumes; it is not a failed sync.
    // A topic deleted after its read cannot take offsets any more: its table holds what was
    // read, the other topics' offsets are committed, and the next sync no longer plans it. The
    // sync is complete; its report says why the group lacks that topic.
    // A member whose generation ended (a rebalance, or a pause past its session timeout) can no
    // longer commit the group's offsets: its tables hold what it read, and the partitions'
    // next owner resumes from them. The group's offsets are for lag tools; the sync is complete.
    if (read.status === "complete" && !(error instanceof GroupCommitTopicsGoneError)) {
      if (!(membership && error instanceof GroupMembershipError)) throw error;
    }
    return error instanceof Error ? error.message : String(error);
  }
}
