// Where new files go: `write.data.path` and `write.metadata.path` when the table sets them
// (spec "Table Properties"), else <table location>/data and <table location>/metadata. Names
// carry a random UUID, so concurrent writers and retried attempts never collide.
import type { TableMetadata } from "./spec/table-metadata.ts";

export function newDataFileLocation(metadata: TableMetadata, extension: "parquet" | "puffin"): string {
  const dir = metadata.properties["write.data.path"] ?? `${metadata.location}/data`;
  return `${dir.replace(/\/+$/, "")}/${crypto.randomUUID()}.${extension}`;
}

export function newMetadataFileLocation(metadata: TableMetadata, fileName: string): string {
  const dir = metadata.properties["write.metadata.path"] ?? `${metadata.location}/metadata`;
  return `${dir.replace(/\/+$/, "")}/${fileName}`;
}
