// The live files of a snapshot (spec "Scan Planning"): data files from data manifests and
// deletion vectors from delete manifests, each with the manifest that holds it. A DV applies
// to its referenced data file when its data sequence number is >= the data file's.
// The spec allows one live DV per data file; should a table hold two, the newer one (higher
// sequence number) is taken, since a correct writer's newer DV includes the older's positions.
//
// Tables upgraded from v2 (or written by another engine) may also hold position delete files
// (Parquet rows of file_path, pos) and equality delete files. Spec "Scan Planning": a position
// delete file applies to a data file when the data file's data sequence number is <= the delete
// file's and the path matches; an equality delete file when the data file's is strictly lower.
// Spec "Deletion Vectors": when a data file has a DV, its position delete files may be ignored
// (a writer that creates the DV merges them into it). Position deletes are planned per data file
// (positionDeletes) and read with deletedPositionsOf(); an equality delete that applies to a
// live data file is refused (EqualityDeletesError): floe locates rows by position only, and
// cannot know which rows it deletes without reading every row. One that no longer applies to any
// live data file (the files it deleted from were rewritten) is ignored, as readers ignore it.
import { IcebergError } from "../errors.ts";
import {
  type ContentFile,
  type DataFile,
  type DeletionVectorFile,
  FileContent,
  isDeletionVector,
  ManifestContent,
  type ManifestEntry,
  type ManifestFile,
  type OtherDeleteFile,
} from "../spec/manifest.ts";
import type { Snapshot } from "../spec/snapshot.ts";
import type { Table } from "../table.ts";
import { readManifestEntries, readManifestList } from "./read-manifests.ts";

export interface LiveFile<F extends ContentFile> {
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
  /**
   * By data file path: the position delete files that apply to it (none of a file that has a
   * DV: the DV holds them). A file scoped to one data file (referenced_data_file, or equal
   * file_path bounds) is listed under that file only.
   */
  positionDeletes: Map<string, LiveFile<OtherDeleteFile>[]>;
}

/** The reserved field ids of a position delete file's columns (spec "Position Delete Files"). */
export const POSITION_DELETE_FILE_PATH_ID = 2147483546;
export const POSITION_DELETE_POS_ID = 2147483545;

/** The one data file a position delete file deletes from, when it says so (referenced_data_file or equal bounds). */
export function positionDeleteTarget(file: OtherDeleteFile): string | undefined {
  if (file.referencedDataFile !== undefined) return file.referencedDataFile;
  const lower = file.lowerBounds?.get(POSITION_DELETE_FILE_PATH_ID);
  const upper = file.upperBounds?.get(POSITION_DELETE_FILE_PATH_ID);
  if (lower === undefined || upper === undefined || Buffer.compare(lower, upper) !== 0) return undefined;
  return new TextDecoder().decode(lower);
}

/** Equality deletes apply to live rows: floe cannot say which, so it does not write the table. */
export class EqualityDeletesError extends IcebergError {
  constructor(table: string, path: string, count: number) {
    super(
      "unsupported",
      `${table}: ${count} equality delete file(s) written by another engine apply to its live data files (e.g. ${path}); ` +
        "floe deletes rows by position and cannot tell which rows they delete. Apply them by rewriting the data files they delete from, " +
        `e.g. in Spark: CALL <catalog>.system.rewrite_data_files(table => '${table}', options => map('delete-file-threshold', '1')), then sync again`,
    );
    this.name = "EqualityDeletesError";
  }
}

export class UnsupportedDeleteFileError extends IcebergError {
  constructor(table: string, path: string) {
    super(
      "unsupported",
      `${table}: ${path} is listed in a manifest of another content (a delete file in a data manifest, or a data file in a delete manifest); floe cannot plan this table`,
    );
    this.name = "UnsupportedDeleteFileError";
  }
}

export async function planFiles(table: Table, snapshot: Snapshot | undefined): Promise<FileSnapshot> {
  const plan: FileSnapshot = {
    manifests: [],
    dataFiles: new Map(),
    deletionVectors: new Map(),
    positionDeletes: new Map(),
  };
  if (!snapshot) return plan;
  const positionDeletes: LiveFile<OtherDeleteFile>[] = [];
  const equalityDeletes: LiveFile<OtherDeleteFile>[] = [];
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
      } else if (manifest.content === ManifestContent.DELETES && file.content === FileContent.POSITION_DELETES) {
        positionDeletes.push({ entry: entry as ManifestEntry<OtherDeleteFile>, manifest });
      } else if (manifest.content === ManifestContent.DELETES && file.content === FileContent.EQUALITY_DELETES) {
        equalityDeletes.push({ entry: entry as ManifestEntry<OtherDeleteFile>, manifest });
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
  for (const deletes of positionDeletes) {
    const target = positionDeleteTarget(deletes.entry.file);
    const candidates = target === undefined ? [...plan.dataFiles.values()] : [plan.dataFiles.get(target) ?? []].flat();
    for (const data of candidates) {
      const path = data.entry.file.filePath;
      if (data.entry.sequenceNumber! > deletes.entry.sequenceNumber! || plan.deletionVectors.has(path)) continue;
      plan.positionDeletes.set(path, [...(plan.positionDeletes.get(path) ?? []), deletes]);
    }
  }
  const applying = equalityDeletes.filter(({ entry }) =>
    [...plan.dataFiles.values()].some((data) => data.entry.sequenceNumber! < entry.sequenceNumber!),
  );
  if (applying.length > 0)
    throw new EqualityDeletesError(table.name, applying[0]!.entry.file.filePath, applying.length);
  return plan;
}
