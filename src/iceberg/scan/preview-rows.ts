// The first live rows of a table, read by floe itself: the current snapshot's data files in
// the order they were added, each file's rows minus the positions its deletion vector (or, in a
// table upgraded from v2, its position delete files) deletes.
// For a look at a table (the UI's preview), not a query engine: no filter, no projection.
import { parquetReadObjects } from "hyparquet";
import { compressors } from "../parquet/key-column-reader.ts";
import { currentSnapshot } from "../spec/table-metadata.ts";
import type { Table } from "../table.ts";
import { deletedPositionsOf } from "./deleted-positions.ts";
import { planFiles } from "./plan-files.ts";

export interface Preview {
  /** Live rows of the current snapshot, up to the limit, in data file order. */
  rows: Record<string, unknown>[];
  /** Live rows in all: records of the data files minus deleted positions. */
  liveRows: number;
}

export async function previewRows(table: Table, limit: number): Promise<Preview> {
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  const files = [...plan.dataFiles.values()].sort(
    (a, b) =>
      Number(a.entry.sequenceNumber! - b.entry.sequenceNumber!) ||
      a.entry.file.filePath.localeCompare(b.entry.file.filePath),
  );
  const rows: Record<string, unknown>[] = [];
  let liveRows = 0;
  for (const { entry } of files) {
    const deleted = await deletedPositionsOf(table.io, plan, entry.file.filePath);
    const records = Number(entry.file.recordCount);
    liveRows += records - (deleted ? deleted.cardinality : 0);
    if (rows.length >= limit) continue;
    const bytes = await table.io.read(entry.file.filePath);
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    const fileRows = await parquetReadObjects({ file: buffer, compressors });
    fileRows.forEach((row, position) => {
      if (rows.length < limit && !deleted?.has(position)) rows.push(row);
    });
  }
  return { rows, liveRows };
}
