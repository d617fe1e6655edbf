// Where new files go: `write.data.path` and `write.metadata.path` when the table sets them
// (spec "Table Properties"), else <table location>/data and <table location>/metadata. Names
// carry a random UUID, so concurrent writers and retried attempts never collide.
import type { TableMetadata } from "./spec/table-metadata.ts";
import { propertyValue, WRITE_DATA_PATH, WRITE_METADATA_PATH } from "./spec/table-properties.ts";

export function newDataFileLocation(metadata: TableMetadata, extension: "parquet" | "puffin"): string {
  const dir = propertyValue(metadata.properties, WRITE_DATA_PATH) ?? `${metadata.location}/data`;
  return `${dir.replace(/\/+$/, "")}/${crypto.randomUUID()}.${extension}`;
}

export function newMetadataFileLocation(metadata: TableMetadata, fileName: string): string {
  return `${metadataDir(metadata)}/${fileName}`;
}

/** The folder of the table's metadata files, without a trailing slash. */
export function metadataDir(metadata: TableMetadata): string {
  const dir = propertyValue(metadata.properties, WRITE_METADATA_PATH) ?? `${metadata.location}/metadata`;
  return dir.replace(/\/+$/, "");
}
