// Spark Structured Streaming (spark_stream.py) through spark-submit, local[2]: the JVM, and the
// Python driver it starts and waits for, measured as one tree from start to exit. The query is
// trigger(availableNow=True), so the process exits after the batch that holds the last message.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { SparkKafkaInstall } from "../../../dev/services/bench-systems.ts";
import { readerEnv } from "../../../dev/services/readers.ts";
import { catalogUri } from "../catalog.ts";
import { type Measured, measure } from "../measure.ts";

/** The driver's heap: the whole of a local Spark (driver and executors are one JVM). */
export const SPARK_DRIVER_MEMORY = "2g";
/**
 * Shuffle partitions of the MERGE and the per-batch dedup: Spark's default of 200 is for a
 * cluster, and on two cores it would cost Spark seconds of task overhead per batch.
 */
export const SPARK_SHUFFLE_PARTITIONS = 4;

export interface SparkRun {
  install: SparkKafkaInstall;
  bootstrap: string;
  topic: string;
  namespace: string;
  table: string;
  mode: "append" | "merge";
  dir: string;
  timeoutSeconds: number;
}

export async function runSpark(run: SparkRun): Promise<Measured> {
  const jars = [readerEnv.sparkJars, run.install.jars].flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith(".jar"))
      .map((f) => join(dir, f)),
  );
  return measure({
    command: join(readerEnv.python, "..", "spark-submit"),
    args: [
      "--master",
      "local[2]",
      "--driver-memory",
      SPARK_DRIVER_MEMORY,
      "--jars",
      jars.join(","),
      "--conf",
      "spark.driver.host=127.0.0.1",
      "--conf",
      "spark.driver.bindAddress=127.0.0.1",
      "--conf",
      "spark.ui.enabled=false",
      "--conf",
      "spark.ui.showConsoleProgress=false",
      "--conf",
      "spark.sql.catalogImplementation=in-memory",
      "--conf",
      "spark.sql.session.timeZone=UTC",
      "--conf",
      `spark.sql.shuffle.partitions=${SPARK_SHUFFLE_PARTITIONS}`,
      join(import.meta.dirname, "spark_stream.py"),
      run.mode,
      run.bootstrap,
      run.topic,
      catalogUri,
      run.namespace,
      run.table,
      join(run.dir, "checkpoint"),
    ],
    env: {
      SPARK_LOCAL_IP: "127.0.0.1",
      PYSPARK_PYTHON: readerEnv.python,
      PYTHONDONTWRITEBYTECODE: "1",
    },
    cwd: run.dir,
    log: join(run.dir, "spark.log"),
    timeoutSeconds: run.timeoutSeconds,
  });
}
