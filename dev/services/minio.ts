// MinIO, the S3-compatible object store of the tests: one server on 127.0.0.1 (S3 API and STS on
// one port, the console on another), data under .local/minio/data. It is built from source with
// the Go module proxy (`go install`, a few minutes on two cores) and the binary is kept under
// .local/minio/, named by the version, so a version bump builds beside the one a server runs.
//
// The root credentials are fixed test values: the server listens on loopback only. Temporary
// credentials come from its STS endpoint (AssumeRole, signed with the root credentials).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { CreateBucketCommand, ListBucketsCommand, S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import { daemonService, goInstall, localDir, type Service, spawnDaemon } from "./lib.ts";

const name = "minio";
/** A pinned commit of github.com/minio/minio (its pseudo-version): the server does not change under the tests. */
export const MINIO_VERSION = "v0.0.0-20260212201848-7aac2a2c5b7c";
const home = join(localDir, "minio");
const binDir = join(home, `bin-${MINIO_VERSION}`);
const binary = join(binDir, "minio");
const dataDir = join(home, "data");
const port = Number(process.env.FLOE_TEST_MINIO_PORT ?? 9000);
const consolePort = Number(process.env.FLOE_TEST_MINIO_CONSOLE_PORT ?? 9001);

/** Where the tests find the store. `region` is the server's own (MINIO_SITE_REGION). */
export const minio = {
  endpoint: `http://127.0.0.1:${port}`,
  port,
  region: "us-east-1",
  rootUser: "floe-minio-root",
  rootPassword: "floe-minio-root-secret",
  /** The warehouse bucket of the S3 REST fixture (dev/services/iceberg-rest-s3.ts). */
  warehouseBucket: "floe-rest-warehouse",
};

/** An S3 client with the root credentials, for the services and the tests' own checks. */
export function minioRootClient(): S3Client {
  return new S3Client({
    endpoint: minio.endpoint,
    region: minio.region,
    forcePathStyle: true,
    credentials: { accessKeyId: minio.rootUser, secretAccessKey: minio.rootPassword },
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    maxAttempts: 1,
  });
}

async function live(): Promise<boolean> {
  try {
    const response = await fetch(`${minio.endpoint}/minio/health/live`, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** Live and ours: it takes our root credentials (another MinIO on the port would refuse them). */
async function healthy(): Promise<boolean> {
  if (!(await live())) return false;
  const client = minioRootClient();
  try {
    await client.send(new ListBucketsCommand({}), { abortSignal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}

/** Builds the pinned MinIO into a staging directory renamed into place: a binary that exists is whole. */
function installBinary(): void {
  goInstall(name, "github.com/minio/minio", MINIO_VERSION, binDir);
}

async function createBucket(bucket: string): Promise<void> {
  const client = minioRootClient();
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    if (!(error instanceof S3ServiceException && error.name === "BucketAlreadyOwnedByYou")) throw error;
  } finally {
    client.destroy();
  }
}

export const minioService: Service = daemonService({
  name,
  endpoint: minio.endpoint,
  waitingFor: `${minio.endpoint} to take the root credentials`,
  ports: [port, consolePort],
  portSetting: "FLOE_TEST_MINIO_PORT / FLOE_TEST_MINIO_CONSOLE_PORT",
  healthy,
  install: installBinary,
  binary,
  launch() {
    mkdirSync(dataDir, { recursive: true });
    return spawnDaemon(
      name,
      binary,
      ["server", "--quiet", "--address", `127.0.0.1:${port}`, "--console-address", `127.0.0.1:${consolePort}`, dataDir],
      {
        cwd: home,
        env: {
          MINIO_ROOT_USER: minio.rootUser,
          MINIO_ROOT_PASSWORD: minio.rootPassword,
          MINIO_SITE_REGION: minio.region,
          // Nothing leaves the machine: no update checks, no call-home.
          MINIO_UPDATE: "off",
          MINIO_CALLHOME_ENABLE: "off",
        },
      },
    );
  },
  ready: () => createBucket(minio.warehouseBucket),
  detail: `data ${dataDir}`,
});
