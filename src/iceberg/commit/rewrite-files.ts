// RewriteFiles (Java's BaseRewriteFiles; spec operation "replace"): data files are replaced
// by others holding the same live rows, and the deletion vectors of the replaced files go with
// them. A "replace" changes no row of the table (spec "Snapshots": operation replace).
//
// Validation against concurrent commits, at every attempt on the parent it commits on (as
// Java's validateDataFilesExist and validateNoNewDeletesForDataFiles):
// - every replaced data file must still be live: one that another commit removed or rewrote
//   meanwhile cannot be replaced again;
// - a replaced data file must have, in that parent, exactly the deletion vector the rewrite
//   applied (or none if it applied none). A DV committed meanwhile deletes rows the new files
//   still hold; committing would bring them back. That is a RewriteConflictError, naming the
//   files, so that the caller rewrites them again from the new parent.
// Rows added meanwhile live in other data files, which a replace keeps as they are.
//
// Spec "Row Lineage": rows moved by a rewrite keep their _row_id and _last_updated_sequence_number;
// the writer of the new files materializes them as columns (rewrite-data-files.ts), since the
// new files' inherited first_row_id and sequence number are new ones.
import type { NewManifestFile } from "../avro/manifest-writer.ts";
import { type FileSnapshot, planFiles } from "../scan/plan-files.ts";
import { readManifestEntries } from "../scan/read-manifests.ts";
import {
  type ContentFile,
  type DataFile,
  type DeletionVectorFile,
  isDeletionVector,
  type ManifestFile,
} from "../spec/manifest.ts";
import type { Snapshot, SnapshotOperation } from "../spec/snapshot.ts";
import type { TableMetadata } from "../spec/table-metadata.ts";
import { mergeManifests } from "./manifest-merge.ts";
import { writeDataManifests, writeManifestFile } from "./manifests.ts";
import { type SnapshotChanges, SnapshotProducer } from "./snapshot-producer.ts";
import { SnapshotSummaryBuilder } from "./snapshot-summary.ts";
import { ValidationError } from "./validation-error.ts";

/** Another commit deleted rows of (or removed) data files this rewrite replaces. */
export class RewriteConflictError extends ValidationError {
  readonly dataFiles: string[];

  constructor(table: string, dataFiles: string[], what: string) {
    super(`${table}: cannot replace ${dataFiles.length} data file(s) (${dataFiles.slice(0, 3).join(", ")}): ${what}`);
    this.name = "RewriteConflictError";
    this.dataFiles = dataFiles;
  }
}

export class RewriteFiles extends SnapshotProducer {
  protected readonly operation: SnapshotOperation = "replace";
  /** Replaced data file path -> the DV the rewrite applied to it (identity), or null for none. */
  readonly #replaced = new Map<string, string | null>();
  readonly #added: DataFile[] = [];
  #manifests: Promise<NewManifestFile[]> | undefined;

  /** Replaces `dataFile`, whose rows the new files hold minus those `appliedDV` deletes. */
  deleteFile(dataFile: DataFile | string, appliedDV?: DeletionVectorFile): this {
    this.#assertNotStarted();
    const path = typeof dataFile === "string" ? dataFile : dataFile.filePath;
    this.#replaced.set(path, appliedDV ? dvIdentity(appliedDV) : null);
    return this;
  }

  addFile(...files: DataFile[]): this {
    this.#assertNotStarted();
    this.#added.push(...files);
    return this;
  }

  protected async apply(base: TableMetadata, parent: Snapshot | undefined): Promise<SnapshotChanges> {
    const plan = await planFiles(this.table, parent);
    this.#validateReplaced(plan);
    const summary = new SnapshotSummaryBuilder();
    const removedDVs = new Set<string>();
    for (const path of this.#replaced.keys()) {
      summary.removedFile(plan.dataFiles.get(path)!.entry.file);
      const dv = plan.deletionVectors.get(path);
      if (dv) {
        removedDVs.add(dvIdentity(dv.entry.file));
        summary.removedFile(dv.entry.file);
      }
    }
    for (const file of this.#added) summary.addedFile(file);

    // A compaction writes each group's rows in the spec of the files it replaces: one manifest per spec.
    this.#manifests ??= writeDataManifests(this.table, base, this.snapshotId, this.#added);
    const touched = new Set<string>();
    for (const path of this.#replaced.keys()) touched.add(plan.dataFiles.get(path)!.manifest.manifestPath);
    for (const dv of plan.deletionVectors.values()) {
      if (removedDVs.has(dvIdentity(dv.entry.file))) touched.add(dv.manifest.manifestPath);
    }
    const rewritten = await Promise.all(
      plan.manifests.filter((m) => touched.has(m.manifestPath)).map((m) => this.#withoutReplaced(base, m, removedDVs)),
    );
    const kept = plan.manifests.filter((m) => !touched.has(m.manifestPath));
    const added: (ManifestFile | NewManifestFile)[] = await this.#manifests;
    const manifests = await mergeManifests(this.table, base, this.snapshotId, [...added, ...rewritten, ...kept]);
    return { manifests, summary };
  }

  #validateReplaced(plan: FileSnapshot): void {
    const missing = [...this.#replaced.keys()].filter((path) => !plan.dataFiles.has(path));
    if (missing.length > 0) {
      throw new RewriteConflictError(
        this.table.name,
        missing,
        "not live any more (removed or rewritten by another commit)",
      );
    }
    const newDeletes = [...this.#replaced].filter(([path, applied]) => {
      const dv = plan.deletionVectors.get(path);
      return (dv ? dvIdentity(dv.entry.file) : null) !== applied;
    });
    if (newDeletes.length > 0) {
      throw new RewriteConflictError(
        this.table.name,
        newDeletes.map(([path]) => path),
        "another commit deleted rows of them meanwhile (a new deletion vector)",
      );
    }
  }

  /** The manifest with the replaced data files and their DVs DELETED, the other entries EXISTING. */
  async #withoutReplaced(base: TableMetadata, manifest: ManifestFile, removedDVs: Set<string>) {
    const entries = await readManifestEntries(this.table, manifest);
    const gone = (file: ContentFile) =>
      isDeletionVector(file) ? removedDVs.has(dvIdentity(file)) : this.#replaced.has(file.filePath);
    return writeManifestFile(
      this.table,
      base,
      { content: manifest.content, snapshotId: this.snapshotId, specId: manifest.partitionSpecId },
      (writer) => {
        for (const entry of entries) {
          if (gone(entry.file)) writer.delete(entry);
          else writer.existing(entry);
        }
      },
    );
  }

  #assertNotStarted(): void {
    if (this.#manifests) throw new Error(`${this.table.name}: rewrite changed after its commit started`);
  }
}

export function dvIdentity(file: DeletionVectorFile): string {
  return `${file.filePath}#${file.contentOffset}`;
}
