// A maintenance pass of a job, recorded as a run: the tables of the job's namespace (or one) maintained
// by the job's policy (pipeline/maintain.ts), saved to the run store as a run of kind "maintenance"
// with each table's report, logged with its run id. The caller holds the job's lock
// (job-lock.ts), so a pass never overlaps a sync of the job.
//
// A table that fails is reported with its error and the pass goes on with the next; the pass
// is then "partial" (some tables maintained) or "failed" (none).
import type { Job } from "../job/job.ts";
import { classifyError } from "../pipeline/classify-error.ts";
import type { TableMaintenanceReport } from "../pipeline/maintain.ts";
import { newRunId } from "../pipeline/run-id.ts";
import type { RunRecord, RunStore, RunTrigger } from "../state/run-store.ts";
import type { Logger } from "./logger.ts";
import { startedRecord } from "./run-fold.ts";

export interface RecordMaintenanceOptions {
  store: RunStore | undefined;
  logger: Logger;
  trigger: RunTrigger;
  /** Only this table of the job's namespace. */
  table?: string;
  dryRun?: boolean;
  /** Only the tables whose last pass is older than the policy's interval (the scheduler's passes). */
  onlyDue?: boolean;
  now?: () => number;
  /** Aborted: the pass maintains no further table (a member that lost its maintenance lease). */
  signal?: AbortSignal;
}

export interface MaintenanceRun {
  record: RunRecord;
  tables: TableMaintenanceReport[];
}

export async function recordMaintenance(job: Job, options: RecordMaintenanceOptions): Promise<MaintenanceRun> {
  const now = options.now ?? Date.now;
  const runId = newRunId(now());
  const log = options.logger.child({ runId, job: job.name, kind: "maintenance" });
  const record = startedRecord({
    runId,
    job: job.name,
    kind: "maintenance",
    trigger: options.trigger,
    startedAt: now(),
  });
  const save = () => {
    if (options.dryRun) return;
    try {
      options.store?.saveRun(record);
    } catch (error) {
      log.warn({ err: error }, `cannot record the maintenance pass: ${(error as Error).message}`);
    }
  };
  save();
  const reports: TableMaintenanceReport[] = [];
  let failures = 0;
  let firstFailure: { table: string; error: unknown } | undefined;
  let stopped = false;
  try {
    const [{ withCatalog }, { namespaceTables, maintainTable }, { Table }] = await Promise.all([
      import("../pipeline/connect.ts"),
      import("../pipeline/maintain.ts"),
      import("../iceberg/table.ts"),
    ]);
    await withCatalog(job.destination, async (catalog) => {
      for (const identifier of await namespaceTables(catalog, job.namespace, options.table)) {
        if (options.signal?.aborted) {
          stopped = true;
          break;
        }
        const name = [...identifier.namespace, identifier.name].join(".");
        const started = now();
        try {
          const table = await Table.load(catalog, identifier);
          const report = await maintainTable(table, job.maintenance, {
            ...(options.dryRun ? { dryRun: true } : {}),
            targetFileSizeBytes: job.destination.targetFileSizeBytes,
            now,
          });
          reports.push(report);
          log.info({ table: name, report }, `maintained ${name}`);
        } catch (error) {
          failures++;
          firstFailure ??= { table: name, error };
          const message = (error as Error).message;
          reports.push({
            table: name,
            dryRun: options.dryRun === true,
            before: emptyHealth(),
            compaction: null,
            manifests: null,
            snapshots: null,
            orphans: null,
            durationMs: now() - started,
            error: message,
          });
          log.error({ err: error, table: name }, `maintenance of ${name} failed: ${message}`);
        }
        record.maintenance = reports;
        save();
      }
    });
    record.outcome = stopped
      ? "partial"
      : failures === 0
        ? "complete"
        : failures < reports.length
          ? "partial"
          : "failed";
    if (stopped) log.warn(`maintenance pass stopped after ${reports.length} table(s): its lease ended`);
    if (firstFailure) {
      const error = classifyError(firstFailure.error);
      record.error = { ...error, message: `${firstFailure.table}: ${error.message}` };
    }
  } catch (error) {
    record.outcome = "failed";
    record.error = classifyError(error);
    log.error({ err: error }, `maintenance pass failed: ${(error as Error).message}`);
  }
  record.endedAt = now();
  record.durationMs = record.endedAt - record.startedAt;
  record.maintenance = reports;
  save();
  return { record, tables: reports };
}

function emptyHealth(): TableMaintenanceReport["before"] {
  return {
    dataFiles: 0,
    deleteFiles: 0,
    records: 0,
    deletedRecords: 0,
    dataBytes: 0,
    averageFileBytes: 0,
    deletedRatio: 0,
    snapshots: 0,
    manifests: 0,
  };
}

/** Whether the job is due a pass: never maintained, or the last pass older than the interval. */
export function maintenanceDue(job: Job, store: RunStore | undefined, now: number): boolean {
  return now >= maintenanceDueAt(job, store);
}

/** When the job's next maintenance pass is due (ms since the epoch): 0 if never run, Infinity if disabled. */
export function maintenanceDueAt(job: Job, store: RunStore | undefined): number {
  if (!job.maintenance.enabled) return Number.POSITIVE_INFINITY;
  const last = store?.lastMaintenance(job.name);
  return last === undefined ? 0 : last.startedAt + job.maintenance.intervalMs;
}
