// Which settings a table's S3 client gets: the catalog's credentials over the job file's over the
// SDK chain; the job file's endpoint, region and addressing over the catalog's.
import assert from "node:assert/strict";
import { test } from "node:test";
import { describeCredentialSource, s3ClientConfig } from "#src/iceberg/io/s3-config.ts";
import { isS3Location, parseS3Location } from "#src/iceberg/io/s3-location.ts";

const vended = {
  "s3.access-key-id": "vended-key",
  "s3.secret-access-key": "vended-secret",
  "s3.session-token": "vended-token",
  "s3.session-token-expires-at-ms": "1700000000000",
};
const jobKeys = { accessKeyId: "job-key", secretAccessKey: "job-secret" };

test("vended credentials win over the job file's static keys, and carry their expiry", () => {
  const config = s3ClientConfig(vended, { credentials: jobKeys }, "storage-credentials for s3://b/t");
  assert.deepEqual(config.credentials, {
    accessKeyId: "vended-key",
    secretAccessKey: "vended-secret",
    sessionToken: "vended-token",
    expiresAtMs: 1700000000000,
  });
  assert.deepEqual(config.credentialSource, { kind: "catalog", detail: "storage-credentials for s3://b/t" });
  assert.match(
    describeCredentialSource(config.credentialSource),
    /vended by the catalog \(storage-credentials for s3:\/\/b\/t\)/,
  );
});

test("half a key pair from the catalog is no credential: the job file's keys apply, then the SDK chain", () => {
  const half = { "s3.access-key-id": "only-the-id" };
  const job = s3ClientConfig(half, { credentials: jobKeys });
  assert.deepEqual(job.credentials, jobKeys);
  assert.deepEqual(job.credentialSource, { kind: "job-file" });
  const chain = s3ClientConfig(half, {});
  assert.equal(chain.credentials, undefined);
  assert.deepEqual(chain.credentialSource, { kind: "default-chain" });
  assert.match(describeCredentialSource(chain.credentialSource), /AWS SDK's default credentials/);
});

test("the job's endpoint, region and addressing win over the catalog's; the catalog's fill what the job leaves out", () => {
  const catalog = {
    ...vended,
    "s3.endpoint": "https://catalog-says:9000",
    "client.region": "eu-west-1",
    "s3.path-style-access": "false",
  };
  const job = s3ClientConfig(catalog, {
    endpoint: "http://127.0.0.1:9000",
    region: "us-east-1",
    pathStyleAccess: true,
  });
  assert.deepEqual([job.endpoint, job.region, job.forcePathStyle], ["http://127.0.0.1:9000", "us-east-1", true]);
  const merged = s3ClientConfig(catalog, {});
  assert.deepEqual(
    [merged.endpoint, merged.region, merged.forcePathStyle],
    ["https://catalog-says:9000", "eu-west-1", false],
  );
  // PyIceberg's spelling of the region counts too.
  assert.equal(s3ClientConfig({ "s3.region": "ap-south-1" }).region, "ap-south-1");
});

test("defaults: AWS S3 has no endpoint, virtual-hosted addressing and the SDK's checksums; an own endpoint path style, checksums only where required", () => {
  const aws = s3ClientConfig({});
  assert.deepEqual(
    [aws.endpoint, aws.region, aws.forcePathStyle, aws.requestChecksumCalculation],
    [undefined, undefined, false, "WHEN_SUPPORTED"],
  );
  const compatible = s3ClientConfig({ "s3.endpoint": "minio:9000/" });
  assert.deepEqual(
    [compatible.endpoint, compatible.region, compatible.forcePathStyle, compatible.requestChecksumCalculation],
    ["https://minio:9000", "us-east-1", true, "WHEN_REQUIRED"],
  );
  const forced = s3ClientConfig({ "s3.endpoint": "http://r2:1" }, { requestChecksums: "when-supported" });
  assert.equal(forced.requestChecksumCalculation, "WHEN_SUPPORTED");
});

test("multipart: parts of at least 5 MiB, files above twice the part size go up in parts", () => {
  const defaults = s3ClientConfig({});
  assert.deepEqual([defaults.partSizeBytes, defaults.multipartThresholdBytes], [8 * 2 ** 20, 16 * 2 ** 20]);
  const small = s3ClientConfig({}, { partSizeBytes: 1024 });
  assert.deepEqual([small.partSizeBytes, small.multipartThresholdBytes], [5 * 2 ** 20, 10 * 2 ** 20]);
});

test("s3, s3a and s3n locations name a bucket and a key, kept as written", () => {
  assert.deepEqual(parseS3Location("s3://bucket/a/b%20c.parquet"), { bucket: "bucket", key: "a/b%20c.parquet" });
  assert.deepEqual(parseS3Location("s3a://bucket/k"), { bucket: "bucket", key: "k" });
  assert.ok(isS3Location("s3n://b/k") && !isS3Location("/tmp/x") && !isS3Location("gs://b/k"));
  assert.throws(() => parseS3Location("s3://bucket"), /not an S3 object location/);
});
