// Builds a catalog from plain configuration (the job file's `catalog:` section maps onto it).
// With none configured, floe keeps its tables in ./warehouse with the embedded SQL catalog.
import type { FileIOFactory } from "../io/file-io.ts";
import type { Catalog } from "./catalog.ts";
import { connectRestCatalog, type RestCatalogOptions } from "./rest-catalog.ts";
import { openSqlCatalog, type SqlCatalogOptions } from "./sql-catalog.ts";
import { type UnityOptions, unityCatalogOptions } from "./unity.ts";

/** What configuration sets of each catalog's options; FileIO and retries are the caller's. */
type RestConfig = Pick<
  RestCatalogOptions,
  "name" | "uri" | "warehouse" | "credential" | "headers" | "properties" | "requestTimeoutMs"
>;
type SqlConfig = Pick<SqlCatalogOptions, "name" | "warehouse" | "uri">;

export type CatalogConfig =
  | ({ type: "rest" } & RestConfig)
  | ({ type: "unity" } & UnityOptions & Pick<RestCatalogOptions, "requestTimeoutMs">)
  | ({ type: "sql" } & SqlConfig);

export const DEFAULT_CATALOG: CatalogConfig = { type: "sql", name: "floe", warehouse: "./warehouse" };

export async function loadCatalog(
  config: CatalogConfig = DEFAULT_CATALOG,
  options: { fileIO?: FileIOFactory } = {},
): Promise<Catalog> {
  switch (config.type) {
    case "rest": {
      const { type: _, ...rest } = config;
      // As PyIceberg does: ask for the table's storage credentials; a catalog that vends none ignores it.
      const headers = { "X-Iceberg-Access-Delegation": "vended-credentials", ...rest.headers };
      return connectRestCatalog({ ...rest, headers, ...options });
    }
    case "unity": {
      const { type: _, requestTimeoutMs, ...unity } = config;
      return connectRestCatalog({
        ...unityCatalogOptions(unity),
        ...(requestTimeoutMs === undefined ? {} : { requestTimeoutMs }),
        ...options,
      });
    }
    case "sql": {
      const { type: _, ...sql } = config;
      return openSqlCatalog({ ...sql, ...options });
    }
  }
}
