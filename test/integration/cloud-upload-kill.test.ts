// A chunked upload SIGKILLed in the middle leaves nothing visible: on GCS a resumable upload
// whose second chunk never arrives, on Azure staged blocks never committed. The writer runs as a
// child process against a pass-through proxy that holds the second chunk (GCS: a PUT whose
// Content-Range does not start at 0; Azure: the second Put Block), so the kill lands while the
// upload is open on any machine. Afterwards the object is neither readable nor listed, and a
// new write of the same name succeeds whole.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { azureClientConfig } from "#src/iceberg/io/azure-config.ts";
import { AzureFileIO } from "#src/iceberg/io/azure-file-io.ts";
import { parseAzureLocation } from "#src/iceberg/io/azure-location.ts";
import type { FileIO } from "#src/iceberg/io/file-io.ts";
import { gcsClientConfig } from "#src/iceberg/io/gcs-config.ts";
import { GcsFileIO } from "#src/iceberg/io/gcs-file-io.ts";
import { azurite, azuriteClient, azuriteService } from "../../dev/services/azurite.ts";
import { fakeGcs, fakeGcsService, gcsObjectNames } from "../../dev/services/fake-gcs-server.ts";
import { startHoldProxy } from "../helpers/hold-proxy.ts";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const child = join(repo, "test", "helpers", "cloud-write-child.ts");
const run = `${process.pid}-${Date.now()}`;
const CHUNK = 256 * 1024;
const SIZE = 3 * CHUNK + 100;

function startWriter(args: object): { process: ChildProcess; exited: Promise<number | null> } {
  const writer = spawn(process.execPath, [child, JSON.stringify(args)], { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => writer.once("exit", (code) => resolve(code)));
  return { process: writer, exited };
}

async function killWhileHeld(
  upstream: string,
  hold: (method: string, url: string, headers: Record<string, unknown>) => boolean,
  args: (endpoint: string) => object,
) {
  const proxy = await startHoldProxy(upstream, hold);
  try {
    const writer = startWriter(args(proxy.endpoint));
    const first = await Promise.race([proxy.held, writer.exited.then((code) => `exited ${code}`)]);
    assert.doesNotMatch(first, /^exited/, "the writer finished before its upload was held");
    writer.process.kill("SIGKILL");
    await writer.exited;
  } finally {
    await proxy.close();
  }
}

async function rewriteWhole(files: FileIO, location: string) {
  const bytes = new Uint8Array(randomBytes(SIZE));
  await files.write(location, bytes);
  assert.ok(Buffer.from(await files.read(location)).equals(Buffer.from(bytes)));
  await files.delete(location);
}

describe("GCS on fake-gcs-server", () => {
  before(() => fakeGcsService.start());
  test("a resumable upload killed after its first chunk leaves no object", async () => {
    const name = `kill-${run}/data/big.parquet`;
    const location = `gs://${fakeGcs.bucket}/${name}`;
    await killWhileHeld(
      fakeGcs.endpoint,
      (method, _url, headers) =>
        method === "PUT" && typeof headers["content-range"] === "string" && !/^bytes 0-/.test(headers["content-range"]),
      (endpoint) => ({ store: "gcs", endpoint, location, size: SIZE, chunk: CHUNK, secret: fakeGcs.token }),
    );
    const files = new GcsFileIO(
      gcsClientConfig(
        {},
        {
          endpoint: fakeGcs.endpoint,
          oauth2Token: fakeGcs.token,
          chunkSizeBytes: CHUNK,
          resumableThresholdBytes: CHUNK,
        },
        "",
        {},
      ),
    );
    assert.equal(await files.exists(location), false);
    assert.deepEqual(await gcsObjectNames(`kill-${run}/`), []);
    await rewriteWhole(files, location);
  });
});

describe("Azure Blob on Azurite", () => {
  before(() => azuriteService.start());
  test("staged blocks killed before their commit leave no blob", async () => {
    const name = `kill-${run}/data/big.parquet`;
    const location = `wasbs://${azurite.container}@${azurite.account}.blob.core.windows.net/${name}`;
    let blocks = 0;
    await killWhileHeld(
      new URL(azurite.accountUrl).origin,
      (method, url) => method === "PUT" && /[?&]comp=block(&|$)/.test(url) && ++blocks >= 2,
      (endpoint) => ({
        store: "azure",
        endpoint: `${endpoint}/${azurite.account}`,
        location,
        size: SIZE,
        chunk: CHUNK,
        secret: azurite.accountKey,
      }),
    );
    const files = new AzureFileIO(
      location,
      azureClientConfig(
        parseAzureLocation(location),
        {},
        {
          endpoint: azurite.accountUrl,
          accountKey: azurite.accountKey,
          blockSizeBytes: CHUNK,
          singleUploadThresholdBytes: CHUNK,
        },
        "",
        {},
      ),
    );
    assert.equal(await files.exists(location), false);
    const listed: string[] = [];
    for await (const blob of azuriteClient()
      .getContainerClient(azurite.container)
      .listBlobsFlat({ prefix: `kill-${run}/` })) {
      listed.push(blob.name);
    }
    assert.deepEqual(listed, []);
    await rewriteWhole(files, location);
  });
});
