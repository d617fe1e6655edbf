// The Unity Catalog preset: what it derives from a workspace URL, a catalog name and a
// credential, checked without Databricks; then the same options driven against a local fake.
import assert from "node:assert/strict";
import { test } from "node:test";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { unityCatalogOptions } from "#src/iceberg/catalog/unity.ts";
import { fakeServer } from "./fake-http-server.ts";

test("a personal access token: endpoint, warehouse = catalog, vended credentials", () => {
  assert.deepEqual(
    unityCatalogOptions({
      workspaceUrl: "https://dbc-1234.cloud.databricks.com/",
      catalog: "main",
      credential: { token: "dapi1" },
    }),
    {
      name: "main",
      uri: "https://dbc-1234.cloud.databricks.com/api/2.1/unity-catalog/iceberg-rest",
      warehouse: "main",
      credential: { token: "dapi1" },
      headers: { "X-Iceberg-Access-Delegation": "vended-credentials" },
    },
  );
});

test("OAuth M2M: the workspace's OIDC token endpoint with scope all-apis", () => {
  const options = unityCatalogOptions({
    workspaceUrl: "adb-42.7.azuredatabricks.net/?o=42",
    catalog: "lake",
    credential: { clientId: "sp-id", clientSecret: "sp-secret" },
  });
  assert.equal(options.uri, "https://adb-42.7.azuredatabricks.net/api/2.1/unity-catalog/iceberg-rest");
  assert.deepEqual(options.credential, {
    clientId: "sp-id",
    clientSecret: "sp-secret",
    scope: "all-apis",
    oauth2ServerUri: "https://adb-42.7.azuredatabricks.net/oidc/v1/token",
  });
});

test("driven against a fake workspace: token from /oidc/v1/token, every request delegates access", async () => {
  const server = await fakeServer();
  try {
    const api = "/api/2.1/unity-catalog/iceberg-rest";
    server.routes.set("POST /oidc/v1/token", () => ({
      json: { access_token: "m2m-token", token_type: "Bearer", expires_in: 3600 },
    }));
    server.routes.set(`GET ${api}/v1/config`, () => ({
      json: { defaults: {}, overrides: { prefix: "catalogs/main" } },
    }));
    server.routes.set(`GET ${api}/v1/catalogs/main/namespaces`, () => ({ json: { namespaces: [["bronze"]] } }));
    const catalog = await connectRestCatalog(
      unityCatalogOptions({
        workspaceUrl: server.uri,
        catalog: "main",
        credential: { clientId: "sp", clientSecret: "pw" },
      }),
    );
    assert.deepEqual(await catalog.listNamespaces(), [["bronze"]]);
    const [token, config, list] = server.requests;
    assert.deepEqual(Object.fromEntries(new URLSearchParams(token?.body)), {
      grant_type: "client_credentials",
      client_id: "sp",
      client_secret: "pw",
      scope: "all-apis",
    });
    assert.equal(config?.url, `${api}/v1/config?warehouse=main`);
    for (const request of [config, list]) {
      assert.equal(request?.headers.authorization, "Bearer m2m-token");
      assert.equal(request?.headers["x-iceberg-access-delegation"], "vended-credentials");
    }
  } finally {
    await server.close();
  }
});
