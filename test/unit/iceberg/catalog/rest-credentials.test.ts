// Vended credentials through the REST client: asked for with X-Iceberg-Access-Delegation, handed
// to the FileIO with where they came from, and asked again through the table credentials
// endpoint when the catalog offers it (or names one in the table config), else by a reload.
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { loadCatalog } from "#src/iceberg/catalog/load-catalog.ts";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import type { FileIO, FileIOContext } from "#src/iceberg/io/file-io.ts";
import { type FakeServer, fakeServer, tableMetadataJson } from "./fake-http-server.ts";

let server: FakeServer;
const id = { namespace: ["ns"], name: "t" };
const tablePath = "/v1/namespaces/ns/tables/t";
const location = "s3://bucket/warehouse/ns/t";

beforeEach(async () => {
  server = await fakeServer();
});
afterEach(() => server.close());

function loadAnswer(key: string, config: Record<string, string> = {}) {
  return {
    json: {
      "metadata-location": `${location}/metadata/00001.metadata.json`,
      metadata: tableMetadataJson({ location }),
      config,
      "storage-credentials": [{ prefix: location, config: { "s3.access-key-id": key, "s3.secret-access-key": "s" } }],
    },
  };
}

function capture() {
  const built: { properties: Readonly<Record<string, string>>; context: FileIOContext | undefined }[] = [];
  return {
    built,
    fileIO: (_location: string, properties: Readonly<Record<string, string>>, context?: FileIOContext) => {
      built.push({ properties, context });
      return {} as FileIO;
    },
  };
}

test("a rest catalog asks for vended credentials, and sends no Authorization header without a token", async () => {
  server.routes.set("GET /v1/config", () => ({ json: { defaults: {}, overrides: {} } }));
  server.routes.set(`GET ${tablePath}`, () => loadAnswer("k1"));
  const catalog = await loadCatalog({ type: "rest", uri: server.uri });
  await catalog.loadTable(id);
  for (const request of server.requests) {
    assert.equal(request.headers["x-iceberg-access-delegation"], "vended-credentials");
    assert.equal(request.headers.authorization, undefined);
  }
});

test("the credentials endpoint, where /v1/config offers it, renews the storage credentials", async () => {
  server.routes.set("GET /v1/config", () => ({
    json: {
      defaults: { "s3.endpoint": "http://minio:9000" },
      overrides: {},
      endpoints: [
        "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
      ],
    },
  }));
  server.routes.set(`GET ${tablePath}`, () => loadAnswer("k1"));
  server.routes.set(`GET ${tablePath}/credentials`, () => ({
    json: {
      "storage-credentials": [{ prefix: location, config: { "s3.access-key-id": "k2", "s3.secret-access-key": "s2" } }],
    },
  }));
  const { built, fileIO } = capture();
  const catalog = await connectRestCatalog({ uri: server.uri, fileIO });
  await catalog.loadTable(id);
  assert.equal(built[0]?.properties["s3.access-key-id"], "k1");
  assert.equal(built[0]?.context?.credentialOrigin, `storage-credentials for ${location}`);
  const fresh = await built[0]!.context!.refresh!();
  assert.equal(fresh.properties["s3.access-key-id"], "k2");
  assert.equal(fresh.properties["s3.endpoint"], "http://minio:9000", "the catalog's configuration still applies");
  assert.deepEqual(
    server.requests.map((r) => `${r.method} ${r.url}`),
    ["GET /v1/config", `GET ${tablePath}`, `GET ${tablePath}/credentials`],
  );
});

test("a table config naming client.refresh-credentials-endpoint is asked there", async () => {
  server.routes.set("GET /v1/config", () => ({ json: { defaults: {}, overrides: {} } }));
  server.routes.set(`GET ${tablePath}`, () =>
    loadAnswer("k1", { "client.refresh-credentials-endpoint": "v1/namespaces/ns/tables/t/creds" }),
  );
  server.routes.set("GET /v1/namespaces/ns/tables/t/creds", () => ({
    json: {
      "storage-credentials": [
        { prefix: "s3://bucket/", config: { "s3.access-key-id": "k3", "s3.secret-access-key": "s" } },
      ],
    },
  }));
  const { built, fileIO } = capture();
  const catalog = await connectRestCatalog({ uri: server.uri, fileIO });
  await catalog.loadTable(id);
  const fresh = await built[0]!.context!.refresh!();
  assert.equal(fresh.properties["s3.access-key-id"], "k3");
  assert.equal(fresh.origin, "storage-credentials for s3://bucket/");
});

test("without a credentials endpoint, renewing reloads the table; a commit keeps the credentials of the last load", async () => {
  server.routes.set("GET /v1/config", () => ({ json: { defaults: {}, overrides: {}, endpoints: [] } }));
  server.routes.set(`GET ${tablePath}`, (_request, seen) => loadAnswer(`load${seen}`));
  server.routes.set(`POST ${tablePath}`, () => ({
    json: {
      "metadata-location": `${location}/metadata/00002.metadata.json`,
      metadata: tableMetadataJson({ location }),
    },
  }));
  const { built, fileIO } = capture();
  const catalog = await connectRestCatalog({ uri: server.uri, fileIO });
  await catalog.loadTable(id);
  const fresh = await built[0]!.context!.refresh!();
  assert.equal(fresh.properties["s3.access-key-id"], "load2");
  await catalog.commitTable(id, [], []);
  assert.equal(built.at(-1)?.properties["s3.access-key-id"], "load2");
});

test("a load that vends in config only drops the storage-credentials of the load before", async () => {
  server.routes.set("GET /v1/config", () => ({ json: { defaults: {}, overrides: {} } }));
  server.routes.set(`GET ${tablePath}`, (_request, seen) =>
    seen === 1
      ? loadAnswer("old")
      : {
          json: {
            "metadata-location": `${location}/metadata/00002.metadata.json`,
            metadata: tableMetadataJson({ location }),
            config: { "s3.access-key-id": "new", "s3.secret-access-key": "s" },
          },
        },
  );
  const { built, fileIO } = capture();
  const catalog = await connectRestCatalog({ uri: server.uri, fileIO });
  await catalog.loadTable(id);
  await catalog.loadTable(id);
  assert.equal(built[1]?.properties["s3.access-key-id"], "new");
  assert.equal(built[1]?.context?.credentialOrigin, "the table's config");
});
