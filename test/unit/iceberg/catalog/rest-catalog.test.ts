// The REST client against a scripted local server: config merging, routes, status mapping,
// retries, authentication renewal, and what errors say (and never say).

import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { CommitConflictError, isCatalogError, isNoSuch } from "#src/iceberg/catalog/catalog.ts";
import { connectRestCatalog, type RestCatalogOptions } from "#src/iceberg/catalog/rest-catalog.ts";
import { errorKind } from "#src/iceberg/errors.ts";
import type { FileIO } from "#src/iceberg/io/file-io.ts";
import { type FakeServer, fakeServer, icebergError, tableMetadataJson } from "./fake-http-server.ts";

let server: FakeServer;
const id = { namespace: ["kafka_topics"], name: "orders" };
const tablePath = "/v1/namespaces/kafka_topics/tables/orders";
const fastRetry = { attempts: 3, initialDelayMs: 1 };

beforeEach(async () => {
  server = await fakeServer();
  server.routes.set("GET /v1/config", () => ({ json: { defaults: {}, overrides: {} } }));
});
afterEach(() => server.close());

function connect(options: Partial<RestCatalogOptions> = {}) {
  return connectRestCatalog({ uri: server.uri, retry: fastRetry, ...options });
}

test("config: defaults < client properties < overrides; prefix and separator shape the routes", async () => {
  server.routes.set("GET /v1/config", () => ({
    json: {
      defaults: { "write.a": "default", "write.b": "default", prefix: "ignored" },
      overrides: { prefix: "catalogs/main", "namespace-separator": "%2E", "write.c": "override" },
      endpoints: ["HEAD /v1/{prefix}/namespaces/{namespace}"],
    },
  }));
  server.routes.set("HEAD /v1/catalogs/main/namespaces/a%2Eb", () => ({ status: 204 }));
  const catalog = await connect({ warehouse: "main", properties: { "write.b": "client", "write.c": "client" } });
  assert.equal(server.requests[0]?.url, "/v1/config?warehouse=main");
  assert.deepEqual(
    { a: catalog.properties["write.a"], b: catalog.properties["write.b"], c: catalog.properties["write.c"] },
    { a: "default", b: "client", c: "override" },
  );
  assert.equal(await catalog.namespaceExists(["a", "b"]), true);
  assert.equal(server.requests[1]?.method, "HEAD");
});

test("without HEAD among the endpoints, existence checks use GET; 404 means absent", async () => {
  server.routes.set("GET /v1/config", () => ({ json: { defaults: {}, overrides: {}, endpoints: [] } }));
  const catalog = await connect();
  assert.equal(await catalog.tableExists(id), false);
  assert.equal(server.requests.at(-1)?.method, "GET");
  assert.equal(server.requests.at(-1)?.url, tablePath);
});

test("headers and the bearer token go with every request; listings follow next-page-token", async () => {
  server.routes.set("GET /v1/namespaces/kafka_topics/tables", (request) =>
    request.url.includes("pageToken=p2")
      ? { json: { identifiers: [{ namespace: ["kafka_topics"], name: "b" }], "next-page-token": null } }
      : { json: { identifiers: [{ namespace: ["kafka_topics"], name: "a" }], "next-page-token": "p2" } },
  );
  const catalog = await connect({
    credential: { token: "pat-123" },
    headers: { "X-Iceberg-Access-Delegation": "vended-credentials" },
  });
  const tables = await catalog.listTables(["kafka_topics"]);
  assert.deepEqual(
    tables.map((t) => t.name),
    ["a", "b"],
  );
  for (const request of server.requests) {
    assert.equal(request.headers.authorization, "Bearer pat-123");
    assert.equal(request.headers["x-iceberg-access-delegation"], "vended-credentials");
  }
});

test("loadTable keeps int64 ids exact and builds the FileIO from catalog, table and storage credentials", async () => {
  const big = "9007199254740993"; // 2^53 + 1: a double would round it
  server.routes.set("GET /v1/config", () => ({ json: { defaults: { "client.region": "eu-west-1" }, overrides: {} } }));
  server.routes.set(`GET ${tablePath}`, () => ({
    json: `{"metadata-location":"/warehouse/ns/t/metadata/00001-x.metadata.json",
      "metadata":${JSON.stringify(tableMetadataJson()).replace(/}$/, "")},
        "current-snapshot-id":${big},
        "refs":{"main":{"snapshot-id":${big},"type":"branch"}},
        "snapshots":[{"snapshot-id":${big},"sequence-number":1,"timestamp-ms":1700000000000,
          "manifest-list":"/m.avro","summary":{"operation":"append"},"first-row-id":0,"added-rows":0}]},
      "config":{"s3.access-key-id":"table-key","s3.session-token":"t1"},
      "storage-credentials":[
        {"prefix":"/warehouse","config":{"s3.access-key-id":"wide-key"}},
        {"prefix":"/warehouse/ns","config":{"s3.access-key-id":"narrow-key"}},
        {"prefix":"/elsewhere","config":{"s3.access-key-id":"other-key"}}]}`,
  }));
  const built: { location: string; properties: Readonly<Record<string, string>> }[] = [];
  const catalog = await connect({
    fileIO: (location, properties) => {
      built.push({ location, properties });
      return {} as FileIO;
    },
  });
  const table = await catalog.loadTable(id);
  assert.equal(table.metadata.currentSnapshotId, 9007199254740993n);
  assert.equal(table.metadata.refs.main?.snapshotId, 9007199254740993n);
  assert.equal(table.metadataLocation, "/warehouse/ns/t/metadata/00001-x.metadata.json");
  assert.deepEqual(built, [
    {
      location: "/warehouse/ns/t",
      properties: { "client.region": "eu-west-1", "s3.access-key-id": "narrow-key", "s3.session-token": "t1" },
    },
  ]);
});

test("a commit sends identifier, requirements and updates with exact int64s", async () => {
  server.routes.set(`POST ${tablePath}`, () => ({
    json: { "metadata-location": "/m/00002-y.metadata.json", metadata: tableMetadataJson({ properties: { k: "v" } }) },
  }));
  const catalog = await connect();
  const result = await catalog.commitTable(
    id,
    [{ type: "assert-ref-snapshot-id", ref: "main", snapshotId: 9007199254740993n }],
    [{ action: "set-properties", updates: { k: "v" } }],
  );
  assert.equal(result.metadata.properties.k, "v");
  const body = server.requests.at(-1)?.body ?? "";
  assert.ok(body.includes('"snapshot-id":9007199254740993'), body);
  assert.deepEqual(JSON.parse(body.replace(/9007199254740993/, '"big"')), {
    identifier: { namespace: ["kafka_topics"], name: "orders" },
    requirements: [{ type: "assert-ref-snapshot-id", ref: "main", "snapshot-id": "big" }],
    updates: [{ action: "set-properties", updates: { k: "v" } }],
  });
});

test("a response that is not the spec's document is corrupt, naming the call, the URL and the JSON path", async () => {
  const url = `${server.uri}${tablePath}`;
  const noUuid = tableMetadataJson();
  delete noUuid["table-uuid"];
  const cases: [() => Promise<unknown>, string, () => void][] = [
    [
      () => catalog.loadTable(id),
      `loadTable kafka_topics.orders: the catalog's LoadTableResult (${url}): metadata.table-uuid: expected a string, got nothing`,
      () => server.routes.set(`GET ${tablePath}`, () => ({ json: { metadata: noUuid } })),
    ],
    [
      () => catalog.loadTable(id),
      `loadTable kafka_topics.orders: the catalog's LoadTableResult (${url}): metadata.last-column-id: expected a 32-bit integer, got nothing`,
      () => {
        const noLastColumnId = tableMetadataJson();
        delete noLastColumnId["last-column-id"];
        server.routes.set(`GET ${tablePath}`, () => ({ json: { metadata: noLastColumnId } }));
      },
    ],
    [
      () => catalog.loadTable(id),
      `loadTable kafka_topics.orders: the catalog's LoadTableResult (${url}): metadata.format-version: expected 1, 2 or 3, got nothing`,
      () => server.routes.set(`GET ${tablePath}`, () => ({ json: { metadata: {} } })),
    ],
    [
      () => catalog.loadTable(id),
      `loadTable kafka_topics.orders: the catalog's LoadTableResult (${url}): config["s3.region"]: expected a string, got 1`,
      () =>
        server.routes.set(`GET ${tablePath}`, () => ({
          json: { metadata: tableMetadataJson(), config: { "s3.region": 1 } },
        })),
    ],
    [
      () => catalog.commitTable(id, [], [{ action: "set-properties", updates: { k: "v" } }]),
      `commitTable kafka_topics.orders: the catalog's CommitTableResponse (${url}): metadata-location: expected a string, got nothing`,
      () => server.routes.set(`POST ${tablePath}`, () => ({ json: { metadata: tableMetadataJson() } })),
    ],
    [
      () => catalog.listTables(["kafka_topics"]),
      `listTables kafka_topics: the catalog's ListTablesResponse (${server.uri}/v1/namespaces/kafka_topics/tables): identifiers[0].name: expected a string, got nothing`,
      () =>
        server.routes.set("GET /v1/namespaces/kafka_topics/tables", () => ({
          json: { identifiers: [{ namespace: ["kafka_topics"] }] },
        })),
    ],
    [
      () => catalog.listNamespaces(),
      `listNamespaces: the catalog's ListNamespacesResponse (${server.uri}/v1/namespaces): namespaces: expected an array, got an object`,
      () => server.routes.set("GET /v1/namespaces", () => ({ json: { namespaces: { a: 1 } } })),
    ],
  ];
  const catalog = await connect();
  for (const [call, message, route] of cases) {
    route();
    await assert.rejects(call(), (error: unknown) => {
      assert.equal(errorKind(error), "corrupt", String(error));
      assert.equal((error as Error).message, message);
      return true;
    });
  }
});

test("a config whose properties are not strings is corrupt; a non-object config is not an Iceberg endpoint", async () => {
  server.routes.set("GET /v1/config", () => ({ json: { defaults: { prefix: 7 } } }));
  await assert.rejects(connect(), (error: unknown) => {
    assert.equal(errorKind(error), "corrupt", String(error));
    assert.equal(
      (error as Error).message,
      `getConfig: the catalog's ConfigResponse (${server.uri}/v1/config): defaults.prefix: expected a string, got 7`,
    );
    return true;
  });
});

test("commit statuses: 409 conflict, 500/502/503/504 unknown, 404 no table, 400 bad request", async () => {
  const catalog = await connect();
  const commit = () => catalog.commitTable(id, [], [{ action: "set-properties", updates: {} }]);
  const unknown = (e: unknown) => isCatalogError(e, "commit-state-unknown");
  const cases: [number, string, (error: unknown) => boolean][] = [
    [409, "CommitFailedException", (e) => e instanceof CommitConflictError],
    [500, "CommitStateUnknownException", unknown],
    [502, "CommitStateUnknownException", unknown],
    [503, "SlowDownException", unknown],
    [504, "CommitStateUnknownException", unknown],
    [404, "NoSuchTableException", (e) => isNoSuch(e, "table")],
    [400, "BadRequestException", (e) => isCatalogError(e, "validation") && e.status === 400],
  ];
  for (const [status, type, expected] of cases) {
    const before = server.requests.length;
    server.routes.set(`POST ${tablePath}`, () => icebergError(status, type, `server says ${status}`));
    await assert.rejects(commit(), (error: unknown) => {
      assert.ok(expected(error), `${status}: ${String(error)}`);
      assert.match((error as Error).message, /^commitTable kafka_topics\.orders: /);
      assert.match((error as Error).message, new RegExp(`server says ${status}`));
      return true;
    });
    assert.equal(server.requests.length, before + 1, `HTTP ${status}: a commit is never sent twice`);
  }
});

test("a connection cut mid-commit leaves the commit state unknown", async () => {
  server.routes.set(`POST ${tablePath}`, () => "cut");
  const catalog = await connect();
  await assert.rejects(catalog.commitTable(id, [], []), (error: unknown) => {
    assert.ok(isCatalogError(error, "commit-state-unknown"), String(error));
    assert.match(error.message, /broke mid-request.*reload the table/);
    return true;
  });
});

test("GET is retried on 503 and on a cut connection; POST is not", async () => {
  server.routes.set(`GET ${tablePath}`, (_request, seen) =>
    seen === 1
      ? icebergError(503, "SlowDownException", "slow down")
      : seen === 2
        ? "cut"
        : { json: { "metadata-location": "/m.json", metadata: tableMetadataJson() } },
  );
  server.routes.set("POST /v1/namespaces", () => icebergError(503, "SlowDownException", "slow down"));
  const catalog = await connect();
  assert.equal((await catalog.loadTable(id)).metadataLocation, "/m.json");
  await assert.rejects(catalog.createNamespace(["x"]), (e) => isCatalogError(e, "io") && e.status === 503);
  assert.equal(server.requests.filter((r) => r.method === "POST").length, 1);
});

test("404, 409 and not-empty map to the catalog's error kinds", async () => {
  server.routes.set("GET /v1/namespaces/missing/tables", () =>
    icebergError(404, "NoSuchNamespaceException", "Namespace does not exist: missing"),
  );
  server.routes.set("POST /v1/namespaces", () => icebergError(409, "AlreadyExistsException", "exists"));
  server.routes.set("POST /v1/namespaces/missing/tables", () =>
    icebergError(404, "NoSuchNamespaceException", "Namespace does not exist: missing"),
  );
  server.routes.set("POST /v1/namespaces/kafka_topics/tables", () =>
    icebergError(409, "AlreadyExistsException", "exists"),
  );
  server.routes.set("DELETE /v1/namespaces/kafka_topics", () =>
    icebergError(409, "NamespaceNotEmptyException", "Namespace kafka_topics is not empty"),
  );
  const catalog = await connect();
  const table = { schema: { schemaId: 0, fields: [] }, spec: { specId: 0, fields: [] } };
  await assert.rejects(catalog.listTables(["missing"]), /^CatalogError: listTables missing: Namespace/);
  await assert.rejects(catalog.listTables(["missing"]), (e) => isNoSuch(e, "namespace"));
  await assert.rejects(catalog.createNamespace(["kafka_topics"]), (e) => isCatalogError(e, "already-exists"));
  await assert.rejects(catalog.createTable({ namespace: ["missing"], name: "t" }, table), (e) =>
    isNoSuch(e, "namespace"),
  );
  await assert.rejects(catalog.createTable(id, table), (e) => isCatalogError(e, "already-exists"));
  await assert.rejects(
    catalog.dropNamespace(["kafka_topics"]),
    (e) => isCatalogError(e, "validation") && /not empty|still holds/.test(String(e)),
  );
  await assert.rejects(catalog.loadTable(id), (e) => isNoSuch(e, "table"));
});

test("401 with a static token: an auth CatalogError naming call and URL, without the token", async () => {
  const token = "dapi-super-secret";
  server.routes.set(`GET ${tablePath}`, () => icebergError(401, "NotAuthorizedException", `bad token ${token}`));
  const catalog = await connect({ credential: { token } });
  await assert.rejects(catalog.loadTable(id), (error: unknown) => {
    assert.ok(isCatalogError(error, "auth"), String(error));
    assert.equal(error.status, 401);
    assert.ok(error.message.startsWith(`loadTable kafka_topics.orders: the catalog at ${server.uri}${tablePath}`));
    assert.match(error.message, /check the token/);
    assert.ok(!error.message.includes(token), error.message);
    return true;
  });
  assert.equal(server.requests.filter((r) => r.method === "GET" && r.url === tablePath).length, 1);
});

test("403 names the privileges Unity Catalog wants for the call", async () => {
  server.routes.set("POST /v1/namespaces/kafka_topics/tables", () =>
    icebergError(403, "PermissionDenied", "User does not have CREATE TABLE"),
  );
  const catalog = await connect();
  await assert.rejects(
    catalog.createTable(id, { schema: { schemaId: 0, fields: [] }, spec: { specId: 0, fields: [] } }),
    (error: unknown) => {
      assert.ok(isCatalogError(error, "auth"), String(error));
      assert.match(error.message, /^createTable kafka_topics\.orders: .*HTTP 403.*CREATE TABLE.*EXTERNAL USE SCHEMA/);
      return true;
    },
  );
});

test("OAuth2: a 401 renews the token and retries once; a second 401 fails", async () => {
  let issued = 0;
  server.routes.set("POST /v1/oauth/tokens", () => ({
    json: { access_token: `tok-${++issued}`, token_type: "bearer", expires_in: 3600 },
  }));
  server.routes.set(`GET ${tablePath}`, (request) =>
    request.headers.authorization === "Bearer tok-2"
      ? { json: { "metadata-location": "/m.json", metadata: tableMetadataJson() } }
      : icebergError(401, "NotAuthorizedException", "token expired"),
  );
  const catalog = await connect({ credential: { clientId: "id", clientSecret: "secret" } });
  assert.equal((await catalog.loadTable(id)).metadataLocation, "/m.json");
  assert.equal(issued, 2);
  const form = new URLSearchParams(server.requests[0]?.body);
  assert.equal(form.get("scope"), "PRINCIPAL_ROLE:ALL", "the default scope, when none is configured");

  server.routes.set(`GET ${tablePath}`, () => icebergError(401, "NotAuthorizedException", "no"));
  await assert.rejects(catalog.loadTable(id), (e) => isCatalogError(e, "auth"));
  assert.equal(issued, 3, "one renewal per call");
});

test("OAuth2: an explicit scope and a relative oauth2-server-uri are honoured", async () => {
  server.routes.set("POST /auth/token", () => ({ json: { access_token: "t", token_type: "bearer" } }));
  await connect({
    credential: { clientId: "id", clientSecret: "secret", scope: "catalog", oauth2ServerUri: "auth/token" },
  });
  assert.equal(server.requests[0]?.url, "/auth/token");
  assert.equal(new URLSearchParams(server.requests[0]?.body).get("scope"), "catalog");
  assert.equal(server.requests[1]?.headers.authorization, "Bearer t");
});

test("an unknown warehouse is named in the error", async () => {
  server.routes.set("GET /v1/config", () => icebergError(404, "NoSuchWarehouseException", "no such warehouse: wh"));
  await assert.rejects(connect({ warehouse: "wh" }), (error: unknown) => {
    assert.ok(isCatalogError(error, "not-found"), String(error));
    assert.match(error.message, /^getConfig: HTTP 404: no such warehouse: wh; check `warehouse` \("wh"/);
    return true;
  });
});

test("a uri that answers HTML or other non-Iceberg bodies is not an Iceberg REST endpoint; the page is not quoted", async () => {
  const page = "<!doctype html><html><head><title>Sign in</title></head><body>secret form</body></html>";
  for (const [status, reply, what] of [
    [404, { text: page, contentType: "text/html" }, 'HTTP 404 with an HTML page \\("Sign in"\\)'],
    [200, { text: page, contentType: "text/html" }, "a body that is not JSON"],
    [200, { json: ["not", "a", "config"] }, "JSON that is not a catalog configuration"],
    [502, { text: "upstream connect error" }, "HTTP 502 with a body that is not an Iceberg error \\(not quoted\\)"],
  ] as const) {
    server.routes.set("GET /v1/config", () => ({ status, ...reply }));
    await assert.rejects(connect(), (error: unknown) => {
      assert.ok(isCatalogError(error, "not-found"), String(error));
      assert.match(
        error.message,
        new RegExp(
          `^getConfig: ${server.uri} does not look like an Iceberg REST catalog endpoint: GET ${server.uri}/v1/config answered ${what}\\. `,
        ),
      );
      assert.match(error.message, /https:\/\/<workspace>\/api\/2\.1\/unity-catalog\/iceberg-rest/);
      assert.doesNotMatch(error.message, /secret form|<html/);
      return true;
    });
  }
  // After a good config, a later call's HTML 404 names the page's title, not its text.
  server.routes.set("GET /v1/config", () => ({ json: { defaults: {}, overrides: {} } }));
  server.routes.set(`GET ${tablePath}`, () => ({ status: 404, text: page, contentType: "text/html" }));
  const catalog = await connect();
  await assert.rejects(catalog.loadTable(id), (error: unknown) => {
    assert.ok(isNoSuch(error, "table"), String(error));
    assert.equal(error.message, 'loadTable kafka_topics.orders: an HTML page ("Sign in")');
    return true;
  });
});

test("a request that times out fails at once, naming the URL and the timeout: it is not retried", async () => {
  server.routes.set("GET /v1/config", () => "hang");
  await assert.rejects(connect({ requestTimeoutMs: 200 }), (error: unknown) => {
    assert.ok(isCatalogError(error, "io") && error.status === undefined, String(error));
    assert.equal(
      error.message,
      `getConfig: the catalog at ${server.uri}/v1/config did not answer within 0.2 s (request_timeout); check \`uri\` and that the catalog is up`,
    );
    return true;
  });
  assert.equal(server.requests.length, 1);
  // A commit that times out has an unknown outcome.
  server.routes.set("GET /v1/config", () => ({ json: { defaults: {}, overrides: {} } }));
  server.routes.set(`POST ${tablePath}`, () => "hang");
  const catalog = await connect({ requestTimeoutMs: 200 });
  await assert.rejects(catalog.commitTable(id, [], []), (error: unknown) => {
    assert.ok(isCatalogError(error, "commit-state-unknown"), String(error));
    assert.match(error.message, /did not answer within 0\.2 s \(request_timeout\)/);
    return true;
  });
});

test("a closed port is unreachable after the retries, naming the URL", async () => {
  const uri = server.uri;
  await server.close();
  await assert.rejects(connectRestCatalog({ uri, retry: fastRetry }), (error: unknown) => {
    assert.ok(isCatalogError(error, "io") && error.status === undefined, String(error));
    assert.equal(
      error.message,
      `getConfig: cannot reach the catalog at ${uri}/v1/config (ECONNREFUSED); check \`uri\``,
    );
    return true;
  });
  server = await fakeServer();
});

test("a URI with user info is refused without quoting it", async () => {
  const uri = server.uri.replace("http://", "http://user:hunter2@");
  await assert.rejects(connectRestCatalog({ uri }), (error: unknown) => {
    assert.equal(errorKind(error), "validation", String(error));
    assert.ok(!String(error).includes("hunter2"), String(error));
    return true;
  });
});
