// floe's GCS FileIO on fake-gcs-server and its Azure FileIO on Azurite: whole and ranged reads,
// existence, deletes, a chunked upload (resumable on GCS, staged blocks committed on Azure) read
// back byte for byte and across a chunk boundary, names with "%" and spaces kept as written,
// the failure kinds, and vended credentials renewed: before expiry on GCS, after Azurite
// refuses an expired SAS on Azure.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { before, describe, test } from "node:test";
import {
  ContainerSASPermissions,
  generateBlobSASQueryParameters,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import { azureClientConfig } from "#src/iceberg/io/azure-config.ts";
import { AzureFileIO } from "#src/iceberg/io/azure-file-io.ts";
import { parseAzureLocation } from "#src/iceberg/io/azure-location.ts";
import type { FileIO, StorageProperties } from "#src/iceberg/io/file-io.ts";
import { gcsClientConfig } from "#src/iceberg/io/gcs-config.ts";
import { GcsFileIO } from "#src/iceberg/io/gcs-file-io.ts";
import { StorageError } from "#src/iceberg/io/storage-error.ts";
import { azurite, azuriteClient, azuriteService } from "../../dev/services/azurite.ts";
import { fakeGcs, fakeGcsService, gcsObjectNames } from "../../dev/services/fake-gcs-server.ts";

const run = `${process.pid}-${Date.now()}`;
const KIB = 1024;

async function storageFailure(promise: Promise<unknown>): Promise<StorageError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof StorageError, String(error));
    return error;
  }
  assert.fail("expected a StorageError");
}

async function roundTrip(files: FileIO, base: string, chunk: number) {
  const small = `${base}/data/a b%2Fc=1.txt`;
  await files.write(small, new TextEncoder().encode("hello, object store"));
  assert.equal(new TextDecoder().decode(await files.read(small)), "hello, object store");
  assert.equal(new TextDecoder().decode(await files.readRange(small, 7, 6)), "object");
  assert.equal(await files.exists(small), true);

  const bytes = new Uint8Array(randomBytes(2 * chunk + 1234));
  const large = `${base}/data/large.bin`;
  await files.write(large, bytes);
  const back = await files.read(large);
  assert.ok(Buffer.from(back).equals(Buffer.from(bytes)), "the same bytes");
  const across = await files.readRange(large, chunk - 10, 20);
  assert.ok(Buffer.from(across).equals(Buffer.from(bytes.subarray(chunk - 10, chunk + 10))));
  await assert.rejects(files.readRange(large, bytes.byteLength - 5, 10), /wanted 10 bytes at offset .* only 5/);
  await assert.rejects(files.readRange(large, bytes.byteLength + 5, 10), /wanted 10 bytes at offset .* only 0/);

  await files.delete(small);
  assert.equal(await files.exists(small), false);
  await files.delete(small);
  await files.delete(large);
}

describe("GCS on fake-gcs-server", () => {
  before(() => fakeGcsService.start());
  const chunk = 256 * KIB;
  const io = (properties: Record<string, string> = {}, refresh?: () => Promise<StorageProperties>) =>
    new GcsFileIO(
      gcsClientConfig(
        properties,
        {
          endpoint: fakeGcs.endpoint,
          oauth2Token: fakeGcs.token,
          resumableThresholdBytes: chunk,
          chunkSizeBytes: chunk,
          maxAttempts: 2,
        },
        "the table's config",
        {},
      ),
      refresh,
      { endpoint: fakeGcs.endpoint },
    );
  const base = `gs://${fakeGcs.bucket}/file-io-${run}`;

  test("small and resumable uploads round-trip; names are kept byte for byte", async () => {
    await roundTrip(io(), base, chunk);
    await io().write(`${base}/keep/a%20b.txt`, new Uint8Array([1]));
    assert.deepEqual(await gcsObjectNames(`file-io-${run}/keep/`), [`file-io-${run}/keep/a%20b.txt`]);
  });

  test("a missing object, a missing bucket and an unreachable endpoint are told apart", async () => {
    const files = io();
    assert.equal((await storageFailure(files.read(`${base}/no-such-object`))).kind, "not-found");
    const bucket = await storageFailure(files.write(`gs://floe-no-bucket-${run}/k`, new Uint8Array(1)));
    assert.equal(bucket.kind, "no-such-bucket");
    assert.match(bucket.message, new RegExp(`bucket floe-no-bucket-${run} does not exist at ${fakeGcs.endpoint}`));
    const away = new GcsFileIO(
      gcsClientConfig({}, { endpoint: "http://127.0.0.1:9", oauth2Token: "t", maxAttempts: 1 }, "", {}),
    );
    const unreachable = await storageFailure(away.read(`${base}/x`));
    assert.equal(unreachable.kind, "unreachable");
    assert.match(unreachable.message, /destination\.iceberg\.storage\.gcs\.endpoint/);
  });

  test("a vended token near its expiry is renewed from the catalog before the next request", async () => {
    let asked = 0;
    const refresh = async (): Promise<StorageProperties> => {
      asked++;
      return {
        properties: {
          "gcs.oauth2.token": `fresh-${asked}`,
          "gcs.oauth2.token-expires-at": String(Date.now() + 3600_000),
        },
        origin: "the table's config",
      };
    };
    const files = io({ "gcs.oauth2.token": "vended", "gcs.oauth2.token-expires-at": String(Date.now() + 50) }, refresh);
    assert.equal(files.config.credentialSource.kind, "catalog");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await files.write(`${base}/renewed.txt`, new Uint8Array([1, 2, 3]));
    assert.deepEqual([...(await files.read(`${base}/renewed.txt`))], [1, 2, 3]);
    assert.equal(asked, 1);
    assert.equal(files.credentialRenewals, 1);
    await files.delete(`${base}/renewed.txt`);
  });
});

describe("Azure Blob on Azurite", () => {
  before(() => azuriteService.start());
  const chunk = 256 * KIB;
  const options = {
    endpoint: azurite.accountUrl,
    singleUploadThresholdBytes: chunk,
    blockSizeBytes: chunk,
    maxAttempts: 2,
  };
  const sas = (expiresOn: Date, permissions = "racwdl") =>
    generateBlobSASQueryParameters(
      { containerName: azurite.container, permissions: ContainerSASPermissions.parse(permissions), expiresOn },
      new StorageSharedKeyCredential(azurite.account, azurite.accountKey),
    ).toString();
  const base = `wasbs://${azurite.container}@${azurite.account}.blob.core.windows.net/file-io-${run}`;
  const io = (
    location: string,
    properties: Record<string, string>,
    extra: { accountKey?: string; sasToken?: string } = {},
    refresh?: () => Promise<StorageProperties>,
  ) =>
    new AzureFileIO(
      location,
      azureClientConfig(parseAzureLocation(location), properties, { ...options, ...extra }, "the table's config", {}),
      refresh,
      options,
    );

  test("Put Blob and staged blocks round-trip with the account key, and with a SAS, on wasbs:// and abfss://", async () => {
    await roundTrip(io(base, {}, { accountKey: azurite.accountKey }), `${base}/key`, chunk);
    await roundTrip(io(base, {}, { sasToken: sas(new Date(Date.now() + 3600_000)) }), `${base}/sas`, chunk);
    const adls = `abfss://${azurite.container}@${azurite.account}.dfs.core.windows.net/file-io-${run}`;
    await roundTrip(
      io(adls, { [`adls.sas-token.${azurite.account}`]: sas(new Date(Date.now() + 3600_000)) }),
      `${adls}/vended`,
      chunk,
    );
    const files = io(base, {}, { accountKey: azurite.accountKey });
    await files.write(`${base}/keep/a%20b.txt`, new Uint8Array([1]));
    const names: string[] = [];
    for await (const blob of azuriteClient()
      .getContainerClient(azurite.container)
      .listBlobsFlat({ prefix: `file-io-${run}/keep/` })) {
      names.push(blob.name);
    }
    assert.deepEqual(names, [`file-io-${run}/keep/a%20b.txt`]);
  });

  test("a missing blob, a missing container, a wrong key and a read-only SAS are told apart", async () => {
    const files = io(base, {}, { accountKey: azurite.accountKey });
    assert.equal((await storageFailure(files.read(`${base}/no-such-blob`))).kind, "not-found");
    const missing = `wasbs://floe-no-container-${process.pid}@${azurite.account}.blob.core.windows.net/k`;
    const container = await storageFailure(files.write(missing, new Uint8Array(1)));
    assert.equal(container.kind, "no-such-bucket");
    assert.match(container.message, /container floe-no-container-\d+ does not exist/);
    const wrongKey = Buffer.from("not the key of this account, but one of the right length!!!!!!").toString("base64");
    const wrong = await storageFailure(io(base, {}, { accountKey: wrongKey }).read(`${base}/x`));
    assert.equal(wrong.kind, "invalid-credentials");
    assert.ok(!wrong.message.includes(wrongKey), wrong.message);
    const readOnly = await storageFailure(
      io(base, {}, { sasToken: sas(new Date(Date.now() + 3600_000), "r") }).write(`${base}/ro`, new Uint8Array(1)),
    );
    assert.equal(readOnly.kind, "access-denied");
    assert.match(readOnly.message, /job file's credentials/);
  });

  test("a vended SAS that Azurite refuses as expired is renewed from the catalog once, and the write goes through", async () => {
    let asked = 0;
    const refresh = async (): Promise<StorageProperties> => {
      asked++;
      return {
        properties: { [`adls.sas-token.${azurite.account}`]: sas(new Date(Date.now() + 3600_000)) },
        origin: "the table's config",
      };
    };
    // Expired a minute ago, but announced as valid for an hour: only the refusal tells.
    const files = io(
      base,
      {
        [`adls.sas-token.${azurite.account}`]: sas(new Date(Date.now() - 60_000)),
        [`adls.sas-token-expires-at-ms.${azurite.account}`]: String(Date.now() + 3600_000),
      },
      {},
      refresh,
    );
    await files.write(`${base}/renewed.txt`, new Uint8Array([4, 5, 6]));
    assert.deepEqual([...(await files.read(`${base}/renewed.txt`))], [4, 5, 6]);
    assert.equal(asked, 1);
    const stale = io(base, { [`adls.sas-token.${azurite.account}`]: sas(new Date(Date.now() - 60_000)) });
    const expired = await storageFailure(stale.read(`${base}/renewed.txt`));
    assert.match(expired.kind, /expired-credentials|invalid-credentials/);
    assert.match(expired.message, /vended by the catalog/);
  });
});
