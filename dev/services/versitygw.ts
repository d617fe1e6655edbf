// versitygw, a second and independent S3 implementation for the tests (Versity's S3 gateway,
// here over a plain directory: its posix backend), so that floe's S3 FileIO is not tuned to
// MinIO's reading of the protocol alone. Built from the Go module proxy at a pinned version,
// the binary kept under .local/versitygw/, named by the version; data in .local/versitygw/data.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { CreateBucketCommand, ListBucketsCommand, S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import {
  daemonPid,
  goInstall,
  isPortOpen,
  localDir,
  type Service,
  ServiceError,
  type ServiceStatus,
  spawnDaemon,
  stopDaemon,
  waitFor,
} from "./lib.ts";

const name = "versitygw";
export const VERSITYGW_VERSION = "v1.8.0";
const home = join(localDir, "versitygw");
const binDir = join(home, `bin-${VERSITYGW_VERSION}`);
const binary = join(binDir, "versitygw");
const dataDir = join(home, "data");
const port = Number(process.env.FLOE_TEST_VERSITYGW_PORT ?? 7070);

export const versitygw = {
  endpoint: `http://127.0.0.1:${port}`,
  port,
  region: "us-east-1",
  rootUser: "floe-versitygw-root",
  rootPassword: "floe-versitygw-root-secret",
  /** A bucket the tests write into. */
  bucket: "floe-versitygw",
};

export function versitygwRootClient(): S3Client {
  return new S3Client({
    endpoint: versitygw.endpoint,
    region: versitygw.region,
    forcePathStyle: true,
    credentials: { accessKeyId: versitygw.rootUser, secretAccessKey: versitygw.rootPassword },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    maxAttempts: 1,
  });
}

/** It answers, and takes our root credentials. */
async function healthy(): Promise<boolean> {
  if (!(await isPortOpen(port))) return false;
  const client = versitygwRootClient();
  try {
    await client.send(new ListBucketsCommand({}), { abortSignal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}

function installBinary(): void {
  goInstall(name, "github.com/versity/versitygw/cmd/versitygw", VERSITYGW_VERSION, binDir);
}

async function createBucket(bucket: string): Promise<void> {
  const client = versitygwRootClient();
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    const taken = ["BucketAlreadyOwnedByYou", "BucketAlreadyExists"];
    if (!(error instanceof S3ServiceException && taken.includes(error.name))) throw error;
  } finally {
    client.destroy();
  }
}

export const versitygwService: Service = {
  name,

  async install() {
    installBinary();
  },

  async start() {
    if (!(await healthy())) {
      let pid = daemonPid(name);
      if (pid === undefined) {
        if (await isPortOpen(port)) {
          throw new ServiceError(
            name,
            `127.0.0.1:${port} is taken by a process that is not this versitygw; stop it or set FLOE_TEST_VERSITYGW_PORT`,
          );
        }
        installBinary();
        mkdirSync(dataDir, { recursive: true });
        pid = spawnDaemon(
          name,
          binary,
          [
            "--quiet",
            "--access",
            versitygw.rootUser,
            "--secret",
            versitygw.rootPassword,
            "--region",
            versitygw.region,
            "--port",
            `127.0.0.1:${port}`,
            "posix",
            dataDir,
          ],
          { cwd: home },
        );
      }
      await waitFor(name, `${versitygw.endpoint} to take the root credentials`, healthy, { pid, timeoutMs: 60_000 });
    }
    await createBucket(versitygw.bucket);
  },

  async stop() {
    await stopDaemon(name);
  },

  async status(): Promise<ServiceStatus> {
    const pid = daemonPid(name);
    if (await healthy()) {
      const owner = pid === undefined ? "not started by these scripts" : `pid ${pid}`;
      return { running: true, detail: `${versitygw.endpoint} (${owner}), data ${dataDir}` };
    }
    if (!existsSync(binary)) return { running: false, detail: `not built: ${binary}` };
    return {
      running: false,
      detail:
        pid === undefined ? `nothing answers at ${versitygw.endpoint}` : `pid ${pid} is alive but not healthy yet`,
    };
  },
};
