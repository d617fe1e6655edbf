// Builds a catalog from plain configuration (the job file's `catalog:` section maps onto it).
// With none configured, floe keeps its tables in ./warehouse with the embedded SQL catalog.
import type { FileIOFactory } from "../io/file-io.ts";
import type { Catalog } from "./catalog.ts";
import { connectRestCatalog, type RestCredential } from "./rest-catalog.ts";
import { openSqlCatalog } from "./sql-catalog.ts";
import { type UnityOptions, unityCatalogOptions } from "./unity.ts";

export type CatalogConfig =
  | {
      type: "rest";
      name?: string;
      uri: string;
      warehouse?: string;
      credential?: RestCredential;
      headers?: Readonly<Record<string, string>>;
      properties?: Readonly<Record<string, string>>;
    }
  | ({ type: "unity" } & UnityOptions)
  | { type: "sql"; name?: string; warehouse: string; uri?: string };

export const DEFAULT_CATALOG: CatalogConfig = { type: "sql", name: "floe", warehouse: "./warehouse" };

export async function loadCatalog(
  config: CatalogConfig = DEFAULT_CATALOG,
  options: { fileIO?: FileIOFactory } = {},
): Promise<Catalog> {
  switch (config.type) {
    case "rest": {
      const { type: _, ...rest } = config;
      return connectRestCatalog({ ...rest, ...options });
    }
    case "unity": {
      const { type: _, ...unity } = config;
      return connectRestCatalog({ ...unityCatalogOptions(unity), ...options });
    }
    case "sql": {
      const { type: _, ...sql } = config;
      return openSqlCatalog({ ...sql, ...options });
    }
  }
}
