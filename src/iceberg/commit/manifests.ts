// Manifest and manifest-list files of a commit: where they are written. Reading them back is
// the scan's (scan/read-manifests.ts). The Avro encoders (avsc) load with the first file written:
// a command that commits nothing never needs them.
import type { ManifestWriter, NewManifestFile } from "../avro/manifest-writer.ts";
import { newMetadataFileLocation } from "../locations.ts";
import { type DataFile, ManifestContent, type ManifestFile } from "../spec/manifest.ts";
import { currentSchema, specById, type TableMetadata } from "../spec/table-metadata.ts";
import type { Table } from "../table.ts";

/** Writes a manifest of the current schema and the given (default) spec, filled by `fill`. */
export async function writeManifestFile(
  table: Table,
  base: TableMetadata,
  options: { content: ManifestContent; snapshotId: bigint; specId?: number },
  fill: (writer: ManifestWriter) => void,
): Promise<NewManifestFile> {
  const { ManifestWriter } = await import("../avro/manifest-writer.ts");
  const writer = new ManifestWriter({
    schema: currentSchema(base),
    spec: specById(base, options.specId ?? base.defaultSpecId),
    content: options.content,
    snapshotId: options.snapshotId,
  });
  fill(writer);
  const location = newMetadataFileLocation(base, `${crypto.randomUUID()}-m0.avro`);
  const { bytes, manifest } = writer.finish(location);
  await table.io.write(location, bytes);
  return manifest;
}

/**
 * New data files as manifests of ADDED entries, one per partition spec the files follow (spec
 * "Manifests": a manifest holds files of one spec, whose id its metadata and list entry carry).
 */
export function writeDataManifests(
  table: Table,
  base: TableMetadata,
  snapshotId: bigint,
  files: readonly DataFile[],
): Promise<NewManifestFile[]> {
  const bySpec = Map.groupBy(files, (file) => file.specId ?? base.defaultSpecId);
  return Promise.all(
    [...bySpec].map(([specId, ofSpec]) =>
      writeManifestFile(table, base, { content: ManifestContent.DATA, snapshotId, specId }, (writer) => {
        for (const file of ofSpec) writer.add(file);
      }),
    ),
  );
}

export async function writeManifestListFile(
  table: Table,
  options: {
    snapshotId: bigint;
    parentSnapshotId: bigint | undefined;
    sequenceNumber: bigint;
    firstRowId: bigint;
    attempt: number;
    manifests: readonly (ManifestFile | NewManifestFile)[];
  },
): Promise<{ location: string; addedRows: bigint }> {
  const { writeManifestList } = await import("../avro/manifest-list.ts");
  const { bytes, addedRows } = writeManifestList({
    snapshotId: options.snapshotId,
    ...(options.parentSnapshotId === undefined ? {} : { parentSnapshotId: options.parentSnapshotId }),
    sequenceNumber: options.sequenceNumber,
    firstRowId: options.firstRowId,
    manifests: options.manifests,
  });
  // Java's naming: snap-<snapshot id>-<attempt>-<uuid>.avro
  const location = newMetadataFileLocation(
    table.metadata,
    `snap-${options.snapshotId}-${options.attempt + 1}-${crypto.randomUUID()}.avro`,
  );
  await table.io.write(location, bytes);
  return { location, addedRows };
}
