// Table metadata files as metastore catalogs (Java's BaseMetastoreTableOperations, PyIceberg's
// MetastoreCatalog) name them: <metadata dir>/<NNNNN>-<uuid>.metadata.json, where NNNNN is one
// more than the version of the current file and the metadata dir is the `write.metadata.path`
// property or <table location>/metadata. Other writers derive their next version from our
// file names, so the pattern must be exact. Java may gzip them (write.metadata.compression-codec);
// such files are read by their gzip magic, whatever their name.
import { gunzipSync } from "node:zlib";
import { stringifyJson } from "../../lib/int64-json.ts";
import { decodingFile } from "../errors.ts";
import type { FileIO } from "../io/file-io.ts";
import { metadataDir } from "../locations.ts";
import { readJsonDocument } from "../spec/json.ts";
import { type TableMetadata, tableMetadataJson, tableMetadataToJson } from "../spec/table-metadata.ts";
import { propertyValue, WRITE_METADATA_PREVIOUS_VERSIONS_MAX } from "../spec/table-properties.ts";

export function metadataFileLocation(metadata: TableMetadata, version: number): string {
  return `${metadataDir(metadata)}/${String(version).padStart(5, "0")}-${crypto.randomUUID()}.metadata.json`;
}

/** The NNNNN of a metadata file name; -1 when the name does not follow the pattern. */
export function metadataFileVersion(location: string): number {
  const match = /(?:^|\/)(\d+)-[^/]*\.metadata\.json$/.exec(location);
  return match ? Number(match[1]) : -1;
}

/**
 * The metadata of the commit after `base`: its metadata-log gains the file `base` was read
 * from, trimmed to the newest write.metadata.previous-versions-max entries.
 */
export function withPreviousMetadataFile(
  next: TableMetadata,
  base: TableMetadata,
  baseLocation: string,
): TableMetadata {
  const max = propertyValue(next.properties, WRITE_METADATA_PREVIOUS_VERSIONS_MAX);
  const log = [...base.metadataLog, { timestampMs: base.lastUpdatedMs, metadataFile: baseLocation }];
  return { ...next, metadataLog: log.slice(Math.max(0, log.length - Math.max(1, max))) };
}

/** The metadata in the file at `location`; a file that is not table metadata is a corrupt IcebergError naming it. */
export async function readMetadataFile(io: FileIO, location: string): Promise<TableMetadata> {
  const bytes = await io.read(location);
  const gzipped = bytes[0] === 0x1f && bytes[1] === 0x8b;
  const text = decodingFile(location, () => new TextDecoder().decode(gzipped ? gunzipSync(bytes) : bytes));
  return readJsonDocument(tableMetadataJson, text, location);
}

export async function writeMetadataFile(io: FileIO, location: string, metadata: TableMetadata): Promise<void> {
  await io.write(location, new TextEncoder().encode(stringifyJson(tableMetadataToJson(metadata), { indent: 2 })));
}
