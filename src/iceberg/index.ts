// The face of iceberg/ to the floors above (job/, pipeline/, inspect/, runtime/, api/, cli/):
// the catalogs and their one error, a table and its commit operations, the files' IO, the
// error model, and the spec's types. What is not here is the folder's own business (Avro and
// Parquet encoding, manifest writing, the REST wire format); a floor above that needs more
// imports the file, and the need is a question for this list.

// Catalogs: which metadata file is a table's current state.
export {
  type Catalog,
  CatalogError,
  type CatalogMissing,
  CommitConflictError,
  identifierToString,
  isCatalogError,
  isNoSuch,
  type LoadedTable,
  namespaceToString,
  type TableCreation,
  type TableIdentifier,
} from "./catalog/catalog.ts";
export { type CatalogConfig, DEFAULT_CATALOG, loadCatalog } from "./catalog/load-catalog.ts";
export {
  connectRestCatalog,
  RestCatalog,
  type RestCatalogOptions,
  type RestCredential,
} from "./catalog/rest-catalog.ts";
export { openSqlCatalog, SqlCatalog } from "./catalog/sql-catalog.ts";
export type { UnityCredential } from "./catalog/unity.ts";
export { DeleteOrphanFiles } from "./commit/delete-orphan-files.ts";
export { ExpireSnapshots } from "./commit/expire-snapshots.ts";
export { FastAppend } from "./commit/fast-append.ts";
export { commitWithRetries } from "./commit/retry.ts";
export {
  type RewriteDataFilesOptions,
  type RewriteDataFilesResult,
  rewriteDataFiles,
} from "./commit/rewrite-data-files.ts";
export { RewriteFiles } from "./commit/rewrite-files.ts";
export { RewriteManifests } from "./commit/rewrite-manifests.ts";
export { RowDelta } from "./commit/row-delta.ts";
export { SchemaChange } from "./commit/update-schema.ts";
export { ValidationError } from "./commit/validation-error.ts";
export { writeDataFiles } from "./data-writer.ts";
// The error model every failure of the folder follows.
export { errorKind, IcebergError, type IcebergErrorKind, isRetryable } from "./errors.ts";
// Files: one FileIO over the local disk, S3, GCS and Azure Storage.
export type { FileIO, FileIOFactory } from "./io/file-io.ts";
export { StorageError, type StorageErrorKind } from "./io/storage-error.ts";
export { type StorageOptions, storageFileIO } from "./io/storage-file-io.ts";
// Reading a table's files.
export { type LiveFile, planFiles } from "./scan/plan-files.ts";
export { type Preview, previewRows } from "./scan/preview-rows.ts";
// The spec's types.
export type { DataFile, DeletionVectorFile, ManifestEntry, ManifestFile } from "./spec/manifest.ts";
export { type PartitionSpec, unpartitioned } from "./spec/partition-spec.ts";
export { findField, type Schema } from "./spec/schema.ts";
export { MAIN_BRANCH, type Snapshot } from "./spec/snapshot.ts";
export { currentSchema, currentSnapshot, defaultSpec, type TableMetadata } from "./spec/table-metadata.ts";
export * as TableProperties from "./spec/table-properties.ts";
export { PARQUET_CODECS, type ParquetCodec, propertyValue, type TableProperty } from "./spec/table-properties.ts";
export type { IcebergType, NestedField, PrimitiveType } from "./spec/types.ts";
// A table and the operations that commit to it (one per file in commit/, named as the spec's).
export { Table } from "./table.ts";
export {
  type RequestedWriteSettings,
  resolveWriteSettings,
  type WriteSettings,
  writeSettingsProperties,
} from "./write-settings.ts";
