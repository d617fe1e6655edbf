// The live files of a snapshot (spec "Scan Planning"): data files from data manifests and
// deletion vectors from delete manifests, each with the manifest that holds it. A DV applies
// to its referenced data file when its data sequence number is >= the data file's.
// The spec allows one live DV per data file; should a table hold two, the newer one (higher
// sequence number) is taken, since a correct writer's newer DV includes the older's positions.
import { IcebergError } from "../errors.ts";
import {
  type DataFile,
  type DeletionVectorFile,
  FileContent,
  isDeletionVector,
  ManifestContent,
  type ManifestEntry,
  type ManifestFile,
} from "../spec/manifest.ts";
import type { Snapshot } from "../spec/snapshot.ts";
import type { Table } from "../table.ts";
import { readManifestEntries, readManifestList } from "./read-manifests.ts";

export interface LiveFile<F extends DataFile | DeletionVectorFile> {
  /** With inherited snapshot id and sequence numbers filled in. */
  entry: ManifestEntry<F>;
  manifest: ManifestFile;
}

export interface FileSnapshot {
  manifests: ManifestFile[];
  /** By data file path. */
  dataFiles: Map<string, LiveFile<DataFile>>;
  /** By referenced data file path. */
  deletionVectors: Map<string, LiveFile<DeletionVectorFile>>;
}

export class UnsupportedDeleteFileError extends IcebergError {
  constructor(table: string, path: string) {
    super(
      "unsupported",
      `${table}: ${path} is a position or equality delete file; floe reads deletion vectors only (v3 tables written by v3 writers)`,
    );
    this.name = "UnsupportedDeleteFileError";
  }
}

export async function planFiles(table: Table, snapshot: Snapshot | undefined): Promise<FileSnapshot> {
  const plan: FileSnapshot = { manifests: [], dataFiles: new Map(), deletionVectors: new Map() };
  if (!snapshot) return plan;
  plan.manifests = await readManifestList(table, snapshot);
  const perManifest = await Promise.all(
    plan.manifests.map(async (manifest) => ({ manifest, entries: await readManifestEntries(table, manifest) })),
  );
  for (const { manifest, entries } of perManifest) {
    for (const entry of entries) {
      const file = entry.file;
      if (manifest.content === ManifestContent.DATA && file.content === FileContent.DATA) {
        plan.dataFiles.set(file.filePath, { entry: entry as ManifestEntry<DataFile>, manifest });
      } else if (isDeletionVector(file)) {
        const existing = plan.deletionVectors.get(file.referencedDataFile);
        if (existing && existing.entry.sequenceNumber! >= entry.sequenceNumber!) continue;
        plan.deletionVectors.set(file.referencedDataFile, {
          entry: entry as ManifestEntry<DeletionVectorFile>,
          manifest,
        });
      } else {
        throw new UnsupportedDeleteFileError(table.name, file.filePath);
      }
    }
  }
  // A DV older than its data file (the file was re-added, e.g. by a rewrite) no longer applies.
  for (const [path, dv] of plan.deletionVectors) {
    const data = plan.dataFiles.get(path);
    if (!data || dv.entry.sequenceNumber! < data.entry.sequenceNumber!) plan.deletionVectors.delete(path);
  }
  return plan;
}
