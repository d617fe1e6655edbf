// The content of manifests and manifest lists (spec "Manifests", "Manifest Lists"), as plain
// data. The Avro encoding with the spec's field ids lives in iceberg/avro/.

/** data_file.content: 0 data, 1 position deletes (v3: deletion vectors), 2 equality deletes. */
export const FileContent = { DATA: 0, POSITION_DELETES: 1, EQUALITY_DELETES: 2 } as const;
export type FileContent = (typeof FileContent)[keyof typeof FileContent];

/** manifest_entry.status */
export const EntryStatus = { EXISTING: 0, ADDED: 1, DELETED: 2 } as const;
export type EntryStatus = (typeof EntryStatus)[keyof typeof EntryStatus];

/** manifest_file.content: a manifest holds data files or delete files, never both. */
export const ManifestContent = { DATA: 0, DELETES: 1 } as const;
export type ManifestContent = (typeof ManifestContent)[keyof typeof ManifestContent];

export type FileFormat = "PARQUET" | "AVRO" | "ORC" | "PUFFIN";

/** A partition tuple keyed by partition field id (empty for the unpartitioned spec). */
export type PartitionValues = ReadonlyMap<number, unknown>;

/** Per-column statistics, keyed by schema field id. Bounds use the single-value binary form. */
export interface ColumnStats {
  columnSizes?: ReadonlyMap<number, bigint>;
  valueCounts?: ReadonlyMap<number, bigint>;
  nullValueCounts?: ReadonlyMap<number, bigint>;
  nanValueCounts?: ReadonlyMap<number, bigint>;
  lowerBounds?: ReadonlyMap<number, Uint8Array>;
  upperBounds?: ReadonlyMap<number, Uint8Array>;
}

interface ContentFileBase extends ColumnStats {
  filePath: string;
  fileFormat: FileFormat;
  partition: PartitionValues;
  recordCount: bigint;
  fileSizeInBytes: bigint;
  /** Encryption key metadata; floe writes none but carries other writers' through. */
  keyMetadata?: Uint8Array;
  splitOffsets?: readonly bigint[];
  sortOrderId?: number;
}

export interface DataFile extends ContentFileBase {
  content: typeof FileContent.DATA;
  /** v3: null for new files; inherited from the manifest's first_row_id on read. */
  firstRowId?: bigint;
  /**
   * The partition spec `partition` follows (Java's ContentFile.specId()), for a new file: it goes
   * into a manifest of that spec. Absent: the table's default spec. Not a manifest column.
   */
  specId?: number;
}

/** A v3 deletion vector: one blob in a Puffin file, for exactly one data file. */
export interface DeletionVectorFile extends ContentFileBase {
  content: typeof FileContent.POSITION_DELETES;
  fileFormat: "PUFFIN";
  referencedDataFile: string;
  contentOffset: bigint;
  contentSizeInBytes: bigint;
}

/** Delete files floe reads but never writes (v2 position/equality deletes from other writers). */
export interface OtherDeleteFile extends ContentFileBase {
  content: typeof FileContent.POSITION_DELETES | typeof FileContent.EQUALITY_DELETES;
  referencedDataFile?: string;
  contentOffset?: bigint;
  contentSizeInBytes?: bigint;
  equalityIds?: readonly number[];
}

export type ContentFile = DataFile | DeletionVectorFile | OtherDeleteFile;

export function isDeletionVector(file: ContentFile): file is DeletionVectorFile {
  return file.content === FileContent.POSITION_DELETES && file.fileFormat === "PUFFIN";
}

export interface ManifestEntry<F extends ContentFile = ContentFile> {
  status: EntryStatus;
  /** Null in a new manifest's ADDED entries: inherited from the manifest list on read. */
  snapshotId?: bigint;
  sequenceNumber?: bigint;
  fileSequenceNumber?: bigint;
  file: F;
}

export interface PartitionFieldSummary {
  containsNull: boolean;
  containsNan?: boolean;
  lowerBound?: Uint8Array;
  upperBound?: Uint8Array;
}

/** An entry of a manifest list. */
export interface ManifestFile {
  manifestPath: string;
  manifestLength: bigint;
  partitionSpecId: number;
  content: ManifestContent;
  sequenceNumber: bigint;
  minSequenceNumber: bigint;
  addedSnapshotId: bigint;
  addedFilesCount: number;
  existingFilesCount: number;
  deletedFilesCount: number;
  addedRowsCount: bigint;
  existingRowsCount: bigint;
  deletedRowsCount: bigint;
  partitions?: readonly PartitionFieldSummary[];
  keyMetadata?: Uint8Array;
  /** v3: first row id of the manifest's data files; null for delete manifests. */
  firstRowId?: bigint;
}
