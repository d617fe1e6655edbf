// The tables of a job as they are in its catalog: per table its schema, snapshot history
// (with the summary's totals, for the data-files-over-time curve), data file and deletion
// vector counts, the dead-letter table's row count, and a preview of the first rows read by
// floe itself (iceberg/scan/preview-rows.ts).

import { type Catalog, isNoSuch } from "../iceberg/catalog/catalog.ts";
import { previewRows } from "../iceberg/scan/preview-rows.ts";
import { currentSchema, currentSnapshot } from "../iceberg/spec/table-metadata.ts";
import { typeToString } from "../iceberg/spec/types.ts";
import { Table } from "../iceberg/table.ts";
import type { Job } from "../job/job.ts";
import { deadLetterTableName } from "../job/topics.ts";

export interface TableSnapshot {
  snapshotId: string;
  at: string;
  operation: string;
  addedDataFiles: number;
  addedDeleteFiles: number;
  addedRecords: number;
  totalDataFiles: number;
  totalDeleteFiles: number;
  totalRecords: number;
  kafkaOffsets: string | undefined;
}

export interface JobTable {
  /** `namespace.table`. */
  table: string;
  name: string;
  deadLetter: boolean;
  columns: { id: number; name: string; type: string; required: boolean }[];
  snapshots: TableSnapshot[];
  dataFiles: number;
  deletionVectors: number;
  records: number;
  /** Rows of its dead-letter table; 0 when it has none. */
  deadLetters: number;
  location: string;
}

const count = (summary: Record<string, string>, key: string) => Number(summary[key] ?? 0);

export async function jobTables(job: Job, catalog: Catalog): Promise<JobTable[]> {
  let identifiers: Awaited<ReturnType<Catalog["listTables"]>>;
  try {
    identifiers = await catalog.listTables([job.namespace]);
  } catch (error) {
    if (isNoSuch(error, "namespace")) return [];
    throw error;
  }
  const tables = await Promise.all(identifiers.map((id) => Table.load(catalog, id)));
  const byName = new Map(tables.map((t) => [t.identifier.name, t]));
  return tables
    .map((t): JobTable => {
      const current = currentSnapshot(t.metadata);
      const summary = current?.summary ?? { operation: "append" };
      const dlq = byName.get(deadLetterTableName(t.identifier.name));
      const dlqSummary = dlq && currentSnapshot(dlq.metadata)?.summary;
      return {
        table: t.name,
        name: t.identifier.name,
        deadLetter: t.identifier.name.endsWith("__dlq"),
        columns: currentSchema(t.metadata).fields.map((f) => ({
          id: f.id,
          name: f.name,
          type: typeToString(f.type),
          required: f.required,
        })),
        snapshots: [...t.metadata.snapshots]
          .sort((a, b) => Number(a.timestampMs - b.timestampMs))
          .map((s) => ({
            snapshotId: String(s.snapshotId),
            at: new Date(Number(s.timestampMs)).toISOString(),
            operation: s.summary.operation,
            addedDataFiles: count(s.summary, "added-data-files"),
            addedDeleteFiles: count(s.summary, "added-delete-files"),
            addedRecords: count(s.summary, "added-records"),
            totalDataFiles: count(s.summary, "total-data-files"),
            totalDeleteFiles: count(s.summary, "total-delete-files"),
            totalRecords: count(s.summary, "total-records"),
            kafkaOffsets: Object.entries(s.summary).find(([k]) => k.startsWith("floe."))?.[1],
          })),
        dataFiles: count(summary, "total-data-files"),
        deletionVectors: count(summary, "total-delete-files"),
        records: count(summary, "total-records") - count(summary, "total-position-deletes"),
        deadLetters: dlqSummary ? count(dlqSummary, "total-records") : 0,
        location: t.metadata.location,
      };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The first `limit` live rows of one of the job's tables. */
export async function previewJobTable(job: Job, catalog: Catalog, name: string, limit: number) {
  const table = await Table.load(catalog, { namespace: [job.namespace], name });
  return previewRows(table, limit);
}
