// Merging small manifests on commit (Java's ManifestMergeManager, used by MergeAppend and the
// other MergingSnapshotProducer operations). Table properties, as Java names them:
//   commit.manifest-merge.enabled        (default true)
//   commit.manifest.min-count-to-merge   (default 100)
//   commit.manifest.target-size-bytes    (default 8 MiB)
// Manifests are grouped by content and partition spec (spec "Manifests": a manifest holds one
// kind of file of one spec). A group reaching min-count-to-merge has the manifests carried over
// from the parent packed, oldest first, into bins of at most the target size (Java packs from
// the end too, so that the under-filled bin is the newest, merged again next time); each bin of
// more than one manifest becomes one manifest whose entries are EXISTING, with their sequence
// numbers and (v3 row lineage) first_row_id as they were, so every row keeps its id. Unlike
// Java, which packs the new manifest into the newest bin and merges that bin once it holds
// min-count manifests, the manifests this snapshot writes are kept apart: their ADDED and
// DELETED entries stay this commit's own, whatever bin they would have fallen in.
// A merged manifest gets a new first_row_id range on the manifest list (as Java's), which its
// entries never use: each carries its own first_row_id.
import type { NewManifestFile } from "../avro/manifest-writer.ts";
import { readManifestEntries } from "../scan/read-manifests.ts";
import type { ManifestFile } from "../spec/manifest.ts";
import type { TableMetadata } from "../spec/table-metadata.ts";
import {
  COMMIT_MANIFEST_MERGE_ENABLED,
  COMMIT_MANIFEST_MIN_COUNT_TO_MERGE,
  COMMIT_MANIFEST_TARGET_SIZE_BYTES,
  propertyValue,
} from "../spec/table-properties.ts";
import type { Table } from "../table.ts";
import { writeManifestFile } from "./manifests.ts";

export interface ManifestMergeSettings {
  enabled: boolean;
  minCountToMerge: number;
  targetSizeBytes: number;
}

export function manifestMergeSettings(properties: Readonly<Record<string, string>>): ManifestMergeSettings {
  return {
    enabled: propertyValue(properties, COMMIT_MANIFEST_MERGE_ENABLED),
    minCountToMerge: propertyValue(properties, COMMIT_MANIFEST_MIN_COUNT_TO_MERGE),
    targetSizeBytes: propertyValue(properties, COMMIT_MANIFEST_TARGET_SIZE_BYTES),
  };
}

/**
 * Bins of consecutive manifests (by index into `lengths`) of at most `targetSizeBytes` each; a
 * manifest larger than the target is a bin of its own. Pure: unit-tested.
 */
export function packManifests(lengths: readonly number[], targetSizeBytes: number): number[][] {
  const bins: number[][] = [];
  let bin: number[] = [];
  let size = 0;
  lengths.forEach((length, i) => {
    if (bin.length > 0 && size + length > targetSizeBytes) {
      bins.push(bin);
      bin = [];
      size = 0;
    }
    bin.push(i);
    size += length;
  });
  if (bin.length > 0) bins.push(bin);
  return bins;
}

/**
 * Which carried-over manifests to merge: for each group reaching the count, the bins of more
 * than one. `manifests` are in manifest-list order (newest first). Pure: unit-tested.
 */
export function selectManifestMerges(
  manifests: readonly { manifestLength: bigint; content: number; partitionSpecId: number; own: boolean }[],
  settings: ManifestMergeSettings,
): number[][] {
  if (!settings.enabled) return [];
  const groups = new Map<string, number[]>();
  manifests.forEach((m, i) => {
    const key = `${m.content}/${m.partitionSpecId}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  });
  const merges: number[][] = [];
  for (const members of groups.values()) {
    if (members.length < settings.minCountToMerge) continue;
    // Oldest first, so that old manifests settle into full bins and the newest stay small.
    const carried = members.filter((i) => !manifests[i]!.own).reverse();
    const bins = packManifests(
      carried.map((i) => Number(manifests[i]!.manifestLength)),
      settings.targetSizeBytes,
    );
    for (const bin of bins) if (bin.length > 1) merges.push(bin.map((b) => carried[b]!));
  }
  return merges;
}

/** The snapshot's manifests with small carried-over ones merged as the table's properties say. */
export async function mergeManifests(
  table: Table,
  base: TableMetadata,
  snapshotId: bigint,
  manifests: (ManifestFile | NewManifestFile)[],
  settings: ManifestMergeSettings = manifestMergeSettings(base.properties),
): Promise<(ManifestFile | NewManifestFile)[]> {
  // A carried manifest with no live entry is dropped by the snapshot producer; it is no merge candidate.
  const own = (m: ManifestFile | NewManifestFile) =>
    m.addedSnapshotId === snapshotId ||
    m.sequenceNumber === undefined ||
    m.addedFilesCount + m.existingFilesCount === 0;
  const merges = selectManifestMerges(
    manifests.map((m) => ({ ...m, own: own(m) })),
    settings,
  );
  if (merges.length === 0) return manifests;
  const merged = new Set(merges.flat());
  const written = await Promise.all(
    merges.map((bin) =>
      mergeBin(
        table,
        base,
        snapshotId,
        bin.map((i) => manifests[i] as ManifestFile),
      ),
    ),
  );
  return [...manifests.filter((_, i) => !merged.has(i)), ...written];
}

/** One manifest of the live entries of `bin`, all EXISTING. */
export async function mergeBin(
  table: Table,
  base: TableMetadata,
  snapshotId: bigint,
  bin: readonly ManifestFile[],
): Promise<NewManifestFile> {
  const entries = (await Promise.all(bin.map((m) => readManifestEntries(table, m)))).flat();
  const first = bin[0]!;
  return writeManifestFile(
    table,
    base,
    { content: first.content, snapshotId, specId: first.partitionSpecId },
    (writer) => {
      for (const entry of entries) writer.existing(entry);
    },
  );
}
