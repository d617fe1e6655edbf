// The seed walkthrough's write path with the warehouse on GCS (fake-gcs-server) and on Azure
// Blob (Azurite): floe's embedded SQL catalog, its database local, its warehouse a gs:// or
// abfss:// location. GCS is reached with a static token from the job file; Azure with a SAS
// the test signs for the container. PyIceberg reads the tables back (GCS through PyArrow's
// GcsFileSystem, Azure through adlfs) and must see expected.json's figures.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import {
  ContainerSASPermissions,
  generateBlobSASQueryParameters,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import { parseJob } from "#src/job/load-job.ts";
import { createTopics, producePhase } from "../../demo/seed-walkthrough.ts";
import { assertSeedWalkthrough, seedWalkthroughJobYaml } from "../../dev/seed-walkthrough.ts";
import { adlfsPython } from "../../dev/services/adlfs-reader.ts";
import { azurite, azuriteClient, azuriteService } from "../../dev/services/azurite.ts";
import { fakeGcs, fakeGcsService, gcsObjectNames } from "../../dev/services/fake-gcs-server.ts";
import { pyicebergRows } from "../helpers/pyiceberg-read.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `${process.pid}_${Date.now()}`;

interface Store {
  name: string;
  start(): Promise<void>;
  warehouse(name: string): string;
  storageYaml(): string;
  /** PyIceberg's catalog properties for reading the bucket. */
  readerProperties(): Record<string, string>;
  python(): Promise<string | undefined>;
  objectNames(prefix: string): Promise<string[]>;
}

function sas(): string {
  return generateBlobSASQueryParameters(
    {
      containerName: azurite.container,
      permissions: ContainerSASPermissions.parse("racwdl"),
      expiresOn: new Date(Date.now() + 3600_000),
    },
    new StorageSharedKeyCredential(azurite.account, azurite.accountKey),
  ).toString();
}

const stores: Store[] = [
  {
    name: "GCS (fake-gcs-server)",
    start: () => fakeGcsService.start(),
    warehouse: (name) => `gs://${fakeGcs.bucket}/${name}`,
    storageYaml: () => `gcs: {endpoint: "${fakeGcs.endpoint}", oauth2_token: ${fakeGcs.token}}`,
    readerProperties: () => ({
      "gcs.service.host": fakeGcs.endpoint,
      "gcs.oauth2.token": fakeGcs.token,
      "gcs.oauth2.token-expires-at": String(Date.now() + 3600_000),
    }),
    python: async () => undefined,
    objectNames: (prefix) => gcsObjectNames(prefix),
  },
  {
    // abfss:// locations, written through the Blob API as on ADLS Gen2 accounts: PyIceberg's
    // fsspec FileIO has no wasbs:// and adlfs cannot parse wasbs:// paths (the Azure FileIO's
    // own test covers wasbs://).
    name: "Azure Blob (Azurite), abfss:// locations",
    start: () => azuriteService.start(),
    warehouse: (name) => `abfss://${azurite.container}@${azurite.account}.dfs.core.windows.net/${name}`,
    storageYaml: () => `azure: {endpoint: "${azurite.accountUrl}", sas_token: "${sas()}"}`,
    readerProperties: () => ({
      "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
      "adls.connection-string":
        `DefaultEndpointsProtocol=http;AccountName=${azurite.account};AccountKey=${azurite.accountKey};` +
        `BlobEndpoint=${azurite.accountUrl};`,
    }),
    python: () => adlfsPython(),
    objectNames: async (prefix) => {
      const names: string[] = [];
      for await (const blob of azuriteClient().getContainerClient(azurite.container).listBlobsFlat({ prefix })) {
        names.push(blob.name);
      }
      return names;
    },
  },
];

for (const [index, store] of stores.entries()) {
  describe(store.name, () => {
    const name = `cloudseed${index}_${run}`;
    const prefix = `${name}_`;
    const namespace = `${name}_topics`;
    const stateDir = mkdtempSync(join(tmpdir(), "floe-cloud-seed-"));
    const database = join(stateDir, "catalog.db");
    let python: string | undefined;

    before(async () => {
      await store.start();
      python = await store.python();
      await createTopics(prefix);
    });

    const job = () =>
      parseJob(
        seedWalkthroughJobYaml({
          name,
          prefix,
          iceberg: `    catalog: {type: sql, warehouse: "${store.warehouse(name)}", uri: "${database}"}
    target_engines: [duckdb, spark]
    storage:
      ${store.storageYaml()}`,
        }),
        join(stateDir, "job.yaml"),
      );

    const read = (table: string, columns: string[]) =>
      pyicebergRows(
        { type: "sql", uri: `sqlite:///${database}`, ...store.readerProperties() },
        `${namespace}.${table}`,
        columns,
        ...(python === undefined ? [] : [python]),
      );

    test("the seed walkthrough writes the tables into the store; PyIceberg reads expected.json", async () => {
      const target = { namespace, readers: { pyiceberg: read } };
      await producePhase(1, prefix);
      await assertSeedWalkthrough(1, await syncJob(job(), { stateDir }), target);
      await producePhase(2, prefix);
      await assertSeedWalkthrough(2, await syncJob(job(), { stateDir }), target);

      // Every file is in the store under the table's location.
      const names = await store.objectNames(`${name}/${namespace}/`);
      for (const table of ["customers", "orders"]) {
        const under = names.filter((n) => n.startsWith(`${name}/${namespace}/${table}/`));
        assert.ok(
          under.some((n) => n.includes("/data/") && n.endsWith(".parquet")),
          `${table}: parquet`,
        );
        assert.ok(
          under.some((n) => n.includes("/data/") && n.endsWith(".puffin")),
          `${table}: puffin`,
        );
        assert.ok(
          under.some((n) => n.includes("/metadata/") && n.endsWith(".metadata.json")),
          `${table}: metadata`,
        );
      }

      const third = await syncJob(job(), { stateDir });
      assert.equal(third.messagesRead, 0);
    });
  });
}
