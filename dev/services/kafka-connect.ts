// A Kafka Connect worker and its plugins, fetched from Maven Central into .local/kafka-connect/:
// the worker (connect-runtime and the JSON converter, kafka-connect/pom.xml) on one class path,
// and each plugin in a directory of its own that Connect's plugin.path names, so that its jars
// load in Connect's isolated plugin class loader. The benchmark runs the Iceberg sink in it
// (bench-systems.ts), the Debezium tests the Postgres connector (debezium.ts). Idempotent: each
// directory is named by its recipe's digest, and a changed pom builds beside the old one.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildBeside, copyMavenJars, localDir, root } from "./lib.ts";

const home = join(localDir, "kafka-connect");
export const connectWorkerPom = join(root, "dev", "services", "kafka-connect", "pom.xml");
/** The copy goal at a fixed plugin version, so an install does not float with Maven's default. */
export const copyGoal = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies";

export interface ConnectWorkerInstall {
  /** The worker's class path (ConnectStandalone). */
  classpath: string;
  kafkaVersion: string;
}

/** The Connect worker's jars, fetched unless there; `service` names who asked, for errors and the log. */
export function installConnectWorker(service: string): ConnectWorkerInstall {
  const dir = buildBeside([connectWorkerPom], join(home, "worker"), (staging) =>
    copyMavenJars(service, "the Kafka Connect worker", connectWorkerPom, staging, {
      goal: copyGoal,
      options: ["-DincludeScope=runtime"],
    }),
  );
  return { classpath: join(dir, "*"), kafkaVersion: pomProperty(connectWorkerPom, "kafka.version") };
}

/**
 * The runtime jars of `pom` as Connect plugin `plugin`, fetched unless there; returns the
 * directory to name in plugin.path (it holds the one plugin directory `plugin`).
 */
export function installConnectPlugin(service: string, what: string, pom: string, plugin: string): string {
  return buildBeside([pom], join(home, plugin), (staging) =>
    copyMavenJars(service, what, pom, join(staging, plugin), { goal: copyGoal, options: ["-DincludeScope=runtime"] }),
  );
}

/** The text of `<property>` in `pom`'s properties: the version a recipe pins. */
export function pomProperty(pom: string, property: string): string {
  const text = readFileSync(pom, "utf8");
  const match = new RegExp(`<${property.replaceAll(".", "\\.")}>([^<]+)</`).exec(text);
  if (match === null) throw new Error(`${pom} has no <${property}>`);
  return match[1]!;
}
