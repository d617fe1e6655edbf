// A sync as it happens, in typed events: the CLI's report and progress line, a scheduler's run
// history and a live view all consume the same facts. Every event carries the run's id and
// when it happened; a run emits, in order:
//
//   started                 once
//   planned                 once the plan is made: the tables, and per partition what to read
//   partition-progress      after each batch of messages read
//   dead-letters            when a dead-letter table commit landed (before its topic's table)
//   table-committed         after each commit round of a topic, with its commit report
//   finished | failed       once, last: the status, or the error and its kind
//
// A run that fails before its plan emits started and failed only.
import type { SkippedTopic } from "../job/topics.ts";
import type { LostMessages, PartitionPlan } from "../kafka/plan.ts";
import type { ReadStatus } from "../kafka/read.ts";
import type { RejectReason } from "./binding-batch.ts";
import type { SyncError } from "./classify-error.ts";
import type { RecreatedTopic } from "./plan-sync.ts";
import type { TableReport } from "./write-binding.ts";

export type SyncEvent =
  | SyncStarted
  | SyncPlanned
  | PartitionProgress
  | DeadLettersCommitted
  | TableCommitted
  | SyncFinished
  | SyncFailed;

interface EventBase {
  readonly runId: string;
  /** When it happened: milliseconds since the epoch. */
  readonly at: number;
}

export interface SyncStarted extends EventBase {
  readonly type: "started";
  readonly job: string;
}

/** A selected topic and the table it lands in. */
export interface PlannedTable {
  readonly topic: string;
  /** `namespace.table`. */
  readonly table: string;
  readonly mode: "upsert" | "append";
  /** The table exists already; otherwise the first rows create it. */
  readonly exists: boolean;
}

export interface SyncPlanned extends EventBase {
  readonly type: "planned";
  readonly tables: readonly PlannedTable[];
  /** Per partition of the selected topics: where reading starts and stops, and why. */
  readonly partitions: readonly PartitionPlan[];
  /** Offsets to read over every partition: an upper bound of the messages. */
  readonly messagesToRead: bigint;
  readonly skippedTopics: readonly SkippedTopic[];
  /** Messages expired unread (retention): the run fails unless the loss was accepted. */
  readonly lostMessages: readonly LostMessages[];
  readonly recreatedTopics: readonly RecreatedTopic[];
}

export interface PartitionProgress extends EventBase {
  readonly type: "partition-progress";
  readonly topic: string;
  readonly partition: number;
  /** Every offset below it is read: where the partition resumes. */
  readonly nextOffset: bigint;
  readonly stopOffset: bigint;
  /** Messages read from this partition so far in this run. */
  readonly messages: number;
  /** Messages read from every partition so far in this run. */
  readonly messagesRead: number;
}

export interface DeadLettersCommitted extends EventBase {
  readonly type: "dead-letters";
  readonly topic: string;
  /** `namespace.table__dlq`. */
  readonly table: string;
  readonly count: number;
  /** How many of them for each reason. */
  readonly reasons: Readonly<Partial<Record<RejectReason, number>>>;
  readonly snapshotId: string;
}

export interface TableCommitted extends EventBase {
  readonly type: "table-committed";
  /**
   * What one commit round of the topic absorbed, and the snapshot it committed. snapshotId is
   * null when the round had nothing to land in the table (every message a dead letter, skipped
   * or an ignored tombstone, and no table yet): the consumer group then carries the offsets.
   */
  readonly report: TableReport;
}

export interface SyncFinished extends EventBase {
  readonly type: "finished";
  /** complete: every planned message landed; partial: reading stopped early (broker loss, signal) and what was read landed. */
  readonly status: "complete" | "partial";
  readonly readStatus: ReadStatus;
  readonly readError?: string;
  /** Why the consumer group was not committed after a read that stopped early; the tables were. */
  readonly groupCommitError?: string;
  readonly messagesRead: number;
  readonly durationMs: number;
}

export interface SyncFailed extends EventBase {
  readonly type: "failed";
  readonly error: SyncError;
  readonly durationMs: number;
}

/** An event as the sync builds it; emitting adds the run id and the time. */
export type SyncEventBody = WithoutBase<SyncEvent>;
type WithoutBase<E> = E extends unknown ? Omit<E, keyof EventBase> : never;
