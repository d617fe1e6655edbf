// A whole sync in process: a job file's text parsed as `floe sync` parses it, an in-memory
// source, the embedded SQLite catalog in a temporary warehouse, and a run that collects its
// events. No service, no network.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Job } from "../../../src/config/job.ts";
import { parseJob } from "../../../src/config/load-job.ts";
import type { Catalog } from "../../../src/iceberg/catalog/catalog.ts";
import { loadCatalog } from "../../../src/iceberg/catalog/load-catalog.ts";
import { catalogConfig } from "../../../src/sync/connect.ts";
import type { SyncEvent } from "../../../src/sync/events.ts";
import { runSync, type SyncOptions, type SyncReport } from "../../../src/sync/sync.ts";
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
  failingSync(options?: Partial<SyncOptions>): Promise<{ error: unknown; events: SyncEvent[] }>;
  rows(table: string): Promise<Row[]>;
  close(): Promise<void>;
}

/**
 * `body`: the job file's keys after `source.kafka.bootstrap_servers`, indented as there (more
 * source.kafka keys), then any top-level keys (streams:, default_stream:, destination: is given).
 */
export async function syncFixture(kafka: string, rest: string, destination = ""): Promise<SyncFixture> {
  const dir = mkdtempSync(join(tmpdir(), "floe-unit-sync-"));
  const job = parseJob(
    `name: unit
source:
  kafka:
    bootstrap_servers: [memory:9092]
${kafka}destination:
  iceberg:
    catalog: {type: sql, warehouse: ./warehouse}
${destination}${rest}`,
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
    async failingSync(options = {}) {
      const events: SyncEvent[] = [];
      try {
        await runSync(job, { source, catalog }, { stateDir, ...options, onEvent: (event) => events.push(event) });
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
