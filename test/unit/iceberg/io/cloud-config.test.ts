// gs://, abfss:// and wasbs:// locations, and which credentials and endpoint a table's GCS or
// Azure client gets: the catalog's vended token or SAS over the job file's over the environment.
import assert from "node:assert/strict";
import { generateKeyPairSync, verify } from "node:crypto";
import { test } from "node:test";
import { azureClientConfig, catalogSas, sas } from "#src/iceberg/io/azure-config.ts";
import { isAzureLocation, parseAzureLocation } from "#src/iceberg/io/azure-location.ts";
import { gcsClientConfig } from "#src/iceberg/io/gcs-config.ts";
import { isGcsLocation, parseGcsLocation } from "#src/iceberg/io/gcs-location.ts";
import { parseServiceAccountKey, serviceAccountAssertion } from "#src/iceberg/io/gcs-service-account.ts";

test("gs:// locations: the bucket, and the object name byte for byte", () => {
  assert.deepEqual(parseGcsLocation("gs://b/wh/db/t/data/a%20b=1/x.parquet"), {
    bucket: "b",
    name: "wh/db/t/data/a%20b=1/x.parquet",
  });
  assert.equal(isGcsLocation("GS://b/k"), true);
  assert.equal(isGcsLocation("s3://b/k"), false);
  assert.throws(() => parseGcsLocation("gs://bucket-only"), /not a GCS object location/);
});

test("abfss:// and wasbs:// locations name the account's Blob endpoint, the cloud's suffix kept", () => {
  const adls = parseAzureLocation("abfss://lake@acct.dfs.core.windows.net/wh/db/t/x.parquet");
  assert.deepEqual(adls, {
    scheme: "abfss",
    container: "lake",
    account: "acct",
    host: "acct.dfs.core.windows.net",
    path: "wh/db/t/x.parquet",
    blobAccountUrl: "https://acct.blob.core.windows.net",
  });
  const china = parseAzureLocation("wasbs://c@acct.blob.core.chinacloudapi.cn/k");
  assert.equal(china.blobAccountUrl, "https://acct.blob.core.chinacloudapi.cn");
  assert.equal(china.scheme, "wasbs");
  assert.equal(isAzureLocation("abfs://c@a.dfs.core.windows.net/k"), true);
  assert.equal(isAzureLocation("gs://b/k"), false);
  assert.throws(() => parseAzureLocation("abfss://acct.dfs.core.windows.net/k"), /not an Azure Storage location/);
});

test("GCS: a vended token (with its expiry) wins over the job file's; the job's endpoint over gcs.service.host", () => {
  const vended = { "gcs.oauth2.token": "ya29.vended", "gcs.oauth2.token-expires-at": "1700000000000" };
  const config = gcsClientConfig(
    { ...vended, "gcs.service.host": "http://catalog-says:4443" },
    { endpoint: "http://127.0.0.1:4443/", oauth2Token: "job-token" },
    "the table's config",
    {},
  );
  assert.equal(config.endpoint, "http://127.0.0.1:4443");
  assert.deepEqual(config.credentials, { kind: "token", token: { token: "ya29.vended", expiresAtMs: 1700000000000 } });
  assert.deepEqual(config.credentialSource, { kind: "catalog", detail: "the table's config" });

  const job = gcsClientConfig({ "gcs.service.host": "http://catalog-says:4443" }, { oauth2Token: "job-token" }, "", {});
  assert.equal(job.endpoint, "http://catalog-says:4443");
  assert.deepEqual(job.credentials, { kind: "token", token: { token: "job-token" } });
  assert.equal(job.credentialSource.kind, "job-file");

  const keyFile = gcsClientConfig({}, { serviceAccountKeyFile: "/etc/sa.json" }, "", {
    GOOGLE_APPLICATION_CREDENTIALS: "/env/sa.json",
  });
  assert.deepEqual(keyFile.credentials, { kind: "service-account", keyFile: "/etc/sa.json" });

  const env = gcsClientConfig({}, {}, "", { GOOGLE_APPLICATION_CREDENTIALS: "/env/sa.json" });
  assert.deepEqual(env.credentials, { kind: "service-account", keyFile: "/env/sa.json" });
  assert.equal(env.credentialSource.kind, "environment");
  assert.equal(env.endpoint, "https://storage.googleapis.com");

  const none = gcsClientConfig({}, {}, "", {});
  assert.equal(none.credentials, undefined);
  // Resumable chunks are multiples of 256 KiB.
  assert.equal(gcsClientConfig({}, { chunkSizeBytes: 300_000 }, "", {}).chunkSizeBytes, 262_144);
});

test("Azure: the SAS vended for the account (by host or by name) wins; its expiry from the property or its se", () => {
  const location = parseAzureLocation("abfss://lake@acct.dfs.core.windows.net/wh/t");
  const byHost = catalogSas(location, {
    "adls.sas-token.acct.dfs.core.windows.net": "sv=2024-08-04&se=2030-01-01T00%3A00%3A00Z&sig=x",
  });
  assert.deepEqual(byHost, {
    token: "sv=2024-08-04&se=2030-01-01T00%3A00%3A00Z&sig=x",
    expiresAtMs: Date.parse("2030-01-01T00:00:00Z"),
  });
  const byName = catalogSas(location, {
    "adls.sas-token.acct": "sig=y",
    "adls.sas-token-expires-at-ms.acct": "1700000000000",
  });
  assert.deepEqual(byName, { token: "sig=y", expiresAtMs: 1700000000000 });
  assert.equal(catalogSas(location, { "adls.sas-token.other": "sig=z" }), undefined);

  const vended = azureClientConfig(
    location,
    { "adls.sas-token.acct": "sig=v" },
    { sasToken: "sig=job", endpoint: "http://127.0.0.1:10000/acct/" },
    "storage-credentials for abfss://lake@acct.dfs.core.windows.net/wh",
    { AZURE_STORAGE_KEY: "env-key" },
  );
  assert.equal(vended.accountUrl, "http://127.0.0.1:10000/acct");
  assert.deepEqual(vended.credentials, { kind: "sas", sas: { token: "sig=v" } });
  assert.equal(vended.credentialSource.kind, "catalog");

  const jobSas = azureClientConfig(location, {}, { sasToken: "?sig=job" }, "", { AZURE_STORAGE_KEY: "env-key" });
  assert.deepEqual(jobSas.credentials, { kind: "sas", sas: { token: "sig=job" } });
  assert.equal(jobSas.accountUrl, "https://acct.blob.core.windows.net");
  const jobKey = azureClientConfig(location, {}, { accountKey: "job-key" }, "", { AZURE_STORAGE_SAS_TOKEN: "sig=env" });
  assert.deepEqual(jobKey.credentials, { kind: "account-key", account: "acct", key: "job-key" });
  const envSas = azureClientConfig(location, {}, {}, "", {
    AZURE_STORAGE_SAS_TOKEN: "sig=env",
    AZURE_STORAGE_KEY: "k",
  });
  assert.deepEqual(envSas.credentials, { kind: "sas", sas: { token: "sig=env" } });
  assert.equal(envSas.credentialSource.kind, "environment");
  const envKey = azureClientConfig(location, {}, {}, "", { AZURE_STORAGE_KEY: "k" });
  assert.deepEqual(envKey.credentials, { kind: "account-key", account: "acct", key: "k" });
  assert.equal(azureClientConfig(location, {}, {}, "", {}).credentials, undefined);
  assert.deepEqual(sas("?sp=r"), { token: "sp=r" });
});

test("a service account's assertion is an RS256 JWT for the key's token_uri, verifiable with its public key", () => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const key = parseServiceAccountKey(
    JSON.stringify({
      type: "service_account",
      client_email: "floe@project.iam.gserviceaccount.com",
      private_key: privateKey.export({ type: "pkcs8", format: "pem" }),
      token_uri: "http://127.0.0.1:1/token",
    }),
    "/sa.json",
  );
  const jwt = serviceAccountAssertion(key, 1_700_000_000);
  const [header, claims, signature] = jwt.split(".");
  assert.deepEqual(JSON.parse(Buffer.from(header!, "base64url").toString()), { alg: "RS256", typ: "JWT" });
  assert.deepEqual(JSON.parse(Buffer.from(claims!, "base64url").toString()), {
    iss: "floe@project.iam.gserviceaccount.com",
    scope: "https://www.googleapis.com/auth/devstorage.read_write",
    aud: "http://127.0.0.1:1/token",
    iat: 1_700_000_000,
    exp: 1_700_003_600,
  });
  assert.ok(verify("RSA-SHA256", Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature!, "base64url")));
  assert.throws(() => parseServiceAccountKey("{}", "/x.json"), /\/x\.json: not a service-account key file/);
  assert.throws(() => parseServiceAccountKey("nope", "/x.json"), /not JSON/);
  // The file may be anything (a path a UI user gave): its content is not quoted.
  assert.throws(
    () => parseServiceAccountKey("secretkeybytes-of-another-file", "/x.json"),
    (e: unknown) => e instanceof Error && !e.message.includes("secretkey"),
  );
});
