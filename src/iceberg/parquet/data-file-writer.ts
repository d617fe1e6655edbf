// Arrow table -> Parquet data files (spec "Parquet" appendix; data_file metrics), with
// parquet-wasm (parquet-encode.ts): the Arrow fields' `PARQUET:field_id` metadata becomes every
// schema node's field_id, and the writer keeps chunk and page statistics and the page index for
// readers. writeDataFiles encodes on the calling thread, writeDataFilesInWorker in the encoding
// worker (parquet-encoder.ts); both cut the rows into the same files.
//
// Splitting by target size: parquet-wasm compresses a whole file at once, so a file's rows are
// chosen before it is written, from an estimate of Parquet bytes per row. A table whose Arrow
// buffers fit the target is one file (Parquet is no larger than its Arrow buffers save for the
// footer). Otherwise a probe of the first rows (about 4 MiB of Arrow data) is written and
// thrown away to learn the bytes per row; the rows are then dealt evenly over as many files as
// the estimate needs, and the estimate is refined from each file written. A small probe
// compresses a little worse than a whole file, so files land near the target, mostly under it;
// one that comes out over 1.5x the target (data whose compressibility changes) is split again.
//
// Metrics are computed from the Arrow buffers (column-stats.ts); column_sizes, the compressed
// bytes of each column's chunks, and the row groups' offsets (split_offsets) come from the
// footer, read back with hyparquet.
import * as arrow from "apache-arrow";
import { type FileMetaData, parquetMetadata } from "hyparquet";
import type { ColumnStats } from "../spec/manifest.ts";
import type { Schema } from "../spec/schema.ts";
import {
  type ParquetCodec,
  WRITE_PARQUET_COMPRESSION_CODEC,
  WRITE_TARGET_FILE_SIZE_BYTES,
} from "../spec/table-properties.ts";
import { columnStats } from "./column-stats.ts";
import { type MetricsMode, metricsModes } from "./metrics-config.ts";
import { encodeParquet } from "./parquet-encode.ts";
import { encodeParquetInWorker } from "./parquet-encoder.ts";
import { columnKey, leafFieldIds } from "./parquet-field-ids.ts";

export type { ParquetCodec };

export interface DataFileWriterOptions {
  /** write.parquet.compression-codec; its default when absent. */
  codec?: ParquetCodec;
  /** Bytes a data file should not exceed; write.target-file-size-bytes' default when absent. */
  targetFileSizeBytes?: number;
  /** Table properties: the write.metadata.metrics.* settings (metrics-config.ts). */
  properties?: Readonly<Record<string, string>>;
}

export interface WrittenDataFile {
  bytes: Uint8Array;
  recordCount: bigint;
  stats: ColumnStats;
  /** Byte offsets of the row groups, ascending (data_file.split_offsets). */
  splitOffsets: bigint[];
}

const PROBE_BYTES = 4 * 1024 * 1024;
const OVERSHOOT = 1.5;

/** Writes the table's rows as one or more Parquet data files on this thread; none for an empty table. */
export function writeDataFiles(
  table: arrow.Table,
  schema: Schema,
  options: DataFileWriterOptions = {},
): WrittenDataFile[] {
  const steps = fileSteps(table, schema, options);
  for (let step = steps.next(); ; ) {
    if (step.done) return step.value;
    step = steps.next(encodeParquet(arrow.tableToIPC(step.value.rows, "stream"), step.value.codec));
  }
}

/**
 * writeDataFiles with the Parquet encoding in the encoding worker (parquet-encoder.ts): the same
 * files, while this thread does other work (decodes the next messages).
 */
export async function writeDataFilesInWorker(
  table: arrow.Table,
  schema: Schema,
  options: DataFileWriterOptions = {},
): Promise<WrittenDataFile[]> {
  const steps = fileSteps(table, schema, options);
  for (let step = steps.next(); ; ) {
    if (step.done) return step.value;
    step = steps.next(await encodeParquetInWorker(arrow.tableToIPC(step.value.rows, "stream"), step.value.codec));
  }
}

/** Rows to encode as one Parquet file; the generator is sent the file's bytes. */
interface EncodeStep {
  rows: arrow.Table;
  codec: ParquetCodec;
}

/** How the rows are cut into files (see the header), as encoding requests whichever thread encodes them. */
function* fileSteps(
  table: arrow.Table,
  schema: Schema,
  options: DataFileWriterOptions,
): Generator<EncodeStep, WrittenDataFile[], Uint8Array> {
  const codec = options.codec ?? WRITE_PARQUET_COMPRESSION_CODEC.default;
  const target = options.targetFileSizeBytes ?? WRITE_TARGET_FILE_SIZE_BYTES.default;
  const modes = metricsModes(schema, options.properties);
  const rows = table.numRows;
  if (rows === 0) return [];

  const arrowBytes = tableBytes(table);
  if (arrowBytes <= target) {
    const bytes = yield { rows: table, codec };
    return [finish(table, schema, modes, 0, rows, bytes)];
  }

  const probeRows = Math.max(1, Math.min(rows, Math.floor((PROBE_BYTES * rows) / arrowBytes)));
  let bytesPerRow = (yield { rows: table.slice(0, probeRows), codec }).length / probeRows;
  const files: WrittenDataFile[] = [];
  let writtenBytes = 0;
  let start = 0;
  while (start < rows) {
    const remaining = rows - start;
    const count = Math.ceil(remaining / Math.max(1, Math.ceil((remaining * bytesPerRow) / target)));
    const ranges = yield* writeRange(table, codec, target, start, start + count);
    for (const { from, to, bytes } of ranges) {
      files.push(finish(table, schema, modes, from, to, bytes));
      writtenBytes += bytes.length;
    }
    start += count;
    bytesPerRow = writtenBytes / start;
  }
  return files;
}

interface WrittenRange {
  from: number;
  to: number;
  bytes: Uint8Array;
}

/** Writes rows [from, to) as one file, or as several if that one overshoots the target. */
function* writeRange(
  table: arrow.Table,
  codec: ParquetCodec,
  target: number,
  from: number,
  to: number,
): Generator<EncodeStep, WrittenRange[], Uint8Array> {
  const bytes = yield { rows: table.slice(from, to), codec };
  if (bytes.length <= target * OVERSHOOT || to - from === 1) return [{ from, to, bytes }];
  const parts = Math.min(to - from, Math.ceil(bytes.length / target));
  const size = Math.ceil((to - from) / parts);
  const ranges: WrittenRange[] = [];
  for (let start = from; start < to; start += size) {
    ranges.push(...(yield* writeRange(table, codec, target, start, Math.min(to, start + size))));
  }
  return ranges;
}

function finish(
  table: arrow.Table,
  schema: Schema,
  modes: ReadonlyMap<number, MetricsMode>,
  from: number,
  to: number,
  bytes: Uint8Array,
): WrittenDataFile {
  // writeParquet's bytes are a copy out of wasm memory, a whole ArrayBuffer of their own
  const footer = parquetMetadata(bytes.buffer as ArrayBuffer);
  if (footer.num_rows !== BigInt(to - from)) {
    throw new Error(`Parquet footer counts ${footer.num_rows} rows, expected ${to - from}`);
  }
  return {
    bytes,
    recordCount: BigInt(to - from),
    stats: { columnSizes: columnSizes(footer, modes), ...columnStats(table, schema, modes, from, to) },
    splitOffsets: splitOffsets(footer),
  };
}

/** Compressed bytes of each column's chunks, summed over row groups, keyed by field id. */
function columnSizes(footer: FileMetaData, modes: ReadonlyMap<number, MetricsMode>): Map<number, bigint> {
  const ids = leafFieldIds(footer);
  const sizes = new Map<number, bigint>();
  for (const rowGroup of footer.row_groups) {
    for (const chunk of rowGroup.columns) {
      const meta = chunk.meta_data!;
      const id = ids.get(columnKey(meta.path_in_schema));
      if (id === undefined || (modes.get(id) ?? { kind: "none" }).kind === "none") continue;
      sizes.set(id, (sizes.get(id) ?? 0n) + meta.total_compressed_size);
    }
  }
  return sizes;
}

/** Where each row group starts: its first column's dictionary page, or else its first data page. */
function splitOffsets(footer: FileMetaData): bigint[] {
  return footer.row_groups
    .map((rowGroup) => {
      const meta = rowGroup.columns[0]!.meta_data!;
      const dictionary = meta.dictionary_page_offset;
      return dictionary !== undefined && dictionary < meta.data_page_offset ? dictionary : meta.data_page_offset;
    })
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Bytes of the Arrow buffers behind the table (values, offsets, validity), children included. */
function tableBytes(table: arrow.Table): number {
  const dataBytes = (data: arrow.Data): number =>
    (data.valueOffsets?.byteLength ?? 0) +
    (data.values?.byteLength ?? 0) +
    (data.nullBitmap?.byteLength ?? 0) +
    data.children.reduce((sum, child) => sum + dataBytes(child), 0);
  return table.batches.reduce((sum, batch) => sum + dataBytes(batch.data), 0);
}
