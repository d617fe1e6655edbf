// destination.iceberg.storage.gcs and .azure in the job file: parsed, secrets wrapped and never
// printed, one kind of credentials per store; a sql catalog with an object-store warehouse.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "#src/job/config-error.ts";
import { parseJob } from "#src/job/load-job.ts";
import { cloudStorageOptions } from "#src/pipeline/cloud-storage.ts";

const job = (storage: string, catalog = "{type: rest, uri: http://127.0.0.1:8181}") => `
name: j
source: {kafka: {bootstrap_servers: [k:9092], topic_pattern: x}}
destination:
  iceberg:
    catalog: ${catalog}
    storage: ${storage}
`;

test("GCS and Azure settings with secrets from the environment: wrapped, printed as ***, revealed for the FileIO", () => {
  const parsed = parseJob(
    job(`{gcs: {endpoint: "http://127.0.0.1:4443", oauth2_token: "\${GCS_TOKEN}"},
      azure: {endpoint: "http://127.0.0.1:10000/devstoreaccount1", sas_token: "\${SAS}"}}`),
    "/j.yaml",
    { env: { GCS_TOKEN: "ya29.secret-token", SAS: "sv=2024&sig=secret-sig" } },
  );
  const storage = parsed.destination.storage;
  assert.equal(storage?.gcs?.endpoint, "http://127.0.0.1:4443");
  assert.equal(storage?.gcs?.oauth2Token?.reveal(), "ya29.secret-token");
  assert.equal(storage?.azure?.sasToken?.reveal(), "sv=2024&sig=secret-sig");
  assert.equal(storage?.s3, undefined);
  const printed = JSON.stringify(parsed);
  assert.ok(!printed.includes("secret-token") && !printed.includes("secret-sig"), printed);
  assert.deepEqual(cloudStorageOptions(storage), {
    gcs: { endpoint: "http://127.0.0.1:4443", oauth2Token: "ya29.secret-token", serviceAccountKeyFile: undefined },
    azure: {
      endpoint: "http://127.0.0.1:10000/devstoreaccount1",
      sasToken: "sv=2024&sig=secret-sig",
      accountKey: undefined,
    },
  });
});

test("one kind of static credentials per store; endpoints are http(s) URLs", () => {
  const fails = (storage: string, path: RegExp) => {
    try {
      parseJob(job(storage), "/j.yaml");
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      assert.match(error.message, path);
      return;
    }
    assert.fail(`accepted ${storage}`);
  };
  fails("{gcs: {oauth2_token: t, service_account_key_file: /sa.json}}", /storage\.gcs\.service_account_key_file/);
  fails("{azure: {sas_token: s, account_key: k}}", /storage\.azure\.account_key/);
  fails("{azure: {endpoint: ftp://x}}", /storage\.azure\.endpoint/);
  fails("{gcs: {project: p}}", /storage\.gcs/);
});

test("a sql catalog keeps an object-store warehouse as it is and resolves its database path", () => {
  const parsed = parseJob(
    job("{gcs: {oauth2_token: t}}", "{type: sql, warehouse: gs://bucket/wh, uri: state/catalog.db}"),
    "/jobs/j.yaml",
  );
  assert.deepEqual(parsed.destination.catalog, {
    type: "sql",
    warehouse: "gs://bucket/wh",
    uri: "/jobs/state/catalog.db",
  });
});
