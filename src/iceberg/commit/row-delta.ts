// RowDelta (Java's BaseRowDelta; spec "Deletion Vectors", "Row-level Deletes"): adds data
// files and deletes rows of existing data files with v3 deletion vectors, in one snapshot.
// Spec rules it enforces: at most one DV per data file per snapshot, so a file's new DV holds
// the positions of its previous DV too, and the previous DV's manifest entry is marked DELETED
// in the same commit (its manifest is rewritten with the other entries EXISTING). A concurrent
// commit that removed the data file or gave it another DV is a real conflict (ValidationError):
// the caller's positions may no longer be right.
//
// Spec "Deletion Vectors" on tables upgraded from v2: existing position delete files "must be
// merged into the DV for a data file when one is created", so a data file's first DV holds the
// positions of the position delete files that apply to it; those scoped to that data file alone
// (referenced_data_file, or equal file_path bounds) are then removed in the same commit, as
// Java's row delta removes them. Files that delete from several data files stay until every one
// of those has a DV (readers ignore position deletes of a data file that has a DV).
//
// A caller that locates rows itself (an upsert, through a key index) can instead hand over a
// planner with deleteRowsPlannedOn(): it is asked for the positions again whenever an attempt
// commits on another parent than the one it last planned on, so that a retry after another
// writer's commit deletes the rows as that parent holds them, not as the first attempt saw them.
import type { NewManifestFile } from "../avro/manifest-writer.ts";
import { newDataFileLocation } from "../locations.ts";
import { type DeletionVectorInput, writeDeletionVectorFile } from "../puffin/deletion-vector-file.ts";
import { RoaringPositionBitmap } from "../puffin/roaring64.ts";
import { deletedPositionsOf } from "../scan/deleted-positions.ts";
import { type FileSnapshot, type LiveFile, planFiles, positionDeleteTarget } from "../scan/plan-files.ts";
import { readManifestEntries } from "../scan/read-manifests.ts";
import {
  type ContentFile,
  type DataFile,
  type DeletionVectorFile,
  FileContent,
  ManifestContent,
  type OtherDeleteFile,
} from "../spec/manifest.ts";
import type { Snapshot, SnapshotOperation } from "../spec/snapshot.ts";
import type { TableMetadata } from "../spec/table-metadata.ts";
import { mergeManifests } from "./manifest-merge.ts";
import { writeDataManifests, writeManifestFile } from "./manifests.ts";
import { type SnapshotChanges, SnapshotProducer } from "./snapshot-producer.ts";
import { SnapshotSummaryBuilder } from "./snapshot-summary.ts";
import { ValidationError } from "./validation-error.ts";

type WrittenDeletionVectors = { file: DeletionVectorFile; specId: number }[];

/** Rows of one live data file to delete, by position (0-based row index in the file). */
export interface RowPositions {
  path: string;
  positions: ArrayLike<number> | BigInt64Array | BigUint64Array;
}

/** Plans the deletes of a row delta on the parent an attempt commits on. */
export type DeletePlanner = (base: TableMetadata, parent: Snapshot | undefined) => Promise<Iterable<RowPositions>>;

/** Puffin files written at once: an upsert can touch thousands of data files. */
const PUFFIN_WRITES_IN_FLIGHT = 16;

export class RowDelta extends SnapshotProducer {
  readonly #dataFiles: DataFile[] = [];
  #deletes = new Map<string, RoaringPositionBitmap>();
  #planner: DeletePlanner | undefined;
  /** The parent the planner last planned on (null: no snapshot); undefined before the first plan. */
  #plannedOn: bigint | null | undefined;
  /** The DV each target data file had when the deletes were planned: a later change is a conflict. */
  #startingDVs: Map<string, string | undefined> | undefined;
  #dataManifests: Promise<NewManifestFile[]> | undefined;
  #written: Promise<{ deletes: NewManifestFile[]; dvs: WrittenDeletionVectors }> | undefined;

  addRows(...files: DataFile[]): this {
    this.#assertNotStarted();
    this.#dataFiles.push(...files);
    return this;
  }

  /** Deletes rows of a live data file by position (0-based row index in the file). */
  deleteRows(dataFilePath: string, positions: ArrayLike<number> | BigInt64Array | BigUint64Array): this {
    this.#assertNotStarted();
    if (this.#planner) throw new Error(`${this.table.name}: row delta has a delete planner; deleteRows is not allowed`);
    this.#addDeletes(dataFilePath, positions);
    return this;
  }

  /** The rows to delete come from `planner`, asked again at every attempt on a new parent. */
  deleteRowsPlannedOn(planner: DeletePlanner): this {
    this.#assertNotStarted();
    if (this.#deletes.size > 0) throw new Error(`${this.table.name}: row delta has deletes; a planner is not allowed`);
    this.#planner = planner;
    return this;
  }

  #addDeletes(dataFilePath: string, positions: ArrayLike<number> | BigInt64Array | BigUint64Array): void {
    let bitmap = this.#deletes.get(dataFilePath);
    if (!bitmap) {
      bitmap = new RoaringPositionBitmap();
      this.#deletes.set(dataFilePath, bitmap);
    }
    bitmap.addAll(positions);
  }

  protected get operation(): SnapshotOperation {
    if (this.#deletes.size === 0) return "append";
    return this.#dataFiles.length === 0 ? "delete" : "overwrite";
  }

  protected async apply(base: TableMetadata, parent: Snapshot | undefined): Promise<SnapshotChanges> {
    const parentId = parent?.snapshotId ?? null;
    if (this.#planner && this.#plannedOn !== parentId) {
      // Planned anew on this parent: its DVs are the ones the new positions were found with.
      this.#deletes = new Map();
      for (const { path, positions } of await this.#planner(base, parent)) this.#addDeletes(path, positions);
      this.#plannedOn = parentId;
      this.#startingDVs = undefined;
      this.#written = undefined;
    }
    const plan = await planFiles(this.table, parent);
    this.#validateDeletes(plan);
    this.#dataManifests ??= this.#writeDataManifests(base);
    this.#written ??= this.#writeDeletes(base, plan);
    const [data, written] = await Promise.all([this.#dataManifests, this.#written]);

    // The DVs the new ones supersede, as this attempt's plan finds them: validateDeletes() checked they
    // are the DVs whose positions the new ones include, and a manifest rewrite meanwhile (say,
    // rewrite_manifests) may have moved their entries to another manifest.
    const replaced: LiveFile<DeletionVectorFile | OtherDeleteFile>[] = [...this.#deletes.keys()].flatMap((path) => [
      ...[plan.deletionVectors.get(path) ?? []].flat(),
      ...(plan.positionDeletes.get(path) ?? []).filter(({ entry }) => positionDeleteTarget(entry.file) === path),
    ]);
    const summary = new SnapshotSummaryBuilder();
    for (const file of this.#dataFiles) summary.addedFile(file);
    for (const { file } of written.dvs) summary.addedFile(file);
    for (const { entry } of replaced) summary.removedFile(entry.file);

    const rewritten = await this.#removeReplacedDVs(base, replaced);
    const rewrittenPaths = new Set(replaced.map((r) => r.manifest.manifestPath));
    const kept = plan.manifests.filter((m) => !rewrittenPaths.has(m.manifestPath));
    const added = [...data, ...written.deletes];
    // Small manifests merged as Java's MergingSnapshotProducer does (manifest-merge.ts).
    return {
      manifests: await mergeManifests(this.table, base, this.snapshotId, [...added, ...rewritten, ...kept]),
      summary,
    };
  }

  #validateDeletes(plan: FileSnapshot): void {
    const first = this.#startingDVs === undefined;
    this.#startingDVs ??= new Map();
    for (const path of this.#deletes.keys()) {
      if (!plan.dataFiles.has(path)) {
        throw new ValidationError(
          `${this.table.name}: cannot delete rows of ${path}: it is not a live data file (removed or rewritten by another commit)`,
        );
      }
      const dv = plan.deletionVectors.get(path);
      const identity = dv && dvIdentity(dv.entry.file);
      if (first) this.#startingDVs.set(path, identity);
      else if (this.#startingDVs.get(path) !== identity) {
        throw new ValidationError(`${this.table.name}: another commit added a deletion vector for ${path} meanwhile`);
      }
    }
  }

  /** Written once: its ADDED entries inherit the sequence number, so every attempt reuses it. */
  #writeDataManifests(base: TableMetadata): Promise<NewManifestFile[]> {
    return writeDataManifests(this.table, base, this.snapshotId, this.#dataFiles);
  }

  async #writeDeletes(base: TableMetadata, plan: FileSnapshot) {
    const dvs = await this.#writeDeletionVectors(base, plan);
    // Spec: a manifest holds files of one partition spec, the one of the data files they delete from.
    const bySpec = Map.groupBy(dvs, (d) => d.specId);
    const deletes = await Promise.all(
      [...bySpec].map(([specId, ofSpec]) =>
        writeManifestFile(
          this.table,
          base,
          { content: ManifestContent.DELETES, snapshotId: this.snapshotId, specId },
          (writer) => {
            for (const { file } of ofSpec) writer.add(file);
          },
        ),
      ),
    );
    return { deletes, dvs };
  }

  /**
   * Writes each new DV as the only blob of its own Puffin file (the spec allows several per file).
   * DuckDB 1.5.5's iceberg extension misreads Puffin files of several DVs: it parses each DV from
   * the start of the byte range its file cache returns, and once that range spans earlier blobs
   * of the file, later DVs come back as the first one, deleting other rows of other data files.
   * A DV at offset 4 of its own file is read right by every reader; DuckDB writes them so too.
   */
  async #writeDeletionVectors(base: TableMetadata, plan: FileSnapshot): Promise<WrittenDeletionVectors> {
    const inputs: DeletionVectorInput[] = [];
    for (const [path, positions] of this.#deletes) {
      // The DV it replaces, else the position delete files that apply to the file.
      const previous = await deletedPositionsOf(this.table.io, plan, path);
      if (previous) positions.union(previous);
      inputs.push({ referencedDataFile: path, positions });
    }
    const written: WrittenDeletionVectors = [];
    for (let i = 0; i < inputs.length; i += PUFFIN_WRITES_IN_FLIGHT) {
      const batch = inputs.slice(i, i + PUFFIN_WRITES_IN_FLIGHT);
      written.push(...(await Promise.all(batch.map((input) => this.#writeDeletionVector(base, plan, input)))));
    }
    return written;
  }

  async #writeDeletionVector(base: TableMetadata, plan: FileSnapshot, input: DeletionVectorInput) {
    const {
      bytes,
      deletionVectors: [blob],
    } = writeDeletionVectorFile([input]);
    const location = newDataFileLocation(base, "puffin");
    await this.table.io.write(location, bytes);
    const target = plan.dataFiles.get(input.referencedDataFile)!;
    const file: DeletionVectorFile = {
      content: FileContent.POSITION_DELETES,
      fileFormat: "PUFFIN",
      filePath: location,
      partition: target.entry.file.partition,
      recordCount: BigInt(blob!.cardinality),
      fileSizeInBytes: BigInt(bytes.length),
      referencedDataFile: input.referencedDataFile,
      contentOffset: BigInt(blob!.offset),
      contentSizeInBytes: BigInt(blob!.length),
    };
    return { file, specId: target.manifest.partitionSpecId };
  }

  /** Rewrites each manifest holding a replaced DV or position delete file: that entry DELETED, the others EXISTING. */
  async #removeReplacedDVs(
    base: TableMetadata,
    replaced: LiveFile<DeletionVectorFile | OtherDeleteFile>[],
  ): Promise<NewManifestFile[]> {
    const byManifest = Map.groupBy(replaced, (r) => r.manifest.manifestPath);
    return Promise.all(
      [...byManifest.values()].map(async (group) => {
        const manifest = group[0]!.manifest;
        const gone = new Set(group.map((r) => dvIdentity(r.entry.file)));
        const entries = await readManifestEntries(this.table, manifest);
        return writeManifestFile(
          this.table,
          base,
          { content: ManifestContent.DELETES, snapshotId: this.snapshotId, specId: manifest.partitionSpecId },
          (writer) => {
            for (const entry of entries) {
              if (gone.has(dvIdentity(entry.file))) writer.delete(entry);
              else writer.existing(entry);
            }
          },
        );
      }),
    );
  }

  #assertNotStarted(): void {
    if (this.#dataManifests) throw new Error(`${this.table.name}: row delta changed after its commit started`);
  }
}

/** A DV is one blob of a Puffin file: the file and the blob's offset name it (a position delete file: its path). */
function dvIdentity(file: ContentFile): string {
  return `${file.filePath}#${file.content === FileContent.DATA ? "" : (file.contentOffset ?? "")}`;
}
