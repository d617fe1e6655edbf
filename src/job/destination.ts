// A destination: the Iceberg catalog a job writes to, its storage, and the engines that will
// read the tables, as the job file's `destination.iceberg` describes them. The catalog's rules
// (which credentials go together, what unity needs) are checked here and nowhere else. The
// credential types are iceberg/'s own, with their secrets held as Secrets until sync/ hands
// them to the client.
//
// destination.iceberg also holds the job's namespace: job-schema.ts adds it, and it belongs to
// the job (its default is named after the job).
import { z } from "zod";
import type { RestCredential } from "../iceberg/catalog/rest-catalog.ts";
import type { UnityCredential } from "../iceberg/catalog/unity.ts";
import { PARQUET_CODECS, type ParquetCodec } from "../iceberg/spec/table-properties.ts";
import { duration, nonEmpty, secret } from "./schema-parts.ts";
import type { Sealed, Secret } from "./secret.ts";
import { type StorageSettings, storageSchema, storageSettings } from "./storage.ts";
import { TARGET_ENGINES, type TargetEngine } from "./target-engines.ts";

/** An Iceberg catalog, and how floe writes the tables it keeps there. */
export interface Destination {
  readonly catalog: CatalogSettings;
  readonly targetEngines: readonly TargetEngine[];
  /** Absent: the table's write.target-file-size-bytes, else its default (iceberg/write-settings.ts). */
  readonly targetFileSizeBytes: number | undefined;
  /** Absent: the table's write.parquet.compression-codec, else its default. */
  readonly compression: ParquetCodec | undefined;
  /** How floe reaches the object store; absent: vended credentials or the store's SDK chain. */
  readonly storage?: StorageSettings;
}

export type CatalogSettings =
  | {
      readonly type: "rest";
      readonly uri: string;
      readonly warehouse: string | undefined;
      readonly credential: Sealed<RestCredential> | undefined;
      /** Waiting for the catalog's answer to one request, connecting included. */
      readonly requestTimeoutMs: number;
    }
  | {
      readonly type: "unity";
      readonly workspaceUrl: string;
      readonly catalog: string;
      readonly credential: Sealed<UnityCredential>;
      readonly requestTimeoutMs: number;
    }
  /** The embedded catalog: SQLite in the warehouse folder (an absolute path once loaded, or a URI such as s3://). */
  | { readonly type: "sql"; readonly warehouse: string; readonly uri?: string | undefined };

const MIB = 1024 * 1024;

function catalogRequestTimeout() {
  return duration("30s", "Waiting for the catalog's answer to a request (connecting included).");
}

const restCatalog = z
  .strictObject({
    type: z.literal("rest"),
    uri: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }),
    warehouse: nonEmpty.optional(),
    token: secret.optional().describe("Bearer token; or client_id + client_secret for OAuth2."),
    client_id: nonEmpty.optional(),
    client_secret: secret.optional(),
    scope: nonEmpty.optional().describe("OAuth2 scope (default PRINCIPAL_ROLE:ALL)."),
    oauth2_server_uri: nonEmpty.optional().describe("OAuth2 token endpoint (default <uri>/v1/oauth/tokens)."),
    request_timeout: catalogRequestTimeout(),
  })
  .superRefine((c, ctx) => {
    checkCredential(c, ctx);
    if (c.client_id === undefined) {
      for (const key of ["scope", "oauth2_server_uri"] as const) {
        if (c[key] !== undefined) ctx.addIssue({ code: "custom", path: [key], message: "only used with client_id" });
      }
    }
  });

const unityCatalog = z
  .strictObject({
    type: z.literal("unity"),
    workspace_url: nonEmpty.describe("https://<workspace>.cloud.databricks.com"),
    catalog: nonEmpty.describe("The Unity catalog; the namespace is a schema in it."),
    token: secret.optional().describe("Personal access token; or client_id + client_secret (service principal)."),
    client_id: nonEmpty.optional(),
    client_secret: secret.optional(),
    request_timeout: catalogRequestTimeout(),
  })
  .superRefine((c, ctx) => {
    checkCredential(c, ctx);
    if (c.token === undefined && c.client_id === undefined && c.client_secret === undefined) {
      ctx.addIssue({ code: "custom", path: ["token"], message: "unity needs token, or client_id and client_secret" });
    }
  });

const sqlCatalog = z.strictObject({
  type: z.literal("sql"),
  warehouse: nonEmpty.default("./warehouse").describe("Folder (relative to the job file) or URI of the warehouse."),
  uri: nonEmpty
    .optional()
    .describe("The SQLite database file. Default <warehouse>/catalog.db; required with an object-store warehouse."),
});

/** The keys of destination.iceberg that describe the catalog and the tables' files. */
export const icebergDestinationShape = {
  catalog: z
    .discriminatedUnion("type", [restCatalog, unityCatalog, sqlCatalog])
    .prefault({ type: "sql" })
    .describe("Default: the embedded SQL catalog in ./warehouse."),
  target_engines: z
    .array(z.enum(TARGET_ENGINES))
    .default([])
    .describe("Engines that read the tables; floe refuses what one of them cannot read."),
  target_file_size_bytes: z
    .int()
    .min(MIB, "at least 1 MiB (1048576)")
    .optional()
    .describe("Recorded on each table as write.target-file-size-bytes; absent: the table's, else 128 MiB."),
  compression: z
    .enum(PARQUET_CODECS)
    .optional()
    .describe(
      "Parquet codec, recorded on each table as write.parquet.compression-codec; absent: the table's, else zstd.",
    ),
  storage: storageSchema.optional(),
};

/** A destination on its own (kept apart from the jobs that write to it). */
export const icebergDestination = z.strictObject(icebergDestinationShape);
type IcebergDestinationInput = z.output<typeof icebergDestination>;
type CatalogInput = IcebergDestinationInput["catalog"];

type Credentials = { token?: Secret | undefined; client_id?: string | undefined; client_secret?: Secret | undefined };

/** A token, or a client id with its secret: one of the two, and each half of the second with the other. */
function checkCredential(c: Credentials, ctx: z.RefinementCtx): void {
  if (c.token !== undefined && (c.client_id !== undefined || c.client_secret !== undefined)) {
    ctx.addIssue({ code: "custom", path: ["token"], message: "give token or client_id + client_secret, not both" });
  }
  if (c.client_id !== undefined && c.client_secret === undefined) {
    ctx.addIssue({ code: "custom", path: ["client_secret"], message: "required with client_id" });
  }
  if (c.client_secret !== undefined && c.client_id === undefined) {
    ctx.addIssue({ code: "custom", path: ["client_id"], message: "required with client_secret" });
  }
}

/** The validated keys as a Destination. */
export function toDestination(i: IcebergDestinationInput): Destination {
  return {
    catalog: catalogSettings(i.catalog),
    targetEngines: i.target_engines,
    targetFileSizeBytes: i.target_file_size_bytes,
    compression: i.compression,
    ...(i.storage === undefined ? {} : { storage: storageSettings(i.storage) }),
  };
}

function catalogSettings(c: CatalogInput): CatalogSettings {
  switch (c.type) {
    case "rest": {
      let credential: Sealed<RestCredential> | undefined;
      if (c.token !== undefined) credential = { token: c.token };
      else if (c.client_id !== undefined && c.client_secret !== undefined) {
        credential = {
          clientId: c.client_id,
          clientSecret: c.client_secret,
          scope: c.scope,
          oauth2ServerUri: c.oauth2_server_uri,
        };
      }
      return { type: "rest", uri: c.uri, warehouse: c.warehouse, credential, requestTimeoutMs: c.request_timeout };
    }
    case "unity":
      // checkCredential and the unity rule guarantee a token, or a client id with its secret.
      return {
        type: "unity",
        workspaceUrl: c.workspace_url,
        catalog: c.catalog,
        credential:
          c.token !== undefined ? { token: c.token } : { clientId: c.client_id!, clientSecret: c.client_secret! },
        requestTimeoutMs: c.request_timeout,
      };
    case "sql":
      return { type: "sql", warehouse: c.warehouse, ...(c.uri === undefined ? {} : { uri: c.uri }) };
  }
}
