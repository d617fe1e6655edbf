// Commits that other engines make, for the tests of what floe does with a table it shares: a
// snapshot that adds delete files (position deletes, or Flink's equality deletes) in a new delete
// manifest, keeping every manifest of its parent.
import { writeManifestFile } from "#src/iceberg/commit/manifests.ts";
import { type SnapshotChanges, SnapshotProducer } from "#src/iceberg/commit/snapshot-producer.ts";
import { SnapshotSummaryBuilder } from "#src/iceberg/commit/snapshot-summary.ts";
import { readManifestList } from "#src/iceberg/scan/read-manifests.ts";
import { type ContentFile, ManifestContent } from "#src/iceberg/spec/manifest.ts";
import type { Snapshot, SnapshotOperation } from "#src/iceberg/spec/snapshot.ts";
import type { TableMetadata } from "#src/iceberg/spec/table-metadata.ts";
import type { Table } from "#src/iceberg/table.ts";

/** Adds delete files the way another engine's commit does: a new delete manifest, the parent's kept. */
export class AddDeleteFiles extends SnapshotProducer {
  protected readonly operation: SnapshotOperation = "delete";
  readonly #files: ContentFile[];

  constructor(table: Table, files: ContentFile[]) {
    super(table);
    this.#files = files;
  }

  protected async apply(base: TableMetadata, parent: Snapshot | undefined): Promise<SnapshotChanges> {
    const summary = new SnapshotSummaryBuilder();
    for (const file of this.#files) summary.addedFile(file);
    const manifest = await writeManifestFile(
      this.table,
      base,
      { content: ManifestContent.DELETES, snapshotId: this.snapshotId },
      (writer) => {
        for (const file of this.#files) writer.add(file);
      },
    );
    const kept = parent ? await readManifestList(this.table, parent) : [];
    return { manifests: [manifest, ...kept], summary };
  }
}
