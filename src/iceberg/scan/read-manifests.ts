// The manifest list of a snapshot and the live entries of a manifest, read through the cache of
// the table's catalog. The Avro decoders (avsc) load with the first manifest read: a command
// that only looks at table metadata (a sync with nothing new) never needs them.
import { decodingFile } from "../errors.ts";
import { type ContentFile, EntryStatus, type ManifestEntry, type ManifestFile } from "../spec/manifest.ts";
import type { Snapshot } from "../spec/snapshot.ts";
import type { Table } from "../table.ts";

export function readManifestList(table: Table, snapshot: Snapshot): Promise<ManifestFile[]> {
  return table.manifestCache.get(
    snapshot.manifestList,
    async () => {
      const [bytes, { readManifestList: decodeManifestList }] = await Promise.all([
        table.io.read(snapshot.manifestList),
        import("../avro/manifest-list.ts"),
      ]);
      return decodingFile(snapshot.manifestList, () => decodeManifestList(bytes));
    },
    manifestListBytes,
  );
}

/** The live (ADDED and EXISTING) entries of a committed manifest, with inherited values filled in. */
export function readManifestEntries(table: Table, manifest: ManifestFile): Promise<ManifestEntry[]> {
  return table.manifestCache.get(
    manifest.manifestPath,
    async () => {
      const [bytes, { readManifest }, { inheritFromManifestFile }] = await Promise.all([
        table.io.read(manifest.manifestPath),
        import("../avro/manifest-reader.ts"),
        import("../avro/inheritance.ts"),
      ]);
      const { entries } = decodingFile(manifest.manifestPath, () => readManifest(bytes));
      return inheritFromManifestFile(entries, manifest).filter((e) => e.status !== EntryStatus.DELETED);
    },
    manifestEntriesBytes,
  );
}

// Estimates of the decoded size, measured on Node 24: an entry takes about 1 KB plus 150 bytes
// per column statistic or partition value (a bigint or a byte array in a Map); the files' own
// sizes say little, their Avro blocks being compressed.
const ENTRY_BYTES = 1000;
const VALUE_BYTES = 150;

function manifestListBytes(manifests: readonly ManifestFile[]): number {
  return manifests.reduce((sum, m) => sum + ENTRY_BYTES + VALUE_BYTES * (m.partitions?.length ?? 0), 0);
}

function manifestEntriesBytes(entries: readonly ManifestEntry[]): number {
  return entries.reduce((sum, e) => sum + ENTRY_BYTES + VALUE_BYTES * valueCount(e.file), 0);
}

function valueCount(file: ContentFile): number {
  return (
    file.partition.size +
    (file.columnSizes?.size ?? 0) +
    (file.valueCounts?.size ?? 0) +
    (file.nullValueCounts?.size ?? 0) +
    (file.nanValueCounts?.size ?? 0) +
    (file.lowerBounds?.size ?? 0) +
    (file.upperBounds?.size ?? 0)
  );
}
