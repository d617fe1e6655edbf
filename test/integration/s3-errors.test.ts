// What a sync says when the object store refuses it: access denied to the vended credentials,
// an endpoint where nothing listens or something other than S3 answers, a bucket that does not
// exist, static keys the store does not know. Each message names the operation, the path and
// where the credentials came from, and carries no secret.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { s3ClientConfig } from "#src/iceberg/io/s3-config.ts";
import { S3FileIO } from "#src/iceberg/io/s3-file-io.ts";
import { StorageError } from "#src/iceberg/io/storage-error.ts";
import { parseJob } from "#src/job/load-job.ts";
import { bootstrapServers, createTopic, deleteTopic, produce } from "../../dev/kafka.ts";
import { startVendingProxy, type VendingProxy } from "../../dev/services/credential-vending-proxy.ts";
import { restS3Catalog } from "../../dev/services/iceberg-rest-s3.ts";
import { minio } from "../../dev/services/minio.ts";
import { assumeRole, revokeTokens } from "../../dev/services/minio-sts.ts";
import { syncJob } from "../helpers/sync-job.ts";

process.env.AWS_EC2_METADATA_DISABLED = "true";

const dir = mkdtempSync(join(tmpdir(), "floe-s3-errors-"));
const run = `${process.pid}_${Date.now()}`;
const topic = `s3err${run}_events`;
let proxies: VendingProxy[] = [];

before(async () => {
  await createTopic(topic, 1);
  await produce(topic, [{ value: JSON.stringify({ id: 1 }) }, { value: JSON.stringify({ id: 2 }) }]);
});
after(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  proxies = [];
  await deleteTopic(topic);
});

async function proxy(options: Parameters<typeof startVendingProxy>[0]): Promise<VendingProxy> {
  const started = await startVendingProxy(options);
  proxies.push(started);
  return started;
}

/** A sync of the topic into its own namespace (`name`), with `catalog` and `storage` as YAML. */
function syncWith(name: string, catalog: string, storage = "") {
  const job = parseJob(
    `
name: ${name}
source:
  kafka: {bootstrap_servers: [${bootstrapServers}], topic_pattern: "^${topic}$"}
destination:
  iceberg:
    catalog: ${catalog}
${storage ? `    storage: ${storage}` : ""}
streams:
  ${topic}: {mode: append, table: events}
`,
    join(dir, `${name}.yaml`),
  );
  return syncJob(job, { stateDir: join(dir, name) });
}

async function failure(promise: Promise<unknown>): Promise<StorageError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof StorageError, `expected a StorageError, got ${error}`);
    return error;
  }
  assert.fail("expected the sync to fail");
}

function assertNoSecrets(message: string, ...secrets: string[]): void {
  for (const secret of [minio.rootPassword, ...secrets]) assert.ok(!message.includes(secret), message);
}

test("access denied: vended credentials for another prefix; the message names path, operation and source", async () => {
  const narrow = await proxy({
    upstream: restS3Catalog.uri,
    placement: "storage-credentials",
    allowedLocation: () => `s3://${minio.warehouseBucket}/somewhere-else`,
  });
  const name = `s3err_denied_${run}`;
  const error = await failure(syncWith(name, `{type: rest, uri: ${narrow.uri}}`));
  assert.equal(error.kind, "access-denied");
  assert.equal(error.operation, "write");
  assert.match(
    error.message,
    new RegExp(
      `^write s3://${minio.warehouseBucket}/warehouse/${name}_topics/events/\\S+: access denied \\(AccessDenied: Access Denied\\.\\) ` +
        `with credentials vended by the catalog \\(storage-credentials for s3://${minio.warehouseBucket}/warehouse/${name}_topics/events\\)`,
    ),
  );
  assertNoSecrets(error.message);
});

test("wrong endpoint: nothing listens there, or an HTTP server that is not S3 answers", async () => {
  const vending = await proxy({ upstream: restS3Catalog.uri, vendEndpoint: false });
  const closed = await closedPort();
  const refused = await failure(
    syncWith(
      `s3err_closed_${run}`,
      `{type: rest, uri: ${vending.uri}}`,
      `{s3: {endpoint: "http://127.0.0.1:${closed}"}}`,
    ),
  );
  assert.equal(refused.kind, "unreachable");
  assert.match(
    refused.message,
    new RegExp(
      `^write s3://\\S+: cannot reach the S3 endpoint http://127\\.0\\.0\\.1:${closed} \\(ECONNREFUSED\\); check the endpoint`,
    ),
  );
  const notS3 = await failure(
    syncWith(`s3err_nots3_${run}`, `{type: rest, uri: ${vending.uri}}`, `{s3: {endpoint: "${restS3Catalog.uri}"}}`),
  );
  assert.equal(notS3.kind, "not-s3");
  assert.match(
    notS3.message,
    /^write s3:\/\/\S+: http:\/\/127\.0\.0\.1:\d+ answered HTTP \d+ with something that is not an S3 response/,
  );
});

test("static keys of the job file that the store does not take: the message says they came from the job file", async () => {
  const revoked = await assumeRole();
  await revokeTokens(revoked);
  // The fixture itself vends nothing: floe signs with the job file's keys.
  const error = await failure(
    syncWith(
      `s3err_static_${run}`,
      `{type: rest, uri: ${restS3Catalog.uri}}`,
      `{s3: {endpoint: "${minio.endpoint}", access_key_id: "${revoked.accessKeyId}", secret_access_key: "${revoked.secretAccessKey}", session_token: "${revoked.sessionToken}"}}`,
    ),
  );
  assert.equal(error.kind, "invalid-credentials");
  assert.match(
    error.message,
    /does not take the credentials \(InvalidAccessKeyId: .*\): static credentials of the job file/,
  );
  assertNoSecrets(error.message, revoked.secretAccessKey, revoked.sessionToken);
});

test("a bucket that does not exist is named, with the endpoint", async () => {
  const io = new S3FileIO(
    s3ClientConfig(
      {},
      {
        endpoint: minio.endpoint,
        credentials: { accessKeyId: minio.rootUser, secretAccessKey: minio.rootPassword },
      },
    ),
  );
  for (const operation of [
    () => io.write("s3://floe-no-such-bucket/t/f.parquet", new Uint8Array(1)),
    () => io.read("s3://floe-no-such-bucket/t/f.parquet"),
  ]) {
    const error = await failure(operation());
    assert.equal(error.kind, "no-such-bucket");
    assert.match(
      error.message,
      /^(write|read) s3:\/\/floe-no-such-bucket\/t\/f\.parquet: bucket floe-no-such-bucket does not exist at http:\/\/127\.0\.0\.1:\d+; check the table location and the S3 endpoint$/,
    );
  }
});

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
