// A run record and a job as the API shows them: the run's summary (trigger, times, counts, its
// error named by kind) and the jobs page's row (last run, running run, next run, lag).
import type { UiRuns } from "../runtime/ui-runs.ts";
import type { ConfigStore } from "../state/config-store.ts";
import type { RunRecord } from "../state/run-store.ts";
import type { JobRow, RunSummary } from "./schemas.ts";

/** A run record as the API shows it. */
export function runSummary(runs: UiRuns, r: RunRecord): RunSummary {
  return {
    id: r.runId,
    job: r.job,
    trigger: r.trigger === "sync" ? ("manual" as const) : r.trigger,
    startedAt: new Date(r.startedAt).toISOString(),
    finishedAt: r.endedAt === null ? null : new Date(r.endedAt).toISOString(),
    durationMs: r.durationMs,
    status: r.outcome,
    messages: r.messages,
    bytes: r.bytes,
    deadLetters: r.deadLetters,
    cancelled: runs.wasCancelled(r.runId),
    tables: r.tables.map((t) => ({
      topic: t.topic,
      table: t.table,
      messages: t.messagesRead,
      records: t.recordsAdded,
      deadLetters: t.deadLetters,
    })),
    error: r.error === null ? null : `${r.error.message} (${r.error.kind})`,
  };
}

/** The jobs page's row of a job. */
export function jobRow(store: ConfigStore, runs: UiRuns, name: string): JobRow {
  const job = store.get("job", name);
  const last = runs.store.lastRun(name);
  const lag = runs.lagSamples(name);
  const lastAt = lag.at(-1)?.at;
  return {
    name,
    source: String(job["source"]),
    destination: String(job["destination"]),
    schedule: typeof job["schedule"] === "string" ? job["schedule"] : null,
    paused: job["paused"] === true,
    lastRun: last ? runSummary(runs, last) : null,
    runningRun: runs.runningRun(name) ?? null,
    nextRun: runs.nextRun(name)?.toISOString() ?? null,
    lag:
      runs.measuredLag(name) ??
      (lastAt === undefined ? null : lag.filter((s) => s.at === lastAt).reduce((sum, s) => sum + s.lag, 0)),
  };
}
