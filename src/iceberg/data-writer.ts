// Rows -> data files of a table: Parquet files written under the table's data location with
// the current schema's field ids, the write settings (target file size and codec: those asked
// for, else the table's, write-settings.ts) and the table's metrics modes, described as DataFile
// entries ready for FastAppend or RowDelta.
//
// Spec "Partitioning": a data file holds rows of one partition tuple only. The rows are split by
// the tuple the partition spec gives each of them (the table's default spec, or the one asked
// for: a compaction keeps its files' spec), each tuple's rows are cut into files of the target
// size, and each file's entry carries its tuple and spec id. writeDataFileRows also says which
// rows of the input each file holds, in file order, for callers that locate rows by position.
import type * as arrow from "apache-arrow";
import { IcebergError } from "./errors.ts";
import { newDataFileLocation } from "./locations.ts";
import { writeDataFilesInWorker } from "./parquet/data-file-writer.ts";
import { partitionRows } from "./parquet/partition-rows.ts";
import { takeRows } from "./parquet/take-rows.ts";
import { type DataFile, FileContent } from "./spec/manifest.ts";
import type { PartitionSpec } from "./spec/partition-spec.ts";
import type { Schema } from "./spec/schema.ts";
import { currentSchema, defaultSpec } from "./spec/table-metadata.ts";
import type { Table } from "./table.ts";
import { type RequestedWriteSettings, resolveWriteSettings } from "./write-settings.ts";

export type DataWriteOptions = RequestedWriteSettings & {
  /** The schema `rows` follow, when not the current one: the current plus row-lineage fields, for a rewrite. */
  schema?: Schema;
  /** The spec to partition by, when not the table's default: one of the table's specs. */
  spec?: PartitionSpec;
};

export interface WrittenFile {
  file: DataFile;
  /** Row r of the file is row rows[r] of the input. */
  rows: Uint32Array;
}

export async function writeDataFiles(
  table: Table,
  rows: arrow.Table,
  options: DataWriteOptions = {},
): Promise<DataFile[]> {
  return (await writeDataFileRows(table, rows, options)).map((w) => w.file);
}

export async function writeDataFileRows(
  table: Table,
  rows: arrow.Table,
  options: DataWriteOptions = {},
): Promise<WrittenFile[]> {
  const { metadata } = table;
  const properties = metadata.properties;
  // Before any file is written: a codec floe does not write fails the write, it never falls back.
  const { settings } = resolveWriteSettings(options, properties, table.name);
  const spec = options.spec ?? defaultSpec(metadata);
  const schema = options.schema ?? currentSchema(metadata);
  let split: ReturnType<typeof partitionRows>;
  try {
    split = partitionRows(spec, schema, rows);
  } catch (error) {
    if (error instanceof IcebergError)
      throw new IcebergError(error.kind, `${table.name}: ${error.message}`, { cause: error });
    throw error;
  }
  const written: { bytes: Uint8Array; entry: Omit<DataFile, "filePath">; rows: Uint32Array }[] = [];
  for (const [g, indices] of split.rows.entries()) {
    // One tuple holding every row in order (an unpartitioned table, or a batch of one partition): no copy.
    const whole = indices.length === rows.numRows;
    const part = whole ? rows : takeRows(rows, indices);
    let start = 0;
    for (const file of await writeDataFilesInWorker(part, schema, {
      codec: settings.compression,
      targetFileSizeBytes: settings.targetFileSizeBytes,
      properties,
    })) {
      const count = Number(file.recordCount);
      written.push({
        bytes: file.bytes,
        rows: indices.subarray(start, start + count),
        entry: {
          content: FileContent.DATA,
          fileFormat: "PARQUET",
          partition: split.partitions[g]!,
          specId: spec.specId,
          recordCount: file.recordCount,
          fileSizeInBytes: BigInt(file.bytes.length),
          splitOffsets: file.splitOffsets,
          ...file.stats,
        },
      });
      start += count;
    }
  }
  return Promise.all(
    written.map(async ({ bytes, entry, rows }): Promise<WrittenFile> => {
      const location = newDataFileLocation(metadata, "parquet");
      await table.io.write(location, bytes);
      return { file: { ...entry, filePath: location } as DataFile, rows };
    }),
  );
}
