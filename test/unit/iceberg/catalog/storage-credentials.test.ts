// The storage properties of a table: the longest matching storage-credentials prefix over the
// table config over the catalog's configuration, key by key.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  matchStorageCredential,
  parseStorageCredentials,
  tableStorageProperties,
} from "#src/iceberg/catalog/storage-credentials.ts";

const credentials = [
  { prefix: "s3://bucket/", config: { "s3.access-key-id": "bucket-wide" } },
  { prefix: "s3://bucket/warehouse/ns/orders", config: { "s3.access-key-id": "orders" } },
  { prefix: "s3://bucket/warehouse/ns", config: { "s3.access-key-id": "namespace" } },
  { prefix: "s3://other/", config: { "s3.access-key-id": "other" } },
];

test("the longest matching prefix wins, whatever the order; no match is none", () => {
  assert.equal(
    matchStorageCredential("s3://bucket/warehouse/ns/orders", credentials)?.config["s3.access-key-id"],
    "orders",
  );
  assert.equal(
    matchStorageCredential("s3://bucket/warehouse/ns/customers", credentials)?.config["s3.access-key-id"],
    "namespace",
  );
  assert.equal(matchStorageCredential("s3://bucket/x", credentials)?.config["s3.access-key-id"], "bucket-wide");
  assert.equal(matchStorageCredential("s3://third/x", credentials), undefined);
});

test("layers merge key by key: endpoint from the catalog's config, keys from the storage credential", () => {
  const storage = tableStorageProperties(
    "s3://bucket/warehouse/ns/orders",
    { "s3.endpoint": "http://minio:9000", "client.region": "eu-west-1" },
    { "client.region": "us-east-1", "s3.access-key-id": "from-table-config" },
    credentials,
  );
  assert.deepEqual(storage.properties, {
    "s3.endpoint": "http://minio:9000",
    "client.region": "us-east-1",
    "s3.access-key-id": "orders",
  });
  assert.equal(storage.origin, "storage-credentials for s3://bucket/warehouse/ns/orders");
});

test("the origin names the layer that carried keys: storage-credentials, the table config, or the catalog's configuration", () => {
  const location = "s3://third/t";
  assert.equal(
    tableStorageProperties(location, {}, { "s3.session-token": "x" }, credentials).origin,
    "the table's config",
  );
  assert.match(tableStorageProperties(location, { "s3.access-key-id": "c" }, {}, []).origin, /GET \/v1\/config/);
  // A matching entry without keys (say, only a region) leaves the origin to the config.
  const regionOnly = [{ prefix: "s3://third/", config: { "client.region": "x" } }];
  assert.equal(
    tableStorageProperties(location, {}, { "s3.access-key-id": "k" }, regionOnly).origin,
    "the table's config",
  );
});

test("storage-credentials as catalogs send them: malformed entries dropped, non-string values stringified", () => {
  assert.deepEqual(
    parseStorageCredentials([
      { prefix: "s3://b/", config: { "s3.access-key-id": "k", "s3.session-token-expires-at-ms": 1700000000000 } },
      { prefix: 3, config: {} },
      { config: {} },
      "junk",
    ]),
    [{ prefix: "s3://b/", config: { "s3.access-key-id": "k", "s3.session-token-expires-at-ms": "1700000000000" } }],
  );
  assert.deepEqual(parseStorageCredentials(undefined), []);
  assert.deepEqual(parseStorageCredentials({}), []);
});

test("a GCS token or an ADLS SAS counts as credentials for the origin, as S3 keys do", () => {
  const gcs = "gs://bucket/wh/ns/orders";
  const gcsCredentials = [{ prefix: "gs://bucket/wh", config: { "gcs.oauth2.token": "ya29.t" } }];
  assert.equal(tableStorageProperties(gcs, {}, {}, gcsCredentials).origin, "storage-credentials for gs://bucket/wh");
  const adls = "abfss://lake@acct.dfs.core.windows.net/wh/ns/orders";
  assert.equal(
    tableStorageProperties(adls, {}, { "adls.sas-token.acct.dfs.core.windows.net": "sig=x" }, []).origin,
    "the table's config",
  );
});
