// FileIO.list, what DeleteOrphanFiles compares with a table's metadata: every file under a
// prefix at any depth, with its size and modification time, on the local file system and on
// MinIO (S3, over more than one ListObjectsV2 page); a sibling sharing the prefix's leading
// characters is not under it, and a missing prefix lists nothing. Also on fake-gcs-server (GCS's
// JSON API) and Azurite (Azure Blob), started here as cloud-file-io.test.ts does.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { azureClientConfig } from "#src/iceberg/io/azure-config.ts";
import { AzureFileIO } from "#src/iceberg/io/azure-file-io.ts";
import { parseAzureLocation } from "#src/iceberg/io/azure-location.ts";
import type { FileIO } from "#src/iceberg/io/file-io.ts";
import { gcsClientConfig } from "#src/iceberg/io/gcs-config.ts";
import { GcsFileIO } from "#src/iceberg/io/gcs-file-io.ts";
import { LocalFileIO } from "#src/iceberg/io/local-file-io.ts";
import { s3ClientConfig } from "#src/iceberg/io/s3-config.ts";
import { S3FileIO } from "#src/iceberg/io/s3-file-io.ts";
import { azurite, azuriteService } from "../../dev/services/azurite.ts";
import { fakeGcs, fakeGcsService } from "../../dev/services/fake-gcs-server.ts";
import { minio } from "../../dev/services/minio.ts";

process.env.AWS_EC2_METADATA_DISABLED = "true";
const run = `${process.pid}-${Date.now()}`;

async function checkListing(io: FileIO, root: string, files: number): Promise<void> {
  const started = Date.now() - 60_000;
  const written = [];
  for (let i = 0; i < files; i++)
    written.push(`${root}/t/${i % 3 === 0 ? "metadata" : `data/p=${i % 2}`}/f${i}.parquet`);
  await Promise.all(written.map((location, i) => io.write(location, new Uint8Array(i + 1))));
  await io.write(`${root}/t2/other.parquet`, new Uint8Array(1));
  const listed = [];
  for await (const f of io.list!(`${root}/t`)) listed.push(f);
  assert.deepEqual(listed.map((f) => f.location).sort(), written.toSorted());
  for (const f of listed) {
    const i = written.indexOf(f.location);
    assert.equal(f.size, i + 1, f.location);
    assert.ok(f.lastModifiedMs > started && f.lastModifiedMs < Date.now() + 60_000, `${f.location} mtime`);
  }
  const none = [];
  for await (const f of io.list!(`${root}/missing`)) none.push(f);
  assert.deepEqual(none, []);
}

test("LocalFileIO lists every file under a directory, at any depth", async () => {
  await checkListing(new LocalFileIO(), mkdtempSync(join(tmpdir(), "floe-list-")), 12);
});

test("S3FileIO lists every object under a prefix on MinIO, page after page", async () => {
  const io = new S3FileIO(
    s3ClientConfig(
      {},
      {
        endpoint: minio.endpoint,
        region: minio.region,
        credentials: { accessKeyId: minio.rootUser, secretAccessKey: minio.rootPassword },
      },
    ),
  );
  // 1,000 keys a page: 1,005 objects take two.
  await checkListing(io, `s3://${minio.warehouseBucket}/list-${run}`, 1005);
});

test("GcsFileIO lists every object under a prefix on fake-gcs-server", async () => {
  await fakeGcsService.start();
  const io = new GcsFileIO(
    gcsClientConfig({}, { endpoint: fakeGcs.endpoint, oauth2Token: fakeGcs.token, maxAttempts: 2 }, "the test", {}),
    undefined,
    { endpoint: fakeGcs.endpoint },
  );
  await checkListing(io, `gs://${fakeGcs.bucket}/list-${run}`, 12);
});

test("AzureFileIO lists every blob under a prefix on Azurite", async () => {
  await azuriteService.start();
  const root = `wasbs://${azurite.container}@${azurite.account}.blob.core.windows.net/list-${run}`;
  const io = new AzureFileIO(
    root,
    azureClientConfig(
      parseAzureLocation(root),
      {},
      { endpoint: azurite.accountUrl, accountKey: azurite.accountKey, maxAttempts: 2 },
      "the test",
      {},
    ),
  );
  await checkListing(io, root, 12);
});
