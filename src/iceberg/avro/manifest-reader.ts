// Reads a manifest written by any Iceberg writer (floe, Java, PyIceberg; format v1 to v3):
// entries are resolved by the field ids of the file's own Avro schema, so field order, extra
// or missing optional fields and the partition struct of any spec are all accepted. Entries
// come back as stored (a null partition value as an absent key); inheritance.ts fills in what
// they inherit from the manifest list.
import { ManifestContent, type ManifestEntry } from "../spec/manifest.ts";
import { type IdStruct, idStructDecoder } from "./avro-value.ts";
import { readAvroFile } from "./container.ts";
import { entryFromStruct } from "./manifest-entry.ts";

export interface Manifest {
  /** The file's metadata: schema, schema-id, partition-spec, partition-spec-id, format-version, content. */
  metadata: ReadonlyMap<string, string>;
  content: ManifestContent;
  entries: ManifestEntry[];
}

export function readManifest(bytes: Uint8Array): Manifest {
  const file = readAvroFile(bytes);
  const decode = idStructDecoder(file.schema);
  return {
    metadata: file.metadata,
    // v1 manifests have no content key: they hold data files only.
    content: file.metadata.get("content") === "deletes" ? ManifestContent.DELETES : ManifestContent.DATA,
    entries: file.records.map((r) => entryFromStruct(decode(r) as IdStruct)),
  };
}
