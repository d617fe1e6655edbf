// A run's record from its sync's events: the one fold from events.ts into what the run store
// keeps (state/run-store.ts). The report fold (pipeline/sync-report.ts) does the counting; this adds
// what a history needs beside it: when the run started and ended, its outcome, its totals. And
// the record of any run, sync or maintenance pass, as it starts (startedRecord).

import { hostname } from "node:os";
import type { SyncEvent } from "../pipeline/events.ts";
import { reduceSyncEvent, type SyncReport } from "../pipeline/sync-report.ts";
import type { RunKind, RunRecord, RunTrigger } from "../state/run-store.ts";

export interface RunProcess {
  trigger: RunTrigger;
  pid: number;
  host: string;
}

export class RunFold {
  readonly #process: RunProcess;
  #report: SyncReport | undefined;
  #record: RunRecord | undefined;

  constructor(process: RunProcess) {
    this.#process = process;
  }

  get record(): RunRecord | undefined {
    return this.#record;
  }

  get report(): SyncReport | undefined {
    return this.#report;
  }

  /** The record after `event`. */
  apply(event: SyncEvent): RunRecord {
    this.#report = reduceSyncEvent(this.#report, event);
    this.#record = recordOf(this.#report, event, this.#record, this.#process);
    return this.#record;
  }
}

/**
 * The record of a run just started, nothing counted yet: what the run store (or the UI, for a
 * sync still connecting) shows of a sync before its first event and of a maintenance pass
 * before its first table.
 */
export function startedRecord(
  start: Pick<RunRecord, "runId" | "job" | "trigger" | "startedAt"> & { kind?: RunKind },
): RunRecord {
  return {
    ...start,
    endedAt: null,
    durationMs: null,
    outcome: "running",
    messages: 0,
    bytes: 0,
    deadLetters: 0,
    tables: [],
    ...(start.kind === "maintenance" ? { maintenance: [] } : {}),
    error: null,
    pid: process.pid,
    host: hostname(),
  };
}

/** The record of a whole run's events, in order (undefined for none). */
export function foldRunEvents(events: Iterable<SyncEvent>, process: RunProcess): RunRecord | undefined {
  const fold = new RunFold(process);
  for (const event of events) fold.apply(event);
  return fold.record;
}

function recordOf(report: SyncReport, event: SyncEvent, before: RunRecord | undefined, process: RunProcess): RunRecord {
  const startedAt = before?.startedAt ?? event.at;
  const ended = event.type === "finished" || event.type === "failed";
  const outcome = report.status === "running" ? "running" : report.status;
  return {
    runId: report.runId,
    job: report.job,
    trigger: process.trigger,
    startedAt,
    endedAt: ended ? event.at : null,
    durationMs: ended ? report.durationMs : null,
    outcome,
    messages: report.messagesRead,
    bytes: report.tables.reduce((sum, t) => sum + t.bytesRead, 0),
    deadLetters: report.tables.reduce((sum, t) => sum + t.deadLetters, 0),
    tables: report.tables,
    error: report.error ?? null,
    pid: process.pid,
    host: process.host,
  };
}
