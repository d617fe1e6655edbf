// Writes and reads a v3 manifest list (spec "Manifest Lists"): an Avro file of manifest_file
// records with the metadata keys snapshot-id, parent-snapshot-id, sequence-number,
// first-row-id and format-version.
//
// Writing commits the values a manifest left to its snapshot: the sequence numbers of the
// manifests it adds, and (spec "First Row ID Assignment") a first_row_id for each data manifest
// that has none, from a counter that starts at the snapshot's first-row-id and advances by the
// manifest's added and existing rows (any of them may lack a row id). Manifests carried over
// keep theirs; delete manifests have none. The counter's advance is the snapshot's added-rows.
import { ManifestContent, type ManifestFile, type PartitionFieldSummary } from "../spec/manifest.ts";
import { structToAvroSchema } from "./avro-schema.ts";
import { definedOnly, type IdStruct, idStructDecoder, requiredField, structToAvro, toIdStruct } from "./avro-value.ts";
import { readAvroFile, writeAvroFile } from "./container.ts";
import type { NewManifestFile } from "./manifest-writer.ts";
import { ManifestFileField as M, manifestFileType, PartitionFieldSummaryField as P } from "./v3-metadata.ts";

export interface ManifestListOptions {
  snapshotId: bigint;
  parentSnapshotId?: bigint;
  sequenceNumber: bigint;
  /** The table's next-row-id at this commit attempt. */
  firstRowId: bigint;
  /** Manifests carried over from the parent snapshot and those this snapshot adds, in order. */
  manifests: readonly (ManifestFile | NewManifestFile)[];
}

export interface WrittenManifestList {
  bytes: Uint8Array;
  /** The manifests as listed, with their sequence numbers and first_row_id assigned. */
  manifests: ManifestFile[];
  /** The snapshot's added-rows: the row ids assigned, by which the table's next-row-id advances. */
  addedRows: bigint;
}

export function writeManifestList(options: ManifestListOptions): WrittenManifestList {
  const { snapshotId, sequenceNumber, firstRowId } = options;
  let nextRowId = firstRowId;
  const manifests = options.manifests.map((m): ManifestFile => {
    if (m.sequenceNumber === undefined && m.addedSnapshotId !== snapshotId) {
      throw new Error(`manifest ${m.manifestPath} of snapshot ${m.addedSnapshotId} has no sequence number`);
    }
    const { firstRowId: own, ...manifest } = m;
    const listed: ManifestFile = {
      ...manifest,
      sequenceNumber: m.sequenceNumber ?? sequenceNumber,
      minSequenceNumber: m.minSequenceNumber ?? sequenceNumber,
    };
    if (m.content !== ManifestContent.DATA) return listed;
    if (own !== undefined) return { ...listed, firstRowId: own };
    const assigned = nextRowId;
    nextRowId += m.addedRowsCount + m.existingRowsCount;
    return { ...listed, firstRowId: assigned };
  });

  const bytes = writeAvroFile({
    schema: structToAvroSchema(manifestFileType, "manifest_file"),
    metadata: new Map([
      ["snapshot-id", String(snapshotId)],
      ["parent-snapshot-id", String(options.parentSnapshotId ?? "null")],
      ["sequence-number", String(sequenceNumber)],
      ["first-row-id", String(firstRowId)],
      ["format-version", "3"],
    ]),
    records: manifests.map((m) => structToAvro(manifestFileType, manifestFileToStruct(m))),
  });
  return { bytes, manifests, addedRows: nextRowId - firstRowId };
}

function manifestFileToStruct(m: ManifestFile): IdStruct {
  return toIdStruct(M, m, { partitions: m.partitions?.map((summary) => toIdStruct(P, summary)) });
}

/** The manifests of a list written by any writer, v1 to v3 (v1 lacks content and sequence numbers: 0). */
export function readManifestList(bytes: Uint8Array): ManifestFile[] {
  const file = readAvroFile(bytes);
  const decode = idStructDecoder(file.schema);
  return file.records.map((r) => manifestFileFromStruct(decode(r) as IdStruct));
}

function manifestFileFromStruct(s: IdStruct): ManifestFile {
  return definedOnly<ManifestFile>({
    manifestPath: requiredField(s, M.manifestPath) as string,
    manifestLength: requiredField(s, M.manifestLength) as bigint,
    partitionSpecId: requiredField(s, M.partitionSpecId) as number,
    content: (s.get(M.content.id) ?? ManifestContent.DATA) as ManifestContent,
    sequenceNumber: (s.get(M.sequenceNumber.id) ?? 0n) as bigint,
    minSequenceNumber: (s.get(M.minSequenceNumber.id) ?? 0n) as bigint,
    addedSnapshotId: requiredField(s, M.addedSnapshotId) as bigint,
    addedFilesCount: requiredField(s, M.addedFilesCount) as number,
    existingFilesCount: requiredField(s, M.existingFilesCount) as number,
    deletedFilesCount: requiredField(s, M.deletedFilesCount) as number,
    addedRowsCount: requiredField(s, M.addedRowsCount) as bigint,
    existingRowsCount: requiredField(s, M.existingRowsCount) as bigint,
    deletedRowsCount: requiredField(s, M.deletedRowsCount) as bigint,
    partitions: (s.get(M.partitions.id) as IdStruct[] | undefined)?.map(summaryFromStruct),
    keyMetadata: s.get(M.keyMetadata.id) as Uint8Array | undefined,
    firstRowId: s.get(M.firstRowId.id) as bigint | undefined,
  });
}

function summaryFromStruct(s: IdStruct): PartitionFieldSummary {
  return definedOnly<PartitionFieldSummary>({
    containsNull: requiredField(s, P.containsNull) as boolean,
    containsNan: s.get(P.containsNan.id) as boolean | undefined,
    lowerBound: s.get(P.lowerBound.id) as Uint8Array | undefined,
    upperBound: s.get(P.upperBound.id) as Uint8Array | undefined,
  });
}
