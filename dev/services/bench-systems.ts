// What the comparison benchmark (bench/compare/) runs besides floe, fetched from Maven Central
// into .local/bench/: a Kafka Connect worker with the Apache Iceberg sink as a plugin, and the
// Kafka source of Spark Structured Streaming (PySpark itself is the readers' venv,
// dev/services/readers.ts). Not one of the services of `npm test`: nothing but the benchmark
// needs it, so `npm run bench` installs it (idempotent; a changed pom builds beside the old).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildBeside, copyMavenJars, localDir, root } from "./lib.ts";

const name = "bench-systems";
const recipes = join(root, "dev", "services", "bench-systems");
const connectPom = join(recipes, "connect", "pom.xml");
const pluginPom = join(recipes, "connect-plugin", "pom.xml");
const sparkKafkaPom = join(recipes, "spark-kafka", "pom.xml");
/** The copy goal at a fixed plugin version, so an install does not float with Maven's default. */
const copyGoal = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies";

export interface ConnectInstall {
  /** The worker's class path (ConnectStandalone). */
  classpath: string;
  /** Connect's plugin.path: one directory, iceberg/, holding the sink and its runtime. */
  pluginPath: string;
  /** The version of the sink (the jar name's). */
  sinkVersion: string;
  kafkaVersion: string;
}

/** The Connect worker and the Iceberg sink plugin, fetched unless there. */
export function installConnect(): ConnectInstall {
  const dir = buildBeside([connectPom, pluginPom], join(localDir, "bench", "connect"), (staging) => {
    copyMavenJars(name, "the Kafka Connect worker", connectPom, join(staging, "libs"), {
      goal: copyGoal,
      options: ["-DincludeScope=runtime"],
    });
    copyMavenJars(name, "the Iceberg Kafka Connect sink", pluginPom, join(staging, "plugins", "iceberg"), {
      goal: copyGoal,
      options: ["-DincludeScope=runtime"],
    });
  });
  return {
    classpath: join(dir, "libs", "*"),
    pluginPath: join(dir, "plugins"),
    sinkVersion: pomProperty(pluginPom, "iceberg.version"),
    kafkaVersion: pomProperty(connectPom, "kafka.version"),
  };
}

export interface SparkKafkaInstall {
  /** The directory of the jars Spark adds for its Kafka source. */
  jars: string;
  connectorVersion: string;
}

/** spark-sql-kafka and what it needs beyond PySpark's jars, fetched unless there. */
export function installSparkKafka(): SparkKafkaInstall {
  const jars = buildBeside([sparkKafkaPom], join(localDir, "bench", "spark-kafka"), (staging) =>
    copyMavenJars(name, "Spark's Kafka source", sparkKafkaPom, staging, {
      goal: copyGoal,
      options: ["-DexcludeTransitive=true"],
    }),
  );
  return { jars, connectorVersion: pomProperty(sparkKafkaPom, "spark.version") };
}

function pomProperty(pom: string, property: string): string {
  const text = readFileSync(pom, "utf8");
  const match = new RegExp(`<${property.replaceAll(".", "\\.")}>([^<]+)</`).exec(text);
  if (match === null) throw new Error(`${pom} has no <${property}>`);
  return match[1]!;
}
