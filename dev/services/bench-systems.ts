// What the comparison benchmark (bench/compare/) runs besides floe, fetched from Maven Central
// into .local/: a Kafka Connect worker (kafka-connect.ts) with the Apache Iceberg sink as a plugin, and the
// Kafka source of Spark Structured Streaming (PySpark itself is the readers' venv,
// dev/services/readers.ts). Not one of the services of `npm test`: nothing but the benchmark
// needs it, so `npm run bench` installs it (idempotent; a changed pom builds beside the old).
import { join } from "node:path";
import { copyGoal, installConnectPlugin, installConnectWorker, pomProperty } from "./kafka-connect.ts";
import { buildBeside, copyMavenJars, localDir, root } from "./lib.ts";

const name = "bench-systems";
const recipes = join(root, "dev", "services", "bench-systems");
const pluginPom = join(recipes, "connect-plugin", "pom.xml");
const sparkKafkaPom = join(recipes, "spark-kafka", "pom.xml");

export interface ConnectInstall {
  /** The worker's class path (ConnectStandalone). */
  classpath: string;
  /** Connect's plugin.path: one directory, iceberg/, holding the sink and its runtime. */
  pluginPath: string;
  /** The version of the sink (the jar name's). */
  sinkVersion: string;
  kafkaVersion: string;
}

/** The Connect worker (kafka-connect.ts) and the Iceberg sink plugin, fetched unless there. */
export function installConnect(): ConnectInstall {
  const worker = installConnectWorker(name);
  return {
    classpath: worker.classpath,
    pluginPath: installConnectPlugin(name, "the Iceberg Kafka Connect sink", pluginPom, "iceberg"),
    sinkVersion: pomProperty(pluginPom, "iceberg.version"),
    kafkaVersion: worker.kafkaVersion,
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
