// Databricks Unity Catalog as an Iceberg REST catalog: the endpoint is
// <workspace>/api/2.1/unity-catalog/iceberg-rest, the warehouse is the Unity catalog name,
// and storage access is delegated (X-Iceberg-Access-Delegation: vended-credentials), so the
// table's config carries short-lived cloud credentials. Authentication is a personal access
// token, or OAuth M2M: a service principal's client id/secret exchanged at
// <workspace>/oidc/v1/token for a token of scope all-apis.
import { IcebergError } from "../errors.ts";
import type { RestCatalogOptions } from "./rest-catalog.ts";

export interface UnityOptions {
  /** https://<workspace>.cloud.databricks.com (any path or query, e.g. Azure's ?o=, is dropped). */
  workspaceUrl: string;
  /** The Unity catalog (three-level namespace: catalog.schema.table; floe's namespace is the schema). */
  catalog: string;
  token?: string;
  clientId?: string;
  clientSecret?: string;
}

export const UNITY_ICEBERG_REST_PATH = "/api/2.1/unity-catalog/iceberg-rest";

export function unityCatalogOptions(options: UnityOptions): RestCatalogOptions {
  const workspace = workspaceOrigin(options.workspaceUrl);
  const oauth = options.clientId !== undefined || options.clientSecret !== undefined;
  if (options.token !== undefined && oauth) {
    throw new IcebergError(
      "validation",
      "unity catalog: give either a personal access token or an OAuth client id and secret, not both",
    );
  }
  if (oauth && (!options.clientId || !options.clientSecret)) {
    throw new IcebergError(
      "validation",
      "unity catalog: OAuth M2M needs both the service principal's client id and its secret",
    );
  }
  if (!oauth && !options.token) {
    throw new IcebergError(
      "validation",
      "unity catalog: give a personal access token, or an OAuth client id and secret",
    );
  }
  return {
    name: options.catalog,
    uri: `${workspace}${UNITY_ICEBERG_REST_PATH}`,
    warehouse: options.catalog,
    credential: oauth
      ? {
          clientId: options.clientId as string,
          clientSecret: options.clientSecret as string,
          scope: "all-apis",
          oauth2ServerUri: `${workspace}/oidc/v1/token`,
        }
      : { token: options.token as string },
    headers: { "X-Iceberg-Access-Delegation": "vended-credentials" },
  };
}

function workspaceOrigin(url: string): string {
  const withScheme = /^[a-z]+:\/\//i.test(url) ? url : `https://${url}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    throw new IcebergError("validation", `unity catalog: workspace URL ${JSON.stringify(url)} is not a URL`);
  }
  return parsed.origin;
}
