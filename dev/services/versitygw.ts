// versitygw, a second and independent S3 implementation for the tests (Versity's S3 gateway,
// here over a plain directory: its posix backend), so that floe's S3 FileIO is not tuned to
// MinIO's reading of the protocol alone. Built from the Go module proxy at a pinned version,
// the binary kept under .local/versitygw/, named by the version; data in .local/versitygw/data.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { CreateBucketCommand, ListBucketsCommand, S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import { daemonService, goInstall, isPortOpen, localDir, type Service, spawnDaemon } from "./lib.ts";

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

export const versitygwService: Service = daemonService({
  name,
  endpoint: versitygw.endpoint,
  waitingFor: `${versitygw.endpoint} to take the root credentials`,
  ports: [port],
  portSetting: "FLOE_TEST_VERSITYGW_PORT",
  healthy,
  install: installBinary,
  binary,
  launch() {
    mkdirSync(dataDir, { recursive: true });
    return spawnDaemon(
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
  },
  ready: () => createBucket(versitygw.bucket),
  detail: `data ${dataDir}`,
});
