// A table handle: the catalog it lives in, its current metadata, and the operations that
// change it, each one Iceberg commit (PyIceberg's Table, iceberg-rust's Transaction actions).
import type { Catalog, LoadedTable, TableIdentifier } from "./catalog/catalog.ts";
import { DeleteOrphanFiles } from "./commit/delete-orphan-files.ts";
import { ExpireSnapshots } from "./commit/expire-snapshots.ts";
import { FastAppend } from "./commit/fast-append.ts";
import type { RewriteDataFilesOptions, RewriteDataFilesResult } from "./commit/rewrite-data-files.ts";
import { RewriteFiles } from "./commit/rewrite-files.ts";
import { RewriteManifests } from "./commit/rewrite-manifests.ts";
import { RowDelta } from "./commit/row-delta.ts";
import { commitPartitionSpec, type UnboundPartitionField } from "./commit/update-partition-spec.ts";
import { commitProperties } from "./commit/update-properties.ts";
import { commitSchemaChange, SchemaChange } from "./commit/update-schema.ts";
import type { FileIO } from "./io/file-io.ts";
import { type ManifestCache, manifestCacheOf } from "./scan/manifest-cache.ts";
import type { TableMetadata } from "./spec/table-metadata.ts";
import type { TableRequirement, TableUpdate } from "./spec/table-update.ts";

export class Table {
  readonly #catalog: Catalog;
  #loaded: LoadedTable;

  constructor(catalog: Catalog, loaded: LoadedTable) {
    this.#catalog = catalog;
    this.#loaded = loaded;
  }

  static async load(catalog: Catalog, identifier: TableIdentifier): Promise<Table> {
    return new Table(catalog, await catalog.loadTable(identifier));
  }

  get identifier(): TableIdentifier {
    return this.#loaded.identifier;
  }

  /** `namespace.table`, for messages. */
  get name(): string {
    return [...this.#loaded.identifier.namespace, this.#loaded.identifier.name].join(".");
  }

  get metadata(): TableMetadata {
    return this.#loaded.metadata;
  }

  get metadataLocation(): string {
    return this.#loaded.metadataLocation;
  }

  get io(): FileIO {
    return this.#loaded.io;
  }

  /** What scans of the catalog's tables have read of manifests, shared by every handle of the catalog. */
  get manifestCache(): ManifestCache {
    return manifestCacheOf(this.#catalog);
  }

  async refresh(): Promise<this> {
    this.#loaded = await this.#catalog.loadTable(this.#loaded.identifier);
    return this;
  }

  /** Sends one commit to the catalog; operations call this, with retries, through commit/retry.ts. */
  async commit(requirements: TableRequirement[], updates: TableUpdate[]): Promise<void> {
    this.#loaded = await this.#catalog.commitTable(this.#loaded.identifier, requirements, updates);
  }

  newFastAppend(): FastAppend {
    return new FastAppend(this);
  }

  newRowDelta(): RowDelta {
    return new RowDelta(this);
  }

  /** A "replace" of data files by others holding the same live rows (Java's newRewrite()). */
  newRewriteFiles(): RewriteFiles {
    return new RewriteFiles(this);
  }

  /**
   * Compaction: bin-packs small files and files with many deleted rows into files of the target size.
   * Its module (a Parquet reader and writer, Arrow) is loaded on the first call: a handle that
   * only reads metadata or appends, as every sync does, never needs it.
   */
  async rewriteDataFiles(options: RewriteDataFilesOptions = {}): Promise<RewriteDataFilesResult> {
    const { rewriteDataFiles } = await import("./commit/rewrite-data-files.ts");
    return rewriteDataFiles(this, options);
  }

  rewriteManifests(): RewriteManifests {
    return new RewriteManifests(this);
  }

  expireSnapshots(): ExpireSnapshots {
    return new ExpireSnapshots(this);
  }

  deleteOrphanFiles(): DeleteOrphanFiles {
    return new DeleteOrphanFiles(this);
  }

  async updateSchema(change: (schema: SchemaChange) => void): Promise<void> {
    const schemaChange = new SchemaChange();
    change(schemaChange);
    await commitSchemaChange(this, schemaChange);
  }

  /** Partition evolution: new data follows `fields`; files already written keep their spec. */
  async updateSpec(fields: readonly UnboundPartitionField[]): Promise<void> {
    await commitPartitionSpec(this, fields);
  }

  async setProperties(updates: Record<string, string>, removals: string[] = []): Promise<void> {
    await commitProperties(this, updates, removals);
  }
}
