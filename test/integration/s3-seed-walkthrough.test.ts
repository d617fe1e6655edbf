// The seed walkthrough with the warehouse on MinIO: the REST fixture's s3:// instance (which
// writes its metadata files to the bucket itself) behind the credential-vending proxy, which
// hands floe short-lived STS keys narrowed to each table's location. floe writes with those keys
// only: the job file gives the endpoint and region and no keys, and the proxy vends keys in
// `storage-credentials` alone, with no endpoint (as rustberg does), so the two must merge.
// DuckDB (httpfs with an S3 secret), PyIceberg and Spark (S3FileIO) read the bucket back.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parseJob } from "#src/job/load-job.ts";
import { createTopics, producePhase } from "../../demo/seed-walkthrough.ts";
import { type Readers, restS3Table, startReaders } from "../../dev/readers.ts";
import { assertSeedWalkthrough, engineReaders, seedWalkthroughJobYaml } from "../../dev/seed-walkthrough.ts";
import { startVendingProxy, type VendingProxy } from "../../dev/services/credential-vending-proxy.ts";
import { restS3Catalog } from "../../dev/services/iceberg-rest-s3.ts";
import { minio } from "../../dev/services/minio.ts";
import { objectKeys } from "../helpers/s3.ts";
import { syncJob } from "../helpers/sync-job.ts";

process.env.AWS_EC2_METADATA_DISABLED = "true";

const run = `${process.pid}_${Date.now()}`;
const prefix = `s3seed${run}_`;
const name = `s3seed_${run}`;
const namespace = `${name}_topics`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-s3-seed-"));

let readers: Readers;
let proxy: VendingProxy;
before(async () => {
  proxy = await startVendingProxy({
    upstream: restS3Catalog.uri,
    placement: "storage-credentials",
    vendEndpoint: false,
  });
  readers = await startReaders({ s3: true });
  await createTopics(prefix);
});
after(async () => {
  await readers?.close();
  await proxy?.close();
});

function job() {
  return parseJob(
    seedWalkthroughJobYaml({
      name,
      prefix,
      iceberg: `    catalog: {type: rest, uri: ${proxy.uri}}
    target_engines: [databricks, duckdb, spark]
    storage:
      s3: {endpoint: ${minio.endpoint}, region: ${minio.region}}`,
    }),
    join(stateDir, "job.yaml"),
  );
}

test("seed walkthrough on MinIO with vended credentials: DuckDB, PyIceberg and Spark read expected.json", async () => {
  const target = { namespace, readers: engineReaders(readers, restS3Table, namespace) };
  await producePhase(1, prefix);
  await assertSeedWalkthrough(1, await syncJob(job(), { stateDir }), target);
  await producePhase(2, prefix);
  await assertSeedWalkthrough(2, await syncJob(job(), { stateDir }), target);

  // The files are in the bucket, under each table's location, and floe had vended keys for both.
  const tablePrefix = `warehouse/${namespace}/`;
  const keys = await objectKeys(tablePrefix);
  for (const table of ["customers", "orders"]) {
    assert.ok(
      keys.some((k) => k.startsWith(`${tablePrefix}${table}/data/`) && k.endsWith(".parquet")),
      table,
    );
    assert.ok(
      keys.some((k) => k.startsWith(`${tablePrefix}${table}/data/`) && k.endsWith(".puffin")),
      table,
    );
    assert.ok(keys.some((k) => k.startsWith(`${tablePrefix}${table}/metadata/`) && k.endsWith(".metadata.json")));
    assert.ok(
      proxy.vended.some((v) => v.table === `${namespace}.${table}`),
      `no credentials vended for ${table}`,
    );
  }

  // A third sync with nothing new reads nothing and changes nothing.
  const third = await syncJob(job(), { stateDir });
  assert.equal(third.messagesRead, 0);
});
