// With ambientCredentials: false (floe serve without --ambient-credentials), no object store
// falls back to the machine's own credentials: not the AWS SDK's chain, not
// GOOGLE_APPLICATION_CREDENTIALS, not AZURE_STORAGE_SAS_TOKEN or AZURE_STORAGE_KEY. What the
// catalog vends and what the job gives still apply.
import assert from "node:assert/strict";
import { test } from "node:test";
import { azureClientConfig } from "#src/iceberg/io/azure-config.ts";
import { parseAzureLocation } from "#src/iceberg/io/azure-location.ts";
import { gcsClientConfig } from "#src/iceberg/io/gcs-config.ts";
import { s3ClientConfig } from "#src/iceberg/io/s3-config.ts";
import { S3FileIO } from "#src/iceberg/io/s3-file-io.ts";
import { StorageError } from "#src/iceberg/io/storage-error.ts";

const env = {
  GOOGLE_APPLICATION_CREDENTIALS: "/etc/server/sa.json",
  AZURE_STORAGE_SAS_TOKEN: "sv=2024&sig=server",
  AZURE_STORAGE_KEY: "c2VydmVyLWtleQ==",
};

test("GCS and Azure take the environment's credentials by default, and none with ambientCredentials: false", () => {
  assert.equal(gcsClientConfig({}, {}, "c", env).credentialSource.kind, "environment");
  assert.equal(gcsClientConfig({}, { ambientCredentials: false }, "c", env).credentialSource.kind, "none");
  assert.equal(
    gcsClientConfig({}, { ambientCredentials: false, oauth2Token: "t" }, "c", env).credentialSource.kind,
    "job-file",
  );
  const location = parseAzureLocation("abfss://c@acct.dfs.core.windows.net/wh/t");
  assert.equal(azureClientConfig(location, {}, {}, "c", env).credentialSource.kind, "environment");
  assert.equal(azureClientConfig(location, {}, { ambientCredentials: false }, "c", env).credentialSource.kind, "none");
});

test("S3 without credentials uses the SDK's chain by default; with ambientCredentials: false, a request is refused unsigned", async () => {
  assert.equal(s3ClientConfig({}, {}).credentialSource.kind, "default-chain");
  const config = s3ClientConfig({}, { ambientCredentials: false, endpoint: "http://127.0.0.1:9", region: "us-east-1" });
  assert.equal(config.credentialSource.kind, "none");
  // Refused before any request is sent: port 9 (discard) is never contacted.
  const io = new S3FileIO(config);
  await assert.rejects(io.exists("s3://bucket/key"), (e: unknown) => {
    assert.ok(e instanceof StorageError, String(e));
    assert.equal(e.kind, "invalid-credentials");
    assert.match(e.message, /--ambient-credentials/);
    return true;
  });
});
