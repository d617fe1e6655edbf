// Rows -> data files of a table: Parquet files written under the table's data location with
// the current schema's field ids, the write settings (target file size and codec: those asked
// for, else the table's, write-settings.ts) and the table's metrics modes, described as DataFile
// entries ready for FastAppend or RowDelta.
// Writes are unpartitioned for now, so only a table whose default spec is unpartitioned is
// accepted.
import type * as arrow from "apache-arrow";
import { IcebergError } from "./errors.ts";
import { newDataFileLocation } from "./locations.ts";
import { writeDataFiles as writeParquetFiles } from "./parquet/data-file-writer.ts";
import { type DataFile, FileContent } from "./spec/manifest.ts";
import type { Schema } from "./spec/schema.ts";
import { currentSchema, defaultSpec } from "./spec/table-metadata.ts";
import type { Table } from "./table.ts";
import { type RequestedWriteSettings, resolveWriteSettings } from "./write-settings.ts";

export async function writeDataFiles(
  table: Table,
  rows: arrow.Table,
  options: RequestedWriteSettings & {
    /** The schema `rows` follow, when not the current one: the current plus row-lineage fields, for a rewrite. */
    schema?: Schema;
  } = {},
): Promise<DataFile[]> {
  const { metadata } = table;
  const properties = metadata.properties;
  // Before any file is written: a codec floe does not write fails the write, it never falls back.
  const { settings } = resolveWriteSettings(options, properties, table.name);
  if (defaultSpec(metadata).fields.length > 0) {
    throw new IcebergError("unsupported", `${table.name}: writing to a partitioned table is not supported yet`);
  }
  const written = writeParquetFiles(rows, options.schema ?? currentSchema(metadata), {
    codec: settings.compression,
    targetFileSizeBytes: settings.targetFileSizeBytes,
    properties,
  });
  return Promise.all(
    written.map(async (file): Promise<DataFile> => {
      const location = newDataFileLocation(metadata, "parquet");
      await table.io.write(location, file.bytes);
      return {
        content: FileContent.DATA,
        filePath: location,
        fileFormat: "PARQUET",
        partition: new Map(),
        recordCount: file.recordCount,
        fileSizeInBytes: BigInt(file.bytes.length),
        splitOffsets: file.splitOffsets,
        ...file.stats,
      };
    }),
  );
}
