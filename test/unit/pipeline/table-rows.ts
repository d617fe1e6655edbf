// The live rows of a table in the embedded catalog, read in process: every live data file of the
// current snapshot through hyparquet, less the positions its deletion vector deletes, with the
// columns of the current schema (by name: floe never renames). What the
// unit tests of whole syncs compare with their model; the integration tests read through DuckDB,
// PyIceberg and Spark instead.
import { zstdDecompressSync } from "node:zlib";
import { type Compressors, parquetReadObjects } from "hyparquet";
import { compressors as jsCompressors } from "hyparquet-compressors";
import type { Catalog } from "#src/iceberg/catalog/catalog.ts";
import { deletedPositionsOf } from "#src/iceberg/scan/deleted-positions.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { currentSchema, currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";

const compressors: Compressors = { ...jsCompressors, ZSTD: (input) => zstdDecompressSync(input) };

export type Row = Record<string, unknown>;

export async function tableRows(catalog: Catalog, namespace: string, name: string): Promise<Row[]> {
  const table = await Table.load(catalog, { namespace: [namespace], name });
  const files = await planFiles(table, currentSnapshot(table.metadata));
  // A file written before a column was added has no such column: the column reads as null.
  const columns = currentSchema(table.metadata).fields.map((f) => f.name);
  const rows: Row[] = [];
  for (const [path, { entry }] of files.dataFiles) {
    const bytes = await table.io.read(path);
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    const deleted = await deletedPositionsOf(table.io, files, path);
    const read = (await parquetReadObjects({ file: buffer, compressors })) as Row[];
    if (read.length !== Number(entry.file.recordCount)) throw new Error(`${path}: record_count differs from its rows`);
    read.forEach((row, position) => {
      if (!deleted?.has(position)) rows.push(Object.fromEntries(columns.map((c) => [c, row[c] ?? null])));
    });
  }
  return rows;
}

/** The table's snapshots, oldest first, with their summaries. */
export async function tableSnapshots(catalog: Catalog, namespace: string, name: string) {
  const table = await Table.load(catalog, { namespace: [namespace], name });
  return table.metadata.snapshots;
}
