// Manifest and manifest-list files of a table: where they are written and how they are read
// back. Manifests and manifest lists are immutable once written (spec "Overview"), so what
// has been read is cached by location for the life of the process.
import { inheritFromManifestFile } from "../avro/inheritance.ts";
import { readManifestList as decodeManifestList, writeManifestList } from "../avro/manifest-list.ts";
import { readManifest } from "../avro/manifest-reader.ts";
import { ManifestWriter, type NewManifestFile } from "../avro/manifest-writer.ts";
import { decodingFile } from "../errors.ts";
import { newMetadataFileLocation } from "../locations.ts";
import { EntryStatus, type ManifestContent, type ManifestEntry, type ManifestFile } from "../spec/manifest.ts";
import type { Snapshot } from "../spec/snapshot.ts";
import { currentSchema, specById, type TableMetadata } from "../spec/table-metadata.ts";
import type { Table } from "../table.ts";

const manifestLists = new Map<string, Promise<ManifestFile[]>>();
const manifestEntries = new Map<string, Promise<ManifestEntry[]>>();
const CACHE_LIMIT = 10_000;

function cached<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let value = cache.get(key);
  if (!value) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    value = load();
    cache.set(key, value);
    value.catch(() => cache.delete(key));
  }
  return value;
}

export function readManifestList(table: Table, snapshot: Snapshot): Promise<ManifestFile[]> {
  return cached(manifestLists, snapshot.manifestList, async () => {
    const bytes = await table.io.read(snapshot.manifestList);
    return decodingFile(snapshot.manifestList, () => decodeManifestList(bytes));
  });
}

/** The live (ADDED and EXISTING) entries of a committed manifest, with inherited values filled in. */
export function readManifestEntries(table: Table, manifest: ManifestFile): Promise<ManifestEntry[]> {
  return cached(manifestEntries, manifest.manifestPath, async () => {
    const bytes = await table.io.read(manifest.manifestPath);
    const { entries } = decodingFile(manifest.manifestPath, () => readManifest(bytes));
    return inheritFromManifestFile(entries, manifest).filter((e) => e.status !== EntryStatus.DELETED);
  });
}

/** Writes a manifest of the current schema and the given (default) spec, filled by `fill`. */
export async function writeManifestFile(
  table: Table,
  base: TableMetadata,
  options: { content: ManifestContent; snapshotId: bigint; specId?: number },
  fill: (writer: ManifestWriter) => void,
): Promise<NewManifestFile> {
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
