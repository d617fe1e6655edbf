// manifest_entry and data_file (spec "Manifest Entry Fields", "Data File Fields") between our
// model and id-keyed structs. Reading tolerates v1/v2 entries: fields they lack are left out
// (v1 has no content column: every v1 file is data).
import { IcebergError } from "../errors.ts";
import {
  type ContentFile,
  type DataFile,
  type DeletionVectorFile,
  type EntryStatus,
  FileContent,
  type FileFormat,
  type ManifestEntry,
  type OtherDeleteFile,
  type PartitionValues,
} from "../spec/manifest.ts";
import { definedOnly, type IdStruct, requiredField, toIdStruct } from "./avro-value.ts";
import { DataFileField as D, ManifestEntryField as E } from "./v3-metadata.ts";

export function entryToStruct(entry: ManifestEntry): IdStruct {
  return toIdStruct(E, entry, { dataFile: fileToStruct(entry.file) });
}

function fileToStruct(file: ContentFile): IdStruct {
  const deletes = file.content === FileContent.DATA ? undefined : file;
  return toIdStruct(D, file, {
    equalityIds: file.content === FileContent.EQUALITY_DELETES ? file.equalityIds : undefined,
    // Spec: the first_row_id of a delete file is always null.
    firstRowId: file.content === FileContent.DATA ? file.firstRowId : undefined,
    referencedDataFile: deletes?.referencedDataFile,
    contentOffset: deletes?.contentOffset,
    contentSizeInBytes: deletes?.contentSizeInBytes,
  });
}

export function entryFromStruct(struct: IdStruct): ManifestEntry {
  return definedOnly<ManifestEntry>({
    status: requiredField(struct, E.status) as EntryStatus,
    snapshotId: struct.get(E.snapshotId.id) as bigint | undefined,
    sequenceNumber: struct.get(E.sequenceNumber.id) as bigint | undefined,
    fileSequenceNumber: struct.get(E.fileSequenceNumber.id) as bigint | undefined,
    file: fileFromStruct(requiredField(struct, E.dataFile) as IdStruct),
  });
}

const fileFormats = new Set<string>(["PARQUET", "AVRO", "ORC", "PUFFIN"]);

function fileFromStruct(struct: IdStruct): ContentFile {
  const get = <T>(field: { id: number }) => struct.get(field.id) as T | undefined;
  const format = String(requiredField(struct, D.fileFormat)).toUpperCase();
  if (!fileFormats.has(format)) throw new IcebergError("corrupt", `unknown file_format ${format}`);
  const base = {
    filePath: requiredField(struct, D.filePath) as string,
    fileFormat: format as FileFormat,
    // Some writers (BigQuery) leave the empty partition tuple of an unpartitioned table null.
    partition: (struct.get(D.partition.id) ?? new Map()) as PartitionValues,
    recordCount: requiredField(struct, D.recordCount) as bigint,
    fileSizeInBytes: requiredField(struct, D.fileSizeInBytes) as bigint,
    columnSizes: get<ReadonlyMap<number, bigint>>(D.columnSizes),
    valueCounts: get<ReadonlyMap<number, bigint>>(D.valueCounts),
    nullValueCounts: get<ReadonlyMap<number, bigint>>(D.nullValueCounts),
    nanValueCounts: get<ReadonlyMap<number, bigint>>(D.nanValueCounts),
    lowerBounds: get<ReadonlyMap<number, Uint8Array>>(D.lowerBounds),
    upperBounds: get<ReadonlyMap<number, Uint8Array>>(D.upperBounds),
    keyMetadata: get<Uint8Array>(D.keyMetadata),
    splitOffsets: get<readonly bigint[]>(D.splitOffsets),
    sortOrderId: get<number>(D.sortOrderId),
  };
  // v1 manifests have no content column: all their files are data files.
  const content = (struct.get(D.content.id) ?? FileContent.DATA) as FileContent;
  if (content === FileContent.DATA) {
    return definedOnly<DataFile>({ ...base, content, firstRowId: get<bigint>(D.firstRowId) });
  }
  const deletes = {
    ...base,
    referencedDataFile: get<string>(D.referencedDataFile),
    contentOffset: get<bigint>(D.contentOffset),
    contentSizeInBytes: get<bigint>(D.contentSizeInBytes),
  };
  if (content === FileContent.POSITION_DELETES && format === "PUFFIN") {
    const { referencedDataFile, contentOffset, contentSizeInBytes } = deletes;
    if (referencedDataFile === undefined || contentOffset === undefined || contentSizeInBytes === undefined) {
      throw new IcebergError(
        "corrupt",
        `deletion vector ${base.filePath} lacks its referenced data file or blob offset and size`,
      );
    }
    return definedOnly<DeletionVectorFile>({
      ...deletes,
      content,
      fileFormat: "PUFFIN",
      referencedDataFile,
      contentOffset,
      contentSizeInBytes,
    });
  }
  return definedOnly<OtherDeleteFile>({ ...deletes, content, equalityIds: get<readonly number[]>(D.equalityIds) });
}
