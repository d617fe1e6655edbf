// FastAppend (Java's FastAppend, spec operation "append"): new data files go into one new
// manifest per partition spec they follow; the parent's manifests are kept as they are, unless the table's manifest-merge
// properties merge small ones as Java's MergeAppend does (manifest-merge.ts).
import type { NewManifestFile } from "../avro/manifest-writer.ts";
import { readManifestList } from "../scan/read-manifests.ts";
import type { DataFile } from "../spec/manifest.ts";
import type { Snapshot, SnapshotOperation } from "../spec/snapshot.ts";
import type { TableMetadata } from "../spec/table-metadata.ts";
import { mergeManifests } from "./manifest-merge.ts";
import { writeDataManifests } from "./manifests.ts";
import { type SnapshotChanges, SnapshotProducer } from "./snapshot-producer.ts";
import { SnapshotSummaryBuilder } from "./snapshot-summary.ts";

export class FastAppend extends SnapshotProducer {
  protected readonly operation: SnapshotOperation = "append";
  readonly #files: DataFile[] = [];
  #manifests: Promise<NewManifestFile[]> | undefined;

  appendFile(...files: DataFile[]): this {
    if (this.#manifests) throw new Error(`${this.table.name}: files appended after the commit started`);
    this.#files.push(...files);
    return this;
  }

  protected async apply(base: TableMetadata, parent: Snapshot | undefined): Promise<SnapshotChanges> {
    const summary = new SnapshotSummaryBuilder();
    const kept = parent ? await readManifestList(this.table, parent) : [];
    if (this.#files.length === 0) return { manifests: kept, summary };
    // Written once: its ADDED entries inherit the sequence number, so retries reuse it.
    this.#manifests ??= writeDataManifests(this.table, base, this.snapshotId, this.#files);
    for (const file of this.#files) summary.addedFile(file);
    return {
      manifests: await mergeManifests(this.table, base, this.snapshotId, [...(await this.#manifests), ...kept]),
      summary,
    };
  }
}
