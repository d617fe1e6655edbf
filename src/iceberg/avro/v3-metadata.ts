// The v3 schemas of manifest files and manifest lists (spec "Manifests", "Manifest Lists"),
// as Iceberg struct types carrying the spec's field ids, in the field order of Java's
// V3Metadata. Writers and readers name a field by these constants, never by position.
import { type PartitionSpec, partitionResultType } from "../spec/partition-spec.ts";
import type { Schema } from "../spec/schema.ts";
import type { IcebergType, NestedField, StructType } from "../spec/types.ts";

const required = (id: number, name: string, type: IcebergType): NestedField => ({ id, name, required: true, type });
const optional = (id: number, name: string, type: IcebergType): NestedField => ({ id, name, required: false, type });
const map = (keyId: number, valueId: number, value: IcebergType): IcebergType => ({
  kind: "map",
  keyId,
  key: "int",
  valueId,
  value,
  valueRequired: true,
});
const list = (elementId: number, element: IcebergType): IcebergType => ({
  kind: "list",
  elementId,
  element,
  elementRequired: true,
});

export const ManifestEntryField = {
  status: required(0, "status", "int"),
  snapshotId: optional(1, "snapshot_id", "long"),
  sequenceNumber: optional(3, "sequence_number", "long"),
  fileSequenceNumber: optional(4, "file_sequence_number", "long"),
  /** Its type, data_file, depends on the partition spec. */
  dataFile: { id: 2, name: "data_file" },
} as const;

export const DataFileField = {
  content: required(134, "content", "int"),
  filePath: required(100, "file_path", "string"),
  fileFormat: required(101, "file_format", "string"),
  /** Its type depends on the partition spec. */
  partition: { id: 102, name: "partition" },
  recordCount: required(103, "record_count", "long"),
  fileSizeInBytes: required(104, "file_size_in_bytes", "long"),
  columnSizes: optional(108, "column_sizes", map(117, 118, "long")),
  valueCounts: optional(109, "value_counts", map(119, 120, "long")),
  nullValueCounts: optional(110, "null_value_counts", map(121, 122, "long")),
  nanValueCounts: optional(137, "nan_value_counts", map(138, 139, "long")),
  lowerBounds: optional(125, "lower_bounds", map(126, 127, "binary")),
  upperBounds: optional(128, "upper_bounds", map(129, 130, "binary")),
  keyMetadata: optional(131, "key_metadata", "binary"),
  splitOffsets: optional(132, "split_offsets", list(133, "long")),
  equalityIds: optional(135, "equality_ids", list(136, "int")),
  sortOrderId: optional(140, "sort_order_id", "int"),
  firstRowId: optional(142, "first_row_id", "long"),
  referencedDataFile: optional(143, "referenced_data_file", "string"),
  contentOffset: optional(144, "content_offset", "long"),
  contentSizeInBytes: optional(145, "content_size_in_bytes", "long"),
} as const;

/** The `partition` struct of a spec: one optional field per partition field, with its id. */
export function partitionType(spec: PartitionSpec, schema: Schema): StructType {
  return {
    kind: "struct",
    fields: spec.fields.map((f) => optional(f.fieldId, f.name, partitionResultType(f, schema))),
  };
}

export function dataFileType(partition: StructType): StructType {
  const f = DataFileField;
  return {
    kind: "struct",
    fields: [
      f.content,
      f.filePath,
      f.fileFormat,
      required(f.partition.id, f.partition.name, partition),
      f.recordCount,
      f.fileSizeInBytes,
      f.columnSizes,
      f.valueCounts,
      f.nullValueCounts,
      f.nanValueCounts,
      f.lowerBounds,
      f.upperBounds,
      f.keyMetadata,
      f.splitOffsets,
      f.equalityIds,
      f.sortOrderId,
      f.firstRowId,
      f.referencedDataFile,
      f.contentOffset,
      f.contentSizeInBytes,
    ],
  };
}

export function manifestEntryType(partition: StructType): StructType {
  const f = ManifestEntryField;
  return {
    kind: "struct",
    fields: [
      f.status,
      f.snapshotId,
      f.sequenceNumber,
      f.fileSequenceNumber,
      required(f.dataFile.id, f.dataFile.name, dataFileType(partition)),
    ],
  };
}

export const PartitionFieldSummaryField = {
  containsNull: required(509, "contains_null", "boolean"),
  containsNan: optional(518, "contains_nan", "boolean"),
  lowerBound: optional(510, "lower_bound", "binary"),
  upperBound: optional(511, "upper_bound", "binary"),
} as const;

const partitionFieldSummaryType: StructType = { kind: "struct", fields: Object.values(PartitionFieldSummaryField) };

export const ManifestFileField = {
  manifestPath: required(500, "manifest_path", "string"),
  manifestLength: required(501, "manifest_length", "long"),
  partitionSpecId: required(502, "partition_spec_id", "int"),
  content: required(517, "content", "int"),
  sequenceNumber: required(515, "sequence_number", "long"),
  minSequenceNumber: required(516, "min_sequence_number", "long"),
  addedSnapshotId: required(503, "added_snapshot_id", "long"),
  addedFilesCount: required(504, "added_files_count", "int"),
  existingFilesCount: required(505, "existing_files_count", "int"),
  deletedFilesCount: required(506, "deleted_files_count", "int"),
  addedRowsCount: required(512, "added_rows_count", "long"),
  existingRowsCount: required(513, "existing_rows_count", "long"),
  deletedRowsCount: required(514, "deleted_rows_count", "long"),
  partitions: optional(507, "partitions", list(508, partitionFieldSummaryType)),
  keyMetadata: optional(519, "key_metadata", "binary"),
  firstRowId: optional(520, "first_row_id", "long"),
} as const;

export const manifestFileType: StructType = { kind: "struct", fields: Object.values(ManifestFileField) };
