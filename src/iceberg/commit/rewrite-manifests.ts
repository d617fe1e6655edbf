// RewriteManifests (Java's BaseRewriteManifests; spec operation "replace"): the current
// snapshot's manifests are rewritten into as few as the target size allows, per content and
// partition spec, changing no file of the table. Every entry becomes EXISTING with its data
// and file sequence numbers and (v3 row lineage) its first_row_id as they were, so a DV still
// applies to its data file and every row keeps its id.
// Validation against concurrent commits (as Java's validateDeletedManifests): the manifests
// replaced are those of the parent the attempt commits on, read again at every attempt, so a
// manifest a concurrent commit dropped is never carried back and one it added is rewritten too.
import type { NewManifestFile } from "../avro/manifest-writer.ts";
import { readManifestList } from "../scan/read-manifests.ts";
import type { ManifestFile } from "../spec/manifest.ts";
import type { Snapshot, SnapshotOperation } from "../spec/snapshot.ts";
import type { TableMetadata } from "../spec/table-metadata.ts";
import { manifestMergeSettings, mergeBin, packManifests } from "./manifest-merge.ts";
import { type SnapshotChanges, SnapshotProducer } from "./snapshot-producer.ts";
import { SnapshotSummaryBuilder } from "./snapshot-summary.ts";

/**
 * The bins a rewrite makes of `manifests` (newest first, as a manifest list has them): per
 * content and spec, oldest first, each of at most `targetSizeBytes`. Pure: unit-tested.
 */
export function manifestBins<M extends Pick<ManifestFile, "manifestLength" | "content" | "partitionSpecId">>(
  manifests: readonly M[],
  targetSizeBytes: number,
): M[][] {
  const bins: M[][] = [];
  for (const group of Map.groupBy(manifests, (m) => `${m.content}/${m.partitionSpecId}`).values()) {
    // Oldest first, as they were listed: entries keep the order they were added in.
    const ordered = [...group].reverse();
    for (const bin of packManifests(
      ordered.map((m) => Number(m.manifestLength)),
      targetSizeBytes,
    )) {
      bins.push(bin.map((i) => ordered[i]!));
    }
  }
  return bins;
}

export class RewriteManifests extends SnapshotProducer {
  protected readonly operation: SnapshotOperation = "replace";
  #targetSizeBytes: number | undefined;
  /** What the last attempt did: manifests replaced, created and kept. */
  result = { replaced: 0, created: 0, kept: 0 };

  /** Target size of a rewritten manifest; commit.manifest.target-size-bytes by default. */
  targetSize(bytes: number): this {
    this.#targetSizeBytes = bytes;
    return this;
  }

  protected async apply(base: TableMetadata, parent: Snapshot | undefined): Promise<SnapshotChanges> {
    const summary = new SnapshotSummaryBuilder();
    const listed = parent ? await readManifestList(this.table, parent) : [];
    // A manifest with no live entry (it only records the removals of the snapshot that wrote it) is left out.
    const manifests = listed.filter((m) => m.addedFilesCount + m.existingFilesCount > 0);
    const target = this.#targetSizeBytes ?? manifestMergeSettings(base.properties).targetSizeBytes;
    const out: (ManifestFile | NewManifestFile)[] = [];
    let replaced = listed.length - manifests.length;
    let created = 0;
    let kept = 0;
    for (const members of manifestBins(manifests, target)) {
      if (members.length === 1) {
        out.push(members[0]!);
        kept++;
        continue;
      }
      out.push(await mergeBin(this.table, base, this.snapshotId, members));
      replaced += members.length;
      created++;
    }
    this.result = { replaced, created, kept };
    summary.set("manifests-created", String(created));
    summary.set("manifests-replaced", String(replaced));
    summary.set("manifests-kept", String(kept));
    return { manifests: out, summary };
  }
}
