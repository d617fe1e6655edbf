// The snapshot summary, with the keys and the arithmetic of Java's SnapshotSummary, because
// engines (Spark's DESCRIBE HISTORY, Databricks, DuckDB's iceberg_snapshots) show them as-is.
// Totals carry over from the parent summary; a parent without totals leaves them out, as Java does.
import { type ContentFile, FileContent, isDeletionVector } from "../spec/manifest.ts";
import type { Snapshot, SnapshotOperation } from "../spec/snapshot.ts";

interface Counts {
  dataFiles: bigint;
  deleteFiles: bigint;
  dvs: bigint;
  positionDeleteFiles: bigint;
  equalityDeleteFiles: bigint;
  records: bigint;
  positionDeletes: bigint;
  equalityDeletes: bigint;
  filesSize: bigint;
}

const zero = (): Counts => ({
  dataFiles: 0n,
  deleteFiles: 0n,
  dvs: 0n,
  positionDeleteFiles: 0n,
  equalityDeleteFiles: 0n,
  records: 0n,
  positionDeletes: 0n,
  equalityDeletes: 0n,
  filesSize: 0n,
});

function count(into: Counts, file: ContentFile): void {
  into.filesSize += file.fileSizeInBytes;
  if (file.content === FileContent.DATA) {
    into.dataFiles += 1n;
    into.records += file.recordCount;
    return;
  }
  into.deleteFiles += 1n;
  if (file.content === FileContent.EQUALITY_DELETES) {
    into.equalityDeleteFiles += 1n;
    into.equalityDeletes += file.recordCount;
    return;
  }
  if (isDeletionVector(file)) into.dvs += 1n;
  else into.positionDeleteFiles += 1n;
  into.positionDeletes += file.recordCount;
}

export class SnapshotSummaryBuilder {
  readonly #added = zero();
  readonly #removed = zero();
  readonly #properties: Record<string, string> = {};

  addedFile(file: ContentFile): this {
    count(this.#added, file);
    return this;
  }

  removedFile(file: ContentFile): this {
    count(this.#removed, file);
    return this;
  }

  /** Caller-supplied keys (e.g. the Kafka offsets a sync absorbed). They never override counts. */
  set(key: string, value: string): this {
    this.#properties[key] = value;
    return this;
  }

  build(operation: SnapshotOperation, parent: Snapshot | undefined): Snapshot["summary"] {
    const a = this.#added;
    const r = this.#removed;
    const summary: Record<string, string> = { ...this.#properties };
    const put = (key: string, value: bigint) => {
      if (value > 0n) summary[key] = value.toString();
    };
    put("added-data-files", a.dataFiles);
    put("deleted-data-files", r.dataFiles);
    put("added-records", a.records);
    put("deleted-records", r.records);
    put("added-files-size", a.filesSize);
    put("removed-files-size", r.filesSize);
    put("added-delete-files", a.deleteFiles);
    put("removed-delete-files", r.deleteFiles);
    put("added-dvs", a.dvs);
    put("removed-dvs", r.dvs);
    put("added-position-delete-files", a.positionDeleteFiles);
    put("removed-position-delete-files", r.positionDeleteFiles);
    put("added-equality-delete-files", a.equalityDeleteFiles);
    put("removed-equality-delete-files", r.equalityDeleteFiles);
    put("added-position-deletes", a.positionDeletes);
    put("removed-position-deletes", r.positionDeletes);
    put("added-equality-deletes", a.equalityDeletes);
    put("removed-equality-deletes", r.equalityDeletes);

    const totals: [string, bigint, bigint][] = [
      ["total-records", a.records, r.records],
      ["total-files-size", a.filesSize, r.filesSize],
      ["total-data-files", a.dataFiles, r.dataFiles],
      ["total-delete-files", a.deleteFiles, r.deleteFiles],
      ["total-position-deletes", a.positionDeletes, r.positionDeletes],
      ["total-equality-deletes", a.equalityDeletes, r.equalityDeletes],
    ];
    for (const [key, plus, minus] of totals) {
      const previous = parent === undefined ? "0" : parent.summary[key];
      if (previous !== undefined) summary[key] = (BigInt(previous) + plus - minus).toString();
    }
    return { ...summary, operation };
  }
}
