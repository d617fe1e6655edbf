// The report of a sync: a fold over its events (events.ts). runSync returns it at the end; a
// consumer of the events can fold them itself at any moment (a live view), or from a run
// history, and gets the same report.
import type { SkippedTopic } from "../job/topics.ts";
import type { LostMessages } from "../kafka/plan.ts";
import type { ReadStatus } from "../kafka/read.ts";
import type { SyncError } from "./classify-error.ts";
import type { SyncEvent } from "./events.ts";
import type { RecreatedTopic } from "./plan-sync.ts";
import type { TableReport } from "./write-binding.ts";

export interface SyncReport {
  runId: string;
  job: string;
  /**
   * running: neither finished nor failed yet. complete: every planned message landed. partial:
   * reading stopped early (broker loss, signal) and what was read landed. failed: see error.
   */
  status: "running" | "complete" | "partial" | "failed";
  /** Set once the run finished. */
  readStatus?: ReadStatus | undefined;
  readError?: string | undefined;
  /** Why the consumer group was not committed after a read that stopped early; the tables were. */
  groupCommitError?: string | undefined;
  /** Why the run failed. */
  error?: SyncError | undefined;
  skippedTopics: readonly SkippedTopic[];
  lostMessages: readonly LostMessages[];
  /** Topics deleted and re-created since the last sync: read from their log start. */
  recreatedTopics: readonly RecreatedTopic[];
  /** One per selected topic, in the order of the plan: what its commit rounds added up to. */
  tables: TableReport[];
  messagesRead: number;
  durationMs: number;
}

/** The report after `event`, given the report before it (undefined before the first event). */
export function reduceSyncEvent(report: SyncReport | undefined, event: SyncEvent): SyncReport {
  // The optional keys are placed here, undefined, so that a printed report lists them after status.
  const before: SyncReport = report ?? {
    runId: event.runId,
    job: "",
    status: "running",
    readStatus: undefined,
    readError: undefined,
    groupCommitError: undefined,
    error: undefined,
    skippedTopics: [],
    lostMessages: [],
    recreatedTopics: [],
    tables: [],
    messagesRead: 0,
    durationMs: 0,
  };
  switch (event.type) {
    case "started":
      return { ...before, job: event.job };
    case "planned":
      return {
        ...before,
        skippedTopics: event.skippedTopics,
        lostMessages: event.lostMessages,
        recreatedTopics: event.recreatedTopics,
        tables: event.tables.map((t) => emptyTableReport(t.topic, t.table, t.mode)),
      };
    case "partition-progress":
      return { ...before, messagesRead: event.messagesRead };
    case "dead-letters":
      // Counted in the table-committed report of the same round.
      return before;
    case "table-committed": {
      const committed = event.report;
      const index = before.tables.findIndex((t) => t.topic === committed.topic);
      const tables = [...before.tables];
      if (index < 0) tables.push(committed);
      else tables[index] = mergeReports(tables[index]!, committed);
      return { ...before, tables };
    }
    case "finished":
      return {
        ...before,
        status: event.status,
        readStatus: event.readStatus,
        ...(event.readError === undefined ? {} : { readError: event.readError }),
        ...(event.groupCommitError === undefined ? {} : { groupCommitError: event.groupCommitError }),
        messagesRead: event.messagesRead,
        durationMs: event.durationMs,
      };
    case "failed":
      return { ...before, status: "failed", error: event.error, durationMs: event.durationMs };
  }
}

export function foldSyncEvents(events: Iterable<SyncEvent>): SyncReport | undefined {
  let report: SyncReport | undefined;
  for (const event of events) report = reduceSyncEvent(report, event);
  return report;
}

/** A table of the plan before anything of it is read or written: every count zero, no snapshot. */
export function emptyTableReport(topic: string, table: string, mode: "upsert" | "append"): TableReport {
  return {
    topic,
    table,
    mode,
    messagesRead: 0,
    bytesRead: 0,
    dataFilesAdded: 0,
    deletionVectorsAdded: 0,
    recordsAdded: 0,
    positionsDeleted: 0,
    deadLetters: 0,
    skipped: 0,
    tombstonesIgnored: 0,
    created: false,
    columnsAdded: [],
    snapshotId: null,
    durationMs: 0,
  };
}

/** Two commit rounds of one table, added up. */
function mergeReports(a: TableReport, b: TableReport): TableReport {
  return {
    ...b,
    messagesRead: a.messagesRead + b.messagesRead,
    bytesRead: a.bytesRead + b.bytesRead,
    dataFilesAdded: a.dataFilesAdded + b.dataFilesAdded,
    deletionVectorsAdded: a.deletionVectorsAdded + b.deletionVectorsAdded,
    recordsAdded: a.recordsAdded + b.recordsAdded,
    positionsDeleted: a.positionsDeleted + b.positionsDeleted,
    ...(a.duplicatesRetired !== undefined || b.duplicatesRetired !== undefined
      ? { duplicatesRetired: (a.duplicatesRetired ?? 0) + (b.duplicatesRetired ?? 0) }
      : {}),
    ...(a.replans !== undefined || b.replans !== undefined ? { replans: (a.replans ?? 0) + (b.replans ?? 0) } : {}),
    ...(a.keyIndex || b.keyIndex ? { keyIndex: [...(a.keyIndex ?? []), ...(b.keyIndex ?? [])] } : {}),
    deadLetters: a.deadLetters + b.deadLetters,
    skipped: a.skipped + b.skipped,
    tombstonesIgnored: a.tombstonesIgnored + b.tombstonesIgnored,
    created: a.created || b.created,
    columnsAdded: [...a.columnsAdded, ...b.columnsAdded],
    snapshotId: b.snapshotId ?? a.snapshotId,
    durationMs: a.durationMs + b.durationMs,
  };
}
