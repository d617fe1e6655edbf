// Azurite, the Azure Blob Storage of the tests (npm, a pinned devDependency): the blob service
// alone on 127.0.0.1, path-style (http://127.0.0.1:10000/<account>/<container>/<blob>), with
// the emulator's fixed, published development account and key; data under .local/azurite/.
// SAS tokens are signed by the tests with that key. Azurite has no ADLS Gen2 (DFS) endpoint.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { BlobServiceClient, RestError, StorageSharedKeyCredential } from "@azure/storage-blob";
import { daemonService, isPortOpen, localDir, root, type Service, ServiceError, spawnDaemon } from "./lib.ts";

const name = "azurite";
const home = join(localDir, "azurite");
const port = Number(process.env.FLOE_TEST_AZURITE_PORT ?? 10000);
const main = join(root, "node_modules", "azurite", "dist", "src", "blob", "main.js");

export const azurite = {
  /** The emulator's well-known development account (documented by Microsoft, not a secret). */
  account: "devstoreaccount1",
  accountKey: "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
  port,
  /** The account's blob service URL: path-style, the account in the path. */
  accountUrl: `http://127.0.0.1:${port}/devstoreaccount1`,
  /** The container the tests write into. */
  container: "floe-azure-warehouse",
};

export function azuriteClient(): BlobServiceClient {
  return new BlobServiceClient(azurite.accountUrl, new StorageSharedKeyCredential(azurite.account, azurite.accountKey));
}

async function healthy(): Promise<boolean> {
  if (!(await isPortOpen(port))) return false;
  try {
    await azuriteClient().getProperties({ abortSignal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  }
}

export async function createContainer(container: string): Promise<void> {
  try {
    await azuriteClient().getContainerClient(container).create();
  } catch (error) {
    if (!(error instanceof RestError && error.statusCode === 409)) throw error;
  }
}

function install(): void {
  if (!existsSync(main))
    throw new ServiceError(name, `${main} is missing; run npm install (azurite is a devDependency)`);
}

export const azuriteService: Service = daemonService({
  name,
  endpoint: azurite.accountUrl,
  waitingFor: `${azurite.accountUrl} to answer`,
  ports: [port],
  portSetting: "FLOE_TEST_AZURITE_PORT",
  healthy,
  install,
  launch() {
    mkdirSync(home, { recursive: true });
    return spawnDaemon(
      name,
      process.execPath,
      [
        main,
        "--blobHost",
        "127.0.0.1",
        "--blobPort",
        String(port),
        "--location",
        home,
        // The SDK may speak a newer service version than Azurite knows; the calls floe makes exist in both.
        "--skipApiVersionCheck",
        "--disableProductStyleUrl",
      ],
      { cwd: home },
    );
  },
  ready: () => createContainer(azurite.container),
  detail: `data ${home}`,
});
