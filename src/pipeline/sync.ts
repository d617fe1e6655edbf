// One sync: plan -> read -> decode/shape -> write -> commit -> ack, as typed events (events.ts)
// under a run id; the report is their fold (sync-report.ts). The high watermarks listed at plan
// time are where the sync stops, unless it is continuous (continuous-read.ts): it then reads on
// as messages come until it is stopped or its time is up. Every table commit carries the offsets it absorbed; the
// consumer group is committed after the tables, so a crash anywhere repeats nothing and loses
// nothing at the next sync. Each step is its own file: checked-plan.ts, read-bindings.ts,
// commit-rounds.ts (which writes each binding's tables, write-binding.ts), acknowledge.ts.
//
// The source and the catalog are the caller's (connect.ts opens them for a job): a long-running
// process keeps them for many syncs, and tests pass an in-memory source and the embedded catalog.

import type { Catalog } from "../iceberg/catalog/catalog.ts";
import type { Job } from "../job/job.ts";
import type { ReadResult } from "../kafka/read.ts";
import { acknowledge } from "./acknowledge.ts";
import { checkedPlan } from "./checked-plan.ts";
import { classifyError } from "./classify-error.ts";
import { CommitRounds } from "./commit-rounds.ts";
import { readContinuously } from "./continuous-read.ts";
import type { SyncEvent, SyncEventBody, SyncFinished } from "./events.ts";
import { BindingReads } from "./read-bindings.ts";
import { newRunId } from "./run-id.ts";
import type { SyncSource } from "./source.ts";
import type { SyncOptions } from "./sync-options.ts";
import { reduceSyncEvent, type SyncReport } from "./sync-report.ts";

export type { SyncOptions } from "./sync-options.ts";
export type { SyncReport } from "./sync-report.ts";

/** Where a sync reads and writes; the caller opens and closes them. */
export interface SyncConnections {
  readonly source: SyncSource;
  readonly catalog: Catalog;
}

type Emit = (event: SyncEventBody) => void;

/** Runs one sync of `job`; resolves to its report, or rejects once its `failed` event is out. */
export async function runSync(job: Job, connections: SyncConnections, options: SyncOptions): Promise<SyncReport> {
  const runId = options.runId ?? newRunId();
  const started = performance.now();
  let report: SyncReport | undefined;
  const emit: Emit = (body) => {
    const event = { ...body, runId, at: Date.now() } as SyncEvent;
    report = reduceSyncEvent(report, event);
    options.onEvent?.(event);
  };
  emit({ type: "started", job: job.name });
  try {
    const outcome = await sync(job, connections, options, emit);
    emit({ type: "finished", ...outcome, durationMs: performance.now() - started });
  } catch (error) {
    emit({ type: "failed", error: classifyError(error), durationMs: performance.now() - started });
    throw error;
  }
  return report!;
}

/**
 * The steps of a sync, in order: plan (and refuse what cannot be trusted), read into one batch per
 * binding, committing each binding's tables in rounds, commit the last round, acknowledge to the
 * consumer group.
 */
async function sync(
  job: Job,
  { source, catalog }: SyncConnections,
  options: SyncOptions,
  emit: Emit,
): Promise<Omit<SyncFinished, "type" | "runId" | "at" | "durationMs">> {
  const plan = await checkedPlan(job, source, catalog, options, emit);
  const member = options.membership && {
    memberId: options.membership.memberId,
    generationId: options.membership.generationId,
  };
  const rounds = new CommitRounds(job, catalog, plan, options.stateDir, emit, member);
  const reads = new BindingReads(job, source, rounds, options, emit);
  let result: ReadResult;
  try {
    const planned = await reads.read(plan.offsets.partitions);
    result = options.continuous
      ? await readContinuously(
          job,
          source,
          plan,
          rounds,
          reads,
          { ...options.continuous, signal: options.signal, membership: options.membership },
          planned,
        )
      : planned;
  } catch (error) {
    // A round handed off before the failure finishes (or fails) before the sync reports it failed.
    await rounds.settled().catch(() => {});
    throw error;
  }
  // A read refused for want of an ACL ends the sync with nothing more committed and the group's
  // offsets where they were: unlike a broker lost mid-read, a rerun meets the same refusal, so
  // committing what was read would land some topics and partitions and leave the rest unread.
  if (result.error && classifyError(result.error).kind === "auth") throw result.error;
  await rounds.commit();
  const groupCommitError = await acknowledge(job, source, plan, rounds.delivered, result, options.membership);
  return {
    status: result.status === "complete" ? "complete" : "partial",
    readStatus: result.status,
    ...(result.error ? { readError: result.error.message } : {}),
    ...(groupCommitError === undefined ? {} : { groupCommitError }),
    messagesRead: result.messages,
  };
}
