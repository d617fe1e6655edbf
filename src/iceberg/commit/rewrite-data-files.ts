// RewriteDataFiles (Java's RewriteDataFilesSparkAction with the bin-pack strategy): the
// compaction that picks data files worth rewriting, reads their live rows (the deletion vector
// applied), writes them as files of the target size and commits a RewriteFiles ("replace").
//
// Which files (Java's SizeBasedFileRewritePlanner / BinPackRewriteFilePlanner defaults):
// - a file smaller than min-file-size (75% of the target) or larger than max-file-size (180%);
// - a file whose DV deletes at least delete-ratio-threshold (30%) of its rows;
// candidates are packed into groups of at most the target size of live bytes (and of
// maxGroupBytes, 64 MiB by default: a group is read into memory whole); a group is
// rewritten when it has at least min-input-files (5) files, or several files filling three
// quarters of a group, or a file with deletes over the threshold, or a file to split (a lone
// small file with nothing deleted gains nothing).
//
// Spec "Row Lineage": a moved row keeps its _row_id (the file's first_row_id plus its position
// when the file does not hold it) and its _last_updated_sequence_number (the file's data sequence
// number when not held), written as the two metadata columns of the new file.
//
// Spec "Partitioning": a data file holds rows of one partition tuple of one spec. Files are
// grouped by spec and tuple before bin-packing, and each group is written back in its own spec
// (not the table's default, which a partition evolution may have changed since): a compaction
// never merges two partitions or two specs.
//
// Concurrency: the RewriteFiles commit fails with a RewriteConflictError when a DV was committed
// meanwhile on a file being rewritten (as Java's validateNoNewDeletesForDataFiles); the files
// written are then deleted and the rewrite is planned and done again on the new table, up to
// `attempts` times. Nothing a concurrent commit added is touched: it is in other files.
import { parquetReadObjects } from "hyparquet";
import { writeDataFiles } from "../data-writer.ts";
import { IcebergError } from "../errors.ts";
import { ColumnBatchBuilder } from "../parquet/column-batch.ts";
import { compressors } from "../parquet/key-column-reader.ts";
import { readDeletedPositions } from "../scan/deleted-positions.ts";
import { type LiveFile, planFiles } from "../scan/plan-files.ts";
import type { DataFile, DeletionVectorFile, PartitionValues } from "../spec/manifest.ts";
import type { Schema } from "../spec/schema.ts";
import type { Snapshot } from "../spec/snapshot.ts";
import { currentSchema, currentSnapshot, specById, type TableMetadata } from "../spec/table-metadata.ts";
import { propertyValue, WRITE_TARGET_FILE_SIZE_BYTES } from "../spec/table-properties.ts";
import type { IcebergType } from "../spec/types.ts";
import type { Table } from "../table.ts";

import { deleteAll } from "./expire-snapshots.ts";
import { RewriteConflictError, RewriteFiles } from "./rewrite-files.ts";

/** Spec "Reserved Field IDs": the row-lineage metadata columns. */
export const ROW_ID_FIELD_ID = 2147483540;
export const LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID = 2147483539;

export interface BinPackOptions {
  targetFileSizeBytes: number;
  /** Files below this are small (default 75% of the target). */
  minFileSizeBytes?: number;
  /** Files above this are split (default 180% of the target). */
  maxFileSizeBytes?: number;
  /** A group of fewer files is rewritten only if it has deletes over the threshold or exceeds the target. */
  minInputFiles?: number;
  /** Deleted rows / rows at or above which a file is rewritten (0..1, default 0.3). */
  deleteRatioThreshold?: number;
  /**
   * Live bytes of one group at most (default 64 MiB): a group is read into memory whole, so a
   * file with more live bytes is never rewritten, and a group never grows past this.
   */
  maxGroupBytes?: number;
}

export const DEFAULT_MAX_GROUP_BYTES = 64 * 1024 * 1024;

/** A live data file as the planner sees it (pure data: unit-tested). */
export interface FileCandidate {
  path: string;
  sizeBytes: number;
  records: number;
  deletedRecords: number;
}

/** The groups of files to rewrite together (pure: unit-tested). */
export function planRewriteGroups(files: readonly FileCandidate[], options: BinPackOptions): FileCandidate[][] {
  const target = options.targetFileSizeBytes;
  const minSize = options.minFileSizeBytes ?? target * 0.75;
  const maxSize = options.maxFileSizeBytes ?? target * 1.8;
  const minInput = options.minInputFiles ?? 5;
  const ratio = options.deleteRatioThreshold ?? 0.3;
  const manyDeletes = (f: FileCandidate) => f.records > 0 && f.deletedRecords / f.records >= ratio;
  const live = (f: FileCandidate) => (f.records === 0 ? 0 : (f.sizeBytes * (f.records - f.deletedRecords)) / f.records);
  const capacity = Math.min(target, options.maxGroupBytes ?? DEFAULT_MAX_GROUP_BYTES);
  const candidates = files
    .filter((f) => f.sizeBytes < minSize || f.sizeBytes > maxSize || manyDeletes(f))
    .filter((f) => live(f) <= (options.maxGroupBytes ?? DEFAULT_MAX_GROUP_BYTES))
    .sort((a, b) => live(b) - live(a) || (a.path < b.path ? -1 : 1));
  // First-fit decreasing into bins of at most the target (and the group cap); a larger file is a bin of its own.
  const bins: { files: FileCandidate[]; bytes: number }[] = [];
  for (const file of candidates) {
    const bytes = live(file);
    const bin = bins.find((b) => b.bytes + bytes <= capacity);
    if (bin) {
      bin.files.push(file);
      bin.bytes += bytes;
    } else bins.push({ files: [file], bytes });
  }
  return bins
    .filter(
      (b) =>
        b.files.length >= minInput ||
        (b.files.length > 1 && b.bytes >= capacity * 0.75) ||
        b.files.some(manyDeletes) ||
        b.files.some((f) => f.sizeBytes > maxSize),
    )
    .map((b) => b.files);
}

export interface RewriteDataFilesOptions extends Partial<BinPackOptions> {
  /** Plans and rewrites tried before a conflict is given up on (default 3). */
  attempts?: number;
  /** Summary properties the replace snapshot carries, from the parent it commits on. */
  summaryFromParent?: (base: TableMetadata, parent: Snapshot | undefined) => Record<string, string>;
  /** Called once the new files are written, before the commit (tests put a concurrent commit there). */
  beforeCommit?: (attempt: number) => Promise<void>;
}

export interface RewriteDataFilesResult {
  rewrittenDataFiles: number;
  rewrittenDeleteFiles: number;
  addedDataFiles: number;
  rewrittenBytes: bigint;
  addedBytes: bigint;
  /** Live rows moved (deleted rows dropped). */
  rows: number;
  /** Conflicts that made the rewrite start again. */
  retries: number;
  snapshotId?: bigint;
}

/** What a rewrite would take, without writing anything. */
export async function planDataFileRewrite(
  table: Table,
  options: Partial<BinPackOptions> = {},
): Promise<{ groups: LiveFile<DataFile>[][]; dvs: Map<string, LiveFile<DeletionVectorFile>> }> {
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  const target = options.targetFileSizeBytes ?? targetFileSize(table.metadata);
  const partitions = Map.groupBy(plan.dataFiles.values(), (live) =>
    partitionKey(live.manifest.partitionSpecId, live.entry.file.partition),
  );
  const groups = [...partitions.values()].flatMap((files) => {
    const candidates: FileCandidate[] = files.map(({ entry }) => ({
      path: entry.file.filePath,
      sizeBytes: Number(entry.file.fileSizeInBytes),
      records: Number(entry.file.recordCount),
      deletedRecords: Number(plan.deletionVectors.get(entry.file.filePath)?.entry.file.recordCount ?? 0n),
    }));
    return planRewriteGroups(candidates, { ...options, targetFileSizeBytes: target }).map((g) =>
      g.map((c) => plan.dataFiles.get(c.path)!),
    );
  });
  return { groups, dvs: plan.deletionVectors };
}

/** Files of one spec and one partition tuple share this key (a missing value is null). */
export function partitionKey(specId: number, partition: PartitionValues): string {
  const values = [...partition]
    .filter(([, v]) => v !== null && v !== undefined)
    .sort(([a], [b]) => a - b)
    .map(
      ([id, v]) =>
        `${id}=${v instanceof Uint8Array ? `x${Buffer.from(v).toString("hex")}` : `${typeof v}:${String(v)}`}`,
    );
  return `${specId}/${values.join("/")}`;
}

/** The size a rewrite aims at when asked for none: the table's write.target-file-size-bytes, else its default. */
export function targetFileSize(metadata: TableMetadata): number {
  return propertyValue(metadata.properties, WRITE_TARGET_FILE_SIZE_BYTES);
}

export async function rewriteDataFiles(
  table: Table,
  options: RewriteDataFilesOptions = {},
): Promise<RewriteDataFilesResult> {
  const attempts = options.attempts ?? 3;
  for (let attempt = 0; ; attempt++) {
    await table.refresh();
    const { groups, dvs } = await planDataFileRewrite(table, options);
    const result: RewriteDataFilesResult = {
      rewrittenDataFiles: 0,
      rewrittenDeleteFiles: 0,
      addedDataFiles: 0,
      rewrittenBytes: 0n,
      addedBytes: 0n,
      rows: 0,
      retries: attempt,
    };
    if (groups.length === 0) return result;
    const schema = lineageSchema(table, currentSchema(table.metadata));
    const rewrite = new RewriteFiles(table);
    if (options.summaryFromParent) rewrite.setFromParent(options.summaryFromParent);
    const written: DataFile[] = [];
    try {
      for (const group of groups) {
        const builder = new ColumnBatchBuilder(schema);
        for (const live of group) {
          const dv = dvs.get(live.entry.file.filePath);
          await appendLiveRows(table, builder, live, dv?.entry.file);
          rewrite.deleteFile(live.entry.file, dv?.entry.file);
          result.rewrittenDataFiles++;
          result.rewrittenBytes += live.entry.file.fileSizeInBytes;
          if (dv) {
            result.rewrittenDeleteFiles++;
            result.rewrittenBytes += dv.entry.file.fileSizeInBytes;
          }
        }
        result.rows += builder.rowCount;
        const files = await writeDataFiles(table, builder.build(), {
          schema,
          spec: specById(table.metadata, group[0]!.manifest.partitionSpecId),
          targetFileSizeBytes: options.targetFileSizeBytes ?? targetFileSize(table.metadata),
        });
        written.push(...files);
        rewrite.addFile(...files);
      }
      result.addedDataFiles = written.length;
      result.addedBytes = written.reduce((sum, f) => sum + f.fileSizeInBytes, 0n);
      await options.beforeCommit?.(attempt);
      const snapshot = await rewrite.commit();
      return { ...result, snapshotId: snapshot.snapshotId };
    } catch (error) {
      // Files of a rewrite that did not land are referenced by nothing: removed at once.
      await deleteAll(
        table,
        written.map((f) => f.filePath),
      ).catch(() => {});
      if (!(error instanceof RewriteConflictError) || attempt + 1 >= attempts) throw error;
    }
  }
}

/** The current schema plus the two row-lineage columns, which a rewrite writes into its files. */
function lineageSchema(table: Table, schema: Schema): Schema {
  const unsupported = schema.fields.find((f) => hasDecimal(f.type));
  if (unsupported) {
    throw new IcebergError(
      "unsupported",
      `${table.name}: compaction of tables with decimal columns is not supported yet (column ${unsupported.name})`,
    );
  }
  return {
    ...schema,
    fields: [
      ...schema.fields,
      { id: ROW_ID_FIELD_ID, name: "_row_id", required: false, type: "long" },
      {
        id: LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID,
        name: "_last_updated_sequence_number",
        required: false,
        type: "long",
      },
    ],
  };
}

function hasDecimal(type: IcebergType): boolean {
  if (typeof type !== "object") return false;
  switch (type.kind) {
    case "decimal":
      return true;
    case "struct":
      return type.fields.some((f) => hasDecimal(f.type));
    case "list":
      return hasDecimal(type.element);
    case "map":
      return hasDecimal(type.key) || hasDecimal(type.value);
    default:
      return false;
  }
}

/** Hyparquet's values in the column builders' form: timestamps and dates as stored, bytes as bytes. */
const rawParsers = {
  timestampFromMilliseconds: (v: bigint) => v * 1000n,
  timestampFromMicroseconds: (v: bigint) => v,
  timestampFromNanoseconds: (v: bigint) => v,
  dateFromDays: (v: number) => v,
  uuidFromBytes: (v: Uint8Array) => v,
};

async function appendLiveRows(
  table: Table,
  builder: ColumnBatchBuilder,
  live: LiveFile<DataFile>,
  dv: DeletionVectorFile | undefined,
): Promise<void> {
  const file = live.entry.file;
  const deleted = dv ? await readDeletedPositions(table.io, dv) : undefined;
  const bytes = await table.io.read(file.filePath);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = (await parquetReadObjects({ file: buffer, compressors, utf8: false, parsers: rawParsers })) as Record<
    string,
    unknown
  >[];
  if (rows.length !== Number(file.recordCount)) {
    throw new IcebergError(
      "corrupt",
      `${file.filePath}: ${rows.length} rows read, its manifest entry says ${file.recordCount}`,
    );
  }
  const firstRowId = file.firstRowId;
  const sequenceNumber = live.entry.sequenceNumber;
  rows.forEach((row, position) => {
    if (deleted?.has(position)) return;
    const rowId = row._row_id ?? (firstRowId === undefined ? null : firstRowId + BigInt(position));
    const updated = row._last_updated_sequence_number ?? sequenceNumber ?? null;
    builder.appendRow({ ...row, _row_id: rowId, _last_updated_sequence_number: updated });
  });
}
