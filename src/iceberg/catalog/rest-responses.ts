// The response documents of the Iceberg REST catalog (open-api/rest-catalog-open-api.yaml) that
// floe reads, as schemas: what floe needs is required and of the spec's type, optional fields
// may be absent or null, and fields floe does not use are allowed and ignored. Where servers
// are known to leave out what the spec requires (a config without defaults or overrides, an
// error without its code), the field is optional. Table metadata inside a response is read by
// the same schema as a metadata file.
import type { z } from "zod";
import { array, int32, object, string, stringMap } from "../spec/json.ts";
import { tableMetadataJson } from "../spec/table-metadata.ts";

/** CatalogConfig, the answer of GET /v1/config. */
export const configResponseJson = object({
  defaults: stringMap.nullish(),
  overrides: stringMap.nullish(),
  endpoints: array(string).nullish(),
});
export type ConfigResponse = z.output<typeof configResponseJson>;

const storageCredentialJson = object({ prefix: string, config: stringMap });

/** LoadTableResult: loadTable and createTable. */
export const loadTableResultJson = object({
  "metadata-location": string.nullish(),
  metadata: tableMetadataJson,
  config: stringMap.nullish(),
  "storage-credentials": array(storageCredentialJson).nullish(),
});
export type LoadTableResult = z.output<typeof loadTableResultJson>;

/** LoadCredentialsResponse: the credentials endpoint of a table. */
export const loadCredentialsResponseJson = object({
  "storage-credentials": array(storageCredentialJson).nullish(),
});

/** CommitTableResponse: commitTable; no config, the table keeps that of its last load. */
export const commitTableResponseJson = object({
  "metadata-location": string,
  metadata: tableMetadataJson,
});

const nextPageToken = string.nullish();

/** ListNamespacesResponse; the spec requires no field, an absent list is empty. */
export const listNamespacesResponseJson = object({
  namespaces: array(array(string)).nullish(),
  "next-page-token": nextPageToken,
});

/** ListTablesResponse; the spec requires no field, an absent list is empty. */
export const listTablesResponseJson = object({
  identifiers: array(object({ namespace: array(string), name: string })).nullish(),
  "next-page-token": nextPageToken,
});

/** IcebergErrorResponse; its type and code are required by the spec, but only the message is needed. */
export const errorResponseJson = object({
  error: object({ message: string, type: string.nullish(), code: int32.nullish() }),
});
