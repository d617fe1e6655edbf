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
  daemonService,
  localDir,
  requireCommand,
  root,
  runStep,
  type Service,
  spawnDaemon,
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

/** `GET <uri>/v1/config` answers: the fixture is up. */
function configAnswers(uri: string): () => Promise<boolean> {
  return async () => {
    try {
      const response = await fetch(`${uri}/v1/config`, { signal: AbortSignal.timeout(1000) });
      await response.body?.cancel();
      return response.ok;
    } catch {
      return false;
    }
  };
}

/**
 * One instance of the fixture as a service: its name, port (and the variable that moves it),
 * and the CATALOG_* variables the fixture turns into catalog properties (CATALOG_REST_PORT ->
 * rest.port). It already defaults to the JdbcCatalog with jdbc.schema-version=V1 (views).
 */
export function restFixtureService(fixture: {
  name: string;
  home: string;
  uri: string;
  port: number;
  portSetting: string;
  database: string;
  warehouse: string;
  /** Made before the start: a local warehouse directory, or the fixture's home. */
  directory: string;
  catalogEnv?: Record<string, string>;
}): Service {
  return daemonService({
    name: fixture.name,
    endpoint: fixture.uri,
    waitingFor: `GET ${fixture.uri}/v1/config`,
    ports: [fixture.port],
    portSetting: fixture.portSetting,
    healthy: configAnswers(fixture.uri),
    install() {
      requireCommand(fixture.name, "java", ["-version"]);
      installServer();
    },
    launch() {
      mkdirSync(fixture.directory, { recursive: true });
      return spawnDaemon(
        fixture.name,
        "java",
        [
          // It shares a 2-core machine with Kafka and Spark; a catalog of test tables needs little.
          "-Xmx512m",
          // An IPv4 socket on 127.0.0.1 rather than a dual-stack one on ::ffff:127.0.0.1: the same
          // reach, and what `ss -ltn` shows is plainly the loopback address.
          "-Djava.net.preferIPv4Stack=true",
          "-cp",
          installServer(),
          launcherClass,
        ],
        {
          cwd: fixture.home,
          env: {
            CATALOG_URI: `jdbc:sqlite:file:${fixture.database}`,
            CATALOG_WAREHOUSE: fixture.warehouse,
            CATALOG_REST_PORT: String(fixture.port),
            // One JDBC connection: with the default pool of two, a burst of concurrent requests
            // makes SQLite answer SQLITE_BUSY (500s), after which the database stayed locked for
            // every later request until a restart.
            CATALOG_CLIENTS: "1",
            ...fixture.catalogEnv,
          },
        },
      );
    },
    detail: `warehouse ${fixture.warehouse}`,
  });
}

export const icebergRest: Service = restFixtureService({
  name,
  home,
  uri: restCatalog.uri,
  port,
  portSetting: "FLOE_TEST_REST_PORT",
  database: restCatalog.database,
  warehouse: restCatalog.warehouse,
  directory: restCatalog.warehouse,
});
