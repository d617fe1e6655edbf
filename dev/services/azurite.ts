// Azurite, the Azure Blob Storage of the tests (npm, a pinned devDependency): the blob service
// alone on 127.0.0.1, path-style (http://127.0.0.1:10000/<account>/<container>/<blob>), with
// the emulator's fixed, published development account and key; data under .local/azurite/.
// SAS tokens are signed by the tests with that key. Azurite has no ADLS Gen2 (DFS) endpoint.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { BlobServiceClient, RestError, StorageSharedKeyCredential } from "@azure/storage-blob";
import {
  daemonPid,
  isPortOpen,
  localDir,
  root,
  type Service,
  ServiceError,
  type ServiceStatus,
  spawnDaemon,
  stopDaemon,
  waitFor,
} from "./lib.ts";

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

export const azuriteService: Service = {
  name,

  async install() {
    if (!existsSync(main))
      throw new ServiceError(name, `${main} is missing; run npm install (azurite is a devDependency)`);
  },

  async start() {
    if (!(await healthy())) {
      let pid = daemonPid(name);
      if (pid === undefined) {
        if (await isPortOpen(port)) {
          throw new ServiceError(
            name,
            `127.0.0.1:${port} is taken by a process that is not this Azurite; stop it or set FLOE_TEST_AZURITE_PORT`,
          );
        }
        await this.install();
        mkdirSync(home, { recursive: true });
        pid = spawnDaemon(
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
      }
      await waitFor(name, `${azurite.accountUrl} to answer`, healthy, { pid, timeoutMs: 60_000 });
    }
    await createContainer(azurite.container);
  },

  async stop() {
    await stopDaemon(name);
  },

  async status(): Promise<ServiceStatus> {
    const pid = daemonPid(name);
    if (await healthy()) {
      const owner = pid === undefined ? "not started by these scripts" : `pid ${pid}`;
      return { running: true, detail: `${azurite.accountUrl} (${owner}), data ${home}` };
    }
    return {
      running: false,
      detail:
        pid === undefined ? `nothing answers at ${azurite.accountUrl}` : `pid ${pid} is alive but not healthy yet`,
    };
  },
};
