// Databricks Unity Catalog as an Iceberg REST catalog: the endpoint is
// <workspace>/api/2.1/unity-catalog/iceberg-rest, the warehouse is the Unity catalog name,
// and storage access is delegated (X-Iceberg-Access-Delegation: vended-credentials), so the
// table's config carries short-lived cloud credentials. Authentication is a personal access
// token, or OAuth M2M: a service principal's client id/secret exchanged at
// <workspace>/oidc/v1/token for a token of scope all-apis.
import { IcebergError } from "../errors.ts";
import type { RestCatalogOptions } from "./rest-catalog.ts";

/** A personal access token, or a service principal's OAuth client id and secret (M2M). */
export type UnityCredential = { token: string } | { clientId: string; clientSecret: string };

export interface UnityOptions {
  /** https://<workspace>.cloud.databricks.com (any path or query, e.g. Azure's ?o=, is dropped). */
  workspaceUrl: string;
  /** The Unity catalog (three-level namespace: catalog.schema.table; floe's namespace is the schema). */
  catalog: string;
  credential: UnityCredential;
}

export const UNITY_ICEBERG_REST_PATH = "/api/2.1/unity-catalog/iceberg-rest";

export function unityCatalogOptions(options: UnityOptions): RestCatalogOptions {
  const workspace = workspaceOrigin(options.workspaceUrl);
  const credential = options.credential;
  return {
    name: options.catalog,
    uri: `${workspace}${UNITY_ICEBERG_REST_PATH}`,
    warehouse: options.catalog,
    credential:
      "token" in credential
        ? { token: credential.token }
        : {
            clientId: credential.clientId,
            clientSecret: credential.clientSecret,
            scope: "all-apis",
            oauth2ServerUri: `${workspace}/oidc/v1/token`,
          },
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
