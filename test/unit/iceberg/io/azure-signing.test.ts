// abfss:// requests signed with an account key, checked against the Shared Key protocol as
// documented ("Authorize with Shared Key", Blob service, version 2009-09-19 and later), computed
// here independently of the SDK: Azurite has no DFS endpoint, so this is where abfss:// signing
// is tested. The requests are captured before they leave the process.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { test } from "node:test";
import type { StoragePipelineOptions, WebResource } from "@azure/storage-blob";
import { azureClientConfig } from "#src/iceberg/io/azure-config.ts";
import { AzureFileIO } from "#src/iceberg/io/azure-file-io.ts";
import { parseAzureLocation } from "#src/iceberg/io/azure-location.ts";

const account = "floeacct";
const key = Buffer.from("a fixed 64-byte test key for the shared key signing test of floe!").toString("base64");

class Captured extends Error {}

function capture(): { requests: WebResource[]; transport: StoragePipelineOptions["httpClient"] } {
  const requests: WebResource[] = [];
  return {
    requests,
    transport: {
      sendRequest: async (request: WebResource) => {
        requests.push(request);
        throw new Captured("captured");
      },
    },
  };
}

/** The documented string-to-sign for a Blob request, and its HMAC-SHA256 under the account key. */
function documentedSignature(request: WebResource): string {
  const h = (name: string) => request.headers.get(name) ?? "";
  const length = h("content-length");
  const msHeaders = request.headers
    .headersArray()
    .map((header) => ({ name: header.name.toLowerCase(), value: header.value.trim() }))
    .filter((header) => header.name.startsWith("x-ms-"))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((header) => `${header.name}:${header.value}\n`)
    .join("");
  const url = new URL(request.url);
  const query = [...url.searchParams.keys()]
    .map((k) => k.toLowerCase())
    .sort()
    .map((k) => `\n${k}:${url.searchParams.getAll(k).join(",")}`)
    .join("");
  const resource = `/${account}${url.pathname}${query}`;
  const stringToSign = [
    request.method.toUpperCase(),
    h("content-encoding"),
    h("content-language"),
    length === "0" ? "" : length,
    h("content-md5"),
    h("content-type"),
    h("date"),
    h("if-modified-since"),
    h("if-match"),
    h("if-none-match"),
    h("if-unmodified-since"),
    h("range"),
  ].join("\n");
  const signature = createHmac("sha256", Buffer.from(key, "base64"))
    .update(`${stringToSign}\n${msHeaders}${resource}`, "utf8")
    .digest("base64");
  return `SharedKey ${account}:${signature}`;
}

function io(location: string, transport: StoragePipelineOptions["httpClient"]) {
  return new AzureFileIO(
    location,
    azureClientConfig(parseAzureLocation(location), {}, { accountKey: key, maxAttempts: 1 }, undefined, {}),
    undefined,
    {},
    transport,
  );
}

test("an abfss:// ranged read goes to the account's Blob endpoint, signed as the Shared Key protocol says", async () => {
  const location = `abfss://lake@${account}.dfs.core.windows.net/db/t/data/a%20b=1.parquet`;
  const { requests, transport } = capture();
  await assert.rejects(io(location, transport).readRange(location, 4, 100));
  const request = requests[0];
  assert.ok(request);
  const url = new URL(request.url);
  assert.equal(url.host, `${account}.blob.core.windows.net`);
  // The literal "%" of the name reaches the service as %25: the blob is named as the location says.
  assert.equal(url.pathname, "/lake/db/t/data/a%2520b%3D1.parquet");
  assert.equal(request.method, "GET");
  assert.equal(request.headers.get("x-ms-range"), "bytes=4-103");
  assert.ok(request.headers.get("x-ms-date"), "signed requests carry x-ms-date");
  assert.equal(request.headers.get("authorization"), documentedSignature(request));
});

test("a write (Put Blob) and a delete of an abfss:// file are signed as documented too", async () => {
  const location = `abfss://lake@${account}.dfs.core.chinacloudapi.cn/db/t/metadata/v1.metadata.json`;
  for (const run of [
    (files: AzureFileIO) => files.write(location, new TextEncoder().encode('{"format-version":3}')),
    (files: AzureFileIO) => files.delete(location),
  ]) {
    const { requests, transport } = capture();
    await assert.rejects(run(io(location, transport)));
    const request = requests[0];
    assert.ok(request);
    // Another cloud's suffix is kept.
    assert.equal(new URL(request.url).host, `${account}.blob.core.chinacloudapi.cn`);
    assert.equal(request.headers.get("authorization"), documentedSignature(request));
  }
});

test("with a SAS there is no Authorization header: the token rides in the query", async () => {
  const location = `wasbs://lake@${account}.blob.core.windows.net/db/t/data/x.parquet`;
  const { requests, transport } = capture();
  const files = new AzureFileIO(
    location,
    azureClientConfig(
      parseAzureLocation(location),
      {},
      { sasToken: "?sv=2024-08-04&sig=abc%3D&se=2030-01-01T00:00:00Z&sp=r", maxAttempts: 1 },
      undefined,
      {},
    ),
    undefined,
    {},
    transport,
  );
  await assert.rejects(files.read(location));
  const request = requests[0];
  assert.ok(request);
  assert.equal(request.headers.get("authorization"), undefined);
  assert.equal(new URL(request.url).searchParams.get("sig"), "abc=");
});
