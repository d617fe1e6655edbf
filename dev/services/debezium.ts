// What the tests that capture changes from a real Postgres need (test/helpers/debezium-postgres.ts):
// Debezium's Postgres connector as a Kafka Connect plugin (debezium/pom.xml, from Maven Central),
// the Connect worker that runs it (kafka-connect.ts, the benchmark's too), and PostgreSQL 15's
// server binaries (Debian's postgresql-15: initdb, postgres). Not a daemon: each test starts its
// own Postgres cluster and Connect worker, on free ports in a temp directory, and stops them,
// so start only checks that the install is there. Install is idempotent and instant once done.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type ConnectWorkerInstall, installConnectPlugin, installConnectWorker, pomProperty } from "./kafka-connect.ts";
import { root, type Service, ServiceError } from "./lib.ts";

const name = "debezium";
const pluginPom = join(root, "dev", "services", "debezium", "pom.xml");
/** Debian's layout; FLOE_TEST_POSTGRES_BIN names another directory holding initdb and postgres. */
const postgresBin = process.env.FLOE_TEST_POSTGRES_BIN ?? "/usr/lib/postgresql/15/bin";

export interface DebeziumInstall extends ConnectWorkerInstall {
  /** Connect's plugin.path: one directory, debezium-postgres/, holding the connector and its runtime. */
  pluginPath: string;
  debeziumVersion: string;
  /** The directory of initdb and postgres. */
  postgresBin: string;
}

/** The Postgres binaries, or a ServiceError that says how to get them. */
function requirePostgres(): void {
  for (const tool of ["initdb", "postgres"]) {
    if (!existsSync(join(postgresBin, tool))) {
      throw new ServiceError(
        name,
        `${join(postgresBin, tool)} is missing: apt-get install postgresql-15 (or set FLOE_TEST_POSTGRES_BIN to the directory of a PostgreSQL 15 server's initdb and postgres)`,
      );
    }
  }
}

/** The worker, the connector plugin and the Postgres binaries; fetches what is missing. */
export function installDebezium(): DebeziumInstall {
  requirePostgres();
  const worker = installConnectWorker(name);
  return {
    ...worker,
    pluginPath: installConnectPlugin(name, "Debezium's Postgres connector", pluginPom, "debezium-postgres"),
    debeziumVersion: pomProperty(pluginPom, "debezium.version"),
    postgresBin,
  };
}

export const debeziumService: Service = {
  name,

  async install() {
    installDebezium();
  },

  async start() {
    requirePostgres();
  },

  async stop() {},

  async status() {
    try {
      requirePostgres();
    } catch (error) {
      return { running: false, detail: (error as Error).message };
    }
    return {
      running: true,
      detail: `not a daemon: tests start their own Postgres (${postgresBin}) and Connect worker with Debezium ${pomProperty(pluginPom, "debezium.version")}`,
    };
  },
};
