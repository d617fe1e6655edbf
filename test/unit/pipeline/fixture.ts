// A whole sync in process: a job file built as data (test/helpers/job-file.ts) and loaded as
// `floe sync` loads it, an in-memory source, the embedded SQLite catalog in a temporary
// warehouse, and a run that collects its events. No service, no network.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Catalog } from "#src/iceberg/catalog/catalog.ts";
import { loadCatalog } from "#src/iceberg/catalog/load-catalog.ts";
import type { Job } from "#src/job/job.ts";
import { catalogConfig } from "#src/pipeline/connect.ts";
import type { SyncEvent } from "#src/pipeline/events.ts";
import { runSync, type SyncOptions, type SyncReport } from "#src/pipeline/sync.ts";
import { buildJob, type JobFileSpec } from "../../helpers/job-file.ts";
import { MemorySource } from "./memory-source.ts";
import { type Row, tableRows } from "./table-rows.ts";

export interface SyncFixture {
  readonly job: Job;
  readonly source: MemorySource;
  readonly catalog: Catalog;
  readonly dir: string;
  /** One sync; its report and every event it emitted. */
  sync(options?: Partial<SyncOptions>, job?: Job): Promise<{ report: SyncReport; events: SyncEvent[] }>;
  /** A sync expected to fail: the error and the events. */
  failingSync(options?: Partial<SyncOptions>, job?: Job): Promise<{ error: unknown; events: SyncEvent[] }>;
  rows(table: string): Promise<Row[]>;
  close(): Promise<void>;
}

/**
 * A job named unit over the in-memory source (`memory:9092`) into an embedded catalog in a fresh
 * temporary folder (./warehouse beside the job file), with `spec` over it.
 */
export async function syncFixture(spec: JobFileSpec = {}): Promise<SyncFixture> {
  const dir = mkdtempSync(join(tmpdir(), "floe-unit-sync-"));
  const job = buildJob(
    {
      name: "unit",
      ...spec,
      kafka: { bootstrap_servers: ["memory:9092"], ...spec.kafka },
      iceberg: { catalog: { type: "sql", warehouse: "./warehouse" }, ...spec.iceberg },
    },
    join(dir, "job.yaml"),
  );
  const source = new MemorySource();
  const catalog = await loadCatalog(catalogConfig(job.destination));
  const stateDir = join(dir, "state");
  return {
    job,
    source,
    catalog,
    dir,
    async sync(options = {}, other = job) {
      const events: SyncEvent[] = [];
      const report = await runSync(
        other,
        { source, catalog },
        {
          stateDir,
          ...options,
          onEvent: (event) => {
            events.push(event);
            options.onEvent?.(event);
          },
        },
      );
      return { report, events };
    },
    async failingSync(options = {}, other = job) {
      const events: SyncEvent[] = [];
      try {
        await runSync(other, { source, catalog }, { stateDir, ...options, onEvent: (event) => events.push(event) });
      } catch (error) {
        return { error, events };
      }
      throw new Error("expected the sync to fail");
    },
    rows: (table) => tableRows(catalog, job.namespace, table),
    async close() {
      await catalog.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The events' types in order, a run of partition-progress events as one. */
export function eventTypes(events: readonly SyncEvent[]): string[] {
  const types: string[] = [];
  for (const e of events) if (types.at(-1) !== e.type || e.type !== "partition-progress") types.push(e.type);
  return types;
}

/** Rows sorted by a column, for comparison with a model. */
export function sortBy(rows: Row[], column: string): Row[] {
  return [...rows].sort((a, b) => {
    const x = a[column] as bigint | number | string;
    const y = b[column] as bigint | number | string;
    return x < y ? -1 : x > y ? 1 : 0;
  });
}
