// The Iceberg REST catalog of the tests: Apache Iceberg's own REST fixture (RESTCatalogServer),
// run from Maven Central jars over a JDBC catalog in SQLite and a local warehouse directory.
// A launcher of ours (iceberg-rest/LoopbackRESTCatalogServer.java) starts the fixture's catalog
// and servlet on 127.0.0.1 only, as every other test service listens: the fixture itself has no
// bind option and listens on every interface.
// It is the reference implementation of the REST protocol: the commits floe sends are checked
// by Java Iceberg's own table metadata rules (it never opens manifests or deletion vectors).
import { mkdirSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import {
  buildBeside,
  copyMavenJars,
  daemonPid,
  isPortOpen,
  localDir,
  requireCommand,
  root,
  runStep,
  type Service,
  ServiceError,
  spawnDaemon,
  stopDaemon,
  waitFor,
} from "./lib.ts";

const name = "iceberg-rest";
const home = join(localDir, "iceberg-rest");
const recipes = join(root, "dev", "services", "iceberg-rest");
const pom = join(recipes, "pom.xml");
const launcher = join(recipes, "LoopbackRESTCatalogServer.java");
export const launcherClass = "org.apache.iceberg.rest.LoopbackRESTCatalogServer";
const port = Number(process.env.FLOE_TEST_REST_PORT ?? 8181);

/** Where the tests find the catalog. Table locations are plain absolute paths under `warehouse`. */
export const restCatalog = {
  uri: `http://127.0.0.1:${port}`,
  port,
  // A plain path rather than a file: URI: table, metadata and data file locations are then plain
  // absolute paths too, with no scheme for floe's local FileIO or a reader to resolve.
  warehouse: resolve(process.env.FLOE_TEST_REST_WAREHOUSE ?? join(home, "warehouse")),
  /** The SQLite file of the JDBC backend; its catalog name (catalog_name column) is "rest_backend". */
  database: join(home, "catalog.db"),
};

async function healthy(): Promise<boolean> {
  try {
    const response = await fetch(`${restCatalog.uri}/v1/config`, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * The fixture's jars (libs/) and the compiled launcher (classes/), in a directory named by the
 * digest of the pom and the launcher's source: an edited recipe builds a new directory beside
 * the one a running server loads its classes from. Returns the classpath.
 */
export function installServer(): string {
  const dir = buildBeside([pom, launcher], join(home, "server"), (staging) => {
    const libs = join(staging, "libs");
    copyMavenJars(name, "the fixture's jars", pom, libs);
    requireCommand(name, "javac", ["-version"]);
    runStep(name, "compiling the loopback launcher", "javac", [
      "-nowarn",
      "-cp",
      join(libs, "*"),
      "-d",
      join(staging, "classes"),
      launcher,
    ]);
  });
  return [join(dir, "libs", "*"), join(dir, "classes")].join(delimiter);
}

export const icebergRest: Service = {
  name,

  async install() {
    installServer();
  },

  async start() {
    if (await healthy()) return;
    // Another test run may have spawned it a moment ago: wait for that one rather than race it
    // for the port.
    const starting = daemonPid(name);
    if (starting !== undefined) {
      await waitFor(name, `GET ${restCatalog.uri}/v1/config`, healthy, { pid: starting, timeoutMs: 60_000 });
      return;
    }
    if (await isPortOpen(port)) {
      throw new ServiceError(
        name,
        `port ${port} is taken by a process that does not answer GET /v1/config; stop it or set FLOE_TEST_REST_PORT`,
      );
    }
    requireCommand(name, "java", ["-version"]);
    const classpath = installServer();
    mkdirSync(restCatalog.warehouse, { recursive: true });
    // The fixture turns every CATALOG_* variable into a catalog property (CATALOG_REST_PORT ->
    // rest.port); it already defaults to the JdbcCatalog with jdbc.schema-version=V1 (views).
    const pid = spawnDaemon(
      name,
      "java",
      [
        // It shares a 2-core machine with Kafka and Spark; a catalog of test tables needs little.
        "-Xmx512m",
        // An IPv4 socket on 127.0.0.1 rather than a dual-stack one on ::ffff:127.0.0.1: the same
        // reach, and what `ss -ltn` shows is plainly the loopback address.
        "-Djava.net.preferIPv4Stack=true",
        "-cp",
        classpath,
        launcherClass,
      ],
      {
        cwd: home,
        env: {
          CATALOG_URI: `jdbc:sqlite:file:${restCatalog.database}`,
          CATALOG_WAREHOUSE: restCatalog.warehouse,
          CATALOG_REST_PORT: String(port),
          // One JDBC connection: with the default pool of two, a burst of concurrent requests
          // makes SQLite answer SQLITE_BUSY (500s), after which the database stayed locked for
          // every later request until a restart.
          CATALOG_CLIENTS: "1",
        },
      },
    );
    await waitFor(name, `GET ${restCatalog.uri}/v1/config`, healthy, { pid, timeoutMs: 60_000 });
  },

  async stop() {
    await stopDaemon(name);
  },

  async status() {
    if (await healthy()) {
      const pid = daemonPid(name);
      const owner = pid === undefined ? "not started by these scripts" : `pid ${pid}`;
      return { running: true, detail: `${restCatalog.uri} (${owner}), warehouse ${restCatalog.warehouse}` };
    }
    const pid = daemonPid(name);
    return {
      running: false,
      detail:
        pid === undefined
          ? `nothing answers at ${restCatalog.uri}`
          : `pid ${pid} is alive but ${restCatalog.uri}/v1/config does not answer`,
    };
  },
};
