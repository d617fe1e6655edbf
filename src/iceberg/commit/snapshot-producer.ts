// The one way a snapshot is committed (spec "Snapshots"): per attempt, the operation builds
// its manifests over the refreshed parent, a manifest list is written with v3 row lineage
// (first_row_id from the table's next-row-id), and the catalog is asked to move `main` from
// that parent to the new snapshot. The snapshot id stays the same across attempts, so after
// an unknown outcome (5xx) finding it in the refreshed table means the commit landed.
//
// Spec "Commit Conflict Resolution and Retry": a retry must re-check the operation's
// assumptions against the new parent, not only rebuild the manifest list. A caller states its
// assumptions with validate() (throw ValidationError: the change cannot land on this parent)
// and derives parent-dependent summary properties with setFromParent(); both run at every
// attempt against the parent that attempt commits on.
//
// A caller may also set table properties in the same commit (setTablePropertiesFromParent): a
// `set-properties` update beside add-snapshot and set-snapshot-ref, so the properties change if
// and only if the snapshot lands, under the same assert-ref-snapshot-id requirement. What a
// summary records is lost when snapshot expiry removes the snapshot; a table property is not.

import type { NewManifestFile } from "../avro/manifest-writer.ts";
import { IcebergError } from "../errors.ts";
import type { ManifestFile } from "../spec/manifest.ts";
import { MAIN_BRANCH, newSnapshotId, type Snapshot, type SnapshotOperation } from "../spec/snapshot.ts";
import { currentSnapshot, snapshotById, type TableMetadata } from "../spec/table-metadata.ts";
import type { Table } from "../table.ts";
import { writeManifestListFile } from "./manifests.ts";
import { commitWithRetries } from "./retry.ts";
import type { SnapshotSummaryBuilder } from "./snapshot-summary.ts";

/** What one attempt contributes to the new snapshot. */
export interface SnapshotChanges {
  /** Every manifest of the new snapshot: the new ones and those kept from the parent. */
  manifests: (ManifestFile | NewManifestFile)[];
  summary: SnapshotSummaryBuilder;
}

/** A check of the parent an attempt commits on; throws ValidationError when the change must not land there. */
export type ParentValidation = (base: TableMetadata, parent: Snapshot | undefined) => void | Promise<void>;

export abstract class SnapshotProducer {
  readonly snapshotId: bigint = newSnapshotId();
  readonly #summaryProperties = new Map<string, string>();
  readonly #parentProperties: ((base: TableMetadata, parent: Snapshot | undefined) => Record<string, string>)[] = [];
  readonly #tableProperties: ((base: TableMetadata, parent: Snapshot | undefined) => Record<string, string>)[] = [];
  readonly #validations: ParentValidation[] = [];

  protected readonly table: Table;

  constructor(table: Table) {
    this.table = table;
  }

  protected abstract readonly operation: SnapshotOperation;

  /**
   * Builds the snapshot's manifests over `base`; called once per attempt. Throws
   * ValidationError when a concurrent commit invalidated the change.
   */
  protected abstract apply(
    base: TableMetadata,
    parent: Snapshot | undefined,
    sequenceNumber: bigint,
  ): Promise<SnapshotChanges>;

  /** Adds a property to the snapshot summary (e.g. the source offsets this commit absorbs). */
  set(key: string, value: string): this {
    this.#summaryProperties.set(key, value);
    return this;
  }

  /** Summary properties computed at every attempt from the parent it commits on. */
  setFromParent(properties: (base: TableMetadata, parent: Snapshot | undefined) => Record<string, string>): this {
    this.#parentProperties.push(properties);
    return this;
  }

  /**
   * Table properties set by the commit itself, computed at every attempt from the parent it
   * commits on: they land with the snapshot or not at all.
   */
  setTablePropertiesFromParent(
    properties: (base: TableMetadata, parent: Snapshot | undefined) => Record<string, string>,
  ): this {
    this.#tableProperties.push(properties);
    return this;
  }

  /** Runs `check` at every attempt, before the change is built on that attempt's parent. */
  validate(check: ParentValidation): this {
    this.#validations.push(check);
    return this;
  }

  async commit(): Promise<Snapshot> {
    await commitWithRetries(this.table, async (base, attempt) => {
      if (snapshotById(base, this.snapshotId)) return undefined;
      const parent = currentSnapshot(base);
      const sequenceNumber = base.lastSequenceNumber + 1n;
      for (const check of this.#validations) await check(base, parent);
      const changes = await this.apply(base, parent, sequenceNumber);
      // A parent's manifest whose every entry is DELETED holds no live file: it records those
      // deletions for the snapshot that made them, and is not carried further (as Java's
      // manifest filter drops it), or every later snapshot would list it forever.
      changes.manifests = changes.manifests.filter(
        (m) => m.addedSnapshotId === this.snapshotId || m.addedFilesCount + m.existingFilesCount > 0,
      );
      const { location, addedRows } = await writeManifestListFile(this.table, {
        snapshotId: this.snapshotId,
        parentSnapshotId: parent?.snapshotId,
        sequenceNumber,
        firstRowId: base.nextRowId,
        attempt,
        manifests: changes.manifests,
      });
      for (const [key, value] of this.#summaryProperties) changes.summary.set(key, value);
      for (const properties of this.#parentProperties) {
        for (const [key, value] of Object.entries(properties(base, parent))) changes.summary.set(key, value);
      }
      const snapshot: Snapshot = {
        snapshotId: this.snapshotId,
        ...(parent === undefined ? {} : { parentSnapshotId: parent.snapshotId }),
        sequenceNumber,
        timestampMs: BigInt(Date.now()),
        manifestList: location,
        summary: changes.summary.build(this.operation, parent),
        schemaId: base.currentSchemaId,
        firstRowId: base.nextRowId,
        addedRows,
      };
      const tableProperties: Record<string, string> = {};
      for (const properties of this.#tableProperties) Object.assign(tableProperties, properties(base, parent));
      return {
        requirements: [
          { type: "assert-table-uuid", uuid: base.tableUuid },
          { type: "assert-ref-snapshot-id", ref: MAIN_BRANCH, snapshotId: parent?.snapshotId ?? null },
        ],
        updates: [
          { action: "add-snapshot", snapshot },
          { action: "set-snapshot-ref", refName: MAIN_BRANCH, snapshotId: this.snapshotId, type: "branch" },
          ...(Object.keys(tableProperties).length > 0
            ? [{ action: "set-properties" as const, updates: tableProperties }]
            : []),
        ],
      };
    });
    const landed = snapshotById(this.table.metadata, this.snapshotId);
    if (!landed) {
      throw new IcebergError(
        "commit-state-unknown",
        `${this.table.name}: the catalog accepted the commit of snapshot ${this.snapshotId}, but the table metadata it answered does not hold it`,
      );
    }
    return landed;
  }
}
