// A second instance of the Iceberg REST fixture (the same jars and launcher as iceberg-rest.ts),
// with its warehouse in a MinIO bucket: s3://floe-rest-warehouse/warehouse, written through
// Iceberg's own S3FileIO with MinIO's root credentials. The catalog writes its metadata files to
// the bucket itself, as a production catalog does. Its SQLite database is its own, under
// .local/iceberg-rest-s3, and it listens on its own port: the instance with a local warehouse
// (8181) is never touched by it.
//
// The fixture vends no credentials; the tests put dev/services/credential-vending-proxy.ts in
// front of it for that.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { installServer, launcherClass } from "./iceberg-rest.ts";
import {
  daemonPid,
  isPortOpen,
  localDir,
  requireCommand,
  type Service,
  ServiceError,
  spawnDaemon,
  stopDaemon,
  waitFor,
} from "./lib.ts";
import { minio } from "./minio.ts";

const name = "iceberg-rest-s3";
const home = join(localDir, "iceberg-rest-s3");
const port = Number(process.env.FLOE_TEST_REST_S3_PORT ?? 8182);

export const restS3Catalog = {
  uri: `http://127.0.0.1:${port}`,
  port,
  warehouse: `s3://${minio.warehouseBucket}/warehouse`,
  database: join(home, "catalog.db"),
};

async function healthy(): Promise<boolean> {
  try {
    const response = await fetch(`${restS3Catalog.uri}/v1/config`, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

export const icebergRestS3: Service = {
  name,

  async install() {
    installServer();
  },

  async start() {
    if (await healthy()) return;
    const starting = daemonPid(name);
    if (starting !== undefined) {
      await waitFor(name, `GET ${restS3Catalog.uri}/v1/config`, healthy, { pid: starting, timeoutMs: 60_000 });
      return;
    }
    if (await isPortOpen(port)) {
      throw new ServiceError(
        name,
        `port ${port} is taken by a process that does not answer GET /v1/config; stop it or set FLOE_TEST_REST_S3_PORT`,
      );
    }
    requireCommand(name, "java", ["-version"]);
    const classpath = installServer();
    mkdirSync(home, { recursive: true });
    const pid = spawnDaemon(
      name,
      "java",
      ["-Xmx512m", "-Djava.net.preferIPv4Stack=true", "-cp", classpath, launcherClass],
      {
        cwd: home,
        env: {
          CATALOG_URI: `jdbc:sqlite:file:${restS3Catalog.database}`,
          CATALOG_WAREHOUSE: restS3Catalog.warehouse,
          CATALOG_REST_PORT: String(port),
          CATALOG_CLIENTS: "1",
          // Catalog properties: io-impl, s3.endpoint, s3.path-style-access, s3.access-key-id, ...
          CATALOG_IO__IMPL: "org.apache.iceberg.aws.s3.S3FileIO",
          CATALOG_S3_ENDPOINT: minio.endpoint,
          CATALOG_S3_PATH__STYLE__ACCESS: "true",
          CATALOG_S3_ACCESS__KEY__ID: minio.rootUser,
          CATALOG_S3_SECRET__ACCESS__KEY: minio.rootPassword,
          CATALOG_CLIENT_REGION: minio.region,
          // The AWS SDK looks no further than these: no instance metadata, no amazonaws.com.
          AWS_REGION: minio.region,
          AWS_EC2_METADATA_DISABLED: "true",
        },
      },
    );
    await waitFor(name, `GET ${restS3Catalog.uri}/v1/config`, healthy, { pid, timeoutMs: 60_000 });
  },

  async stop() {
    await stopDaemon(name);
  },

  async status() {
    const pid = daemonPid(name);
    if (await healthy()) {
      const owner = pid === undefined ? "not started by these scripts" : `pid ${pid}`;
      return { running: true, detail: `${restS3Catalog.uri} (${owner}), warehouse ${restS3Catalog.warehouse}` };
    }
    return {
      running: false,
      detail:
        pid === undefined
          ? `nothing answers at ${restS3Catalog.uri}`
          : `pid ${pid} is alive but ${restS3Catalog.uri}/v1/config does not answer`,
    };
  },
};
