// The Apache Iceberg Kafka Connect sink, in Kafka Connect standalone mode (ConnectStandalone, what
// connect-standalone.sh runs, with that script's JVM options), 2 tasks, a commit every
// COMMIT_INTERVAL_MS. The worker never exits: its wall time ends when the table's current
// snapshot holds every message (its summary's total-records), found by polling the catalog.
//
// Its table is made up front with the orders' columns: the sink's auto-create takes each
// column's type from the first record it sees, and a first `amount` of 12 (JSON has no 12.0)
// would make the column a long. In the upsert run the table gets `id` as its identifier field and
// the sink `iceberg.tables.default-id-columns=id`: the sink (1.10) has no upsert mode, so it
// appends every message all the same, and the check of the table says so.

import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { createTopic } from "../../../dev/kafka.ts";
import type { ConnectInstall } from "../../../dev/services/bench-systems.ts";
import { logDir } from "../../../dev/services/lib.ts";
import { catalogUri, createTable, currentSummary, ORDERS_SCHEMA } from "../catalog.ts";
import { type Measured, measure } from "../measure.ts";

/** Short against the run (seconds) and above the sink's own commit timeout floor. */
export const COMMIT_INTERVAL_MS = 1000;
const POLL_MS = 200;
/** A worker whose table has not grown for this long is given up (seen stalling for 90 s on a loaded machine). */
const STALL_SECONDS = 300;
/** connect-standalone.sh's defaults (KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS). */
const JVM_OPTIONS = [
  "-Xms256M",
  "-Xmx2G",
  "-server",
  "-XX:+UseG1GC",
  "-XX:MaxGCPauseMillis=20",
  "-XX:InitiatingHeapOccupancyPercent=35",
  "-XX:+ExplicitGCInvokesConcurrent",
  "-Djava.awt.headless=true",
];

export interface ConnectRun {
  install: ConnectInstall;
  bootstrap: string;
  topic: string;
  messages: number;
  namespace: string;
  table: string;
  mode: "append" | "upsert";
  dir: string;
  timeoutSeconds: number;
}

export async function runConnect(run: ConnectRun): Promise<Measured> {
  const schema =
    run.mode === "upsert"
      ? {
          ...ORDERS_SCHEMA,
          "identifier-field-ids": [1],
          fields: ORDERS_SCHEMA.fields.map((f) => (f.name === "id" ? { ...f, required: true } : f)),
        }
      : ORDERS_SCHEMA;
  await createTable(run.namespace, run.table, schema, { "format-version": "2" });
  const controlTopic = `${run.namespace}-control`;
  await createTopic(controlTopic, 1, run.bootstrap);
  const port = await freePort();
  const worker = join(run.dir, "worker.properties");
  const connector = join(run.dir, "connector.properties");
  writeFileSync(
    worker,
    properties({
      "bootstrap.servers": run.bootstrap,
      "key.converter": "org.apache.kafka.connect.storage.StringConverter",
      "value.converter": "org.apache.kafka.connect.json.JsonConverter",
      "value.converter.schemas.enable": "false",
      "offset.storage.file.filename": join(run.dir, "connect.offsets"),
      "plugin.path": run.install.pluginPath,
      // What the worker itself advises when every plugin has a ServiceLoader manifest: no reflective scan of each jar at start.
      "plugin.discovery": "service_load",
      listeners: `http://127.0.0.1:${port}`,
    }),
  );
  writeFileSync(
    connector,
    properties({
      name: `${run.namespace}-sink`,
      "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
      "tasks.max": "2",
      topics: run.topic,
      "iceberg.tables": `${run.namespace}.${run.table}`,
      "iceberg.catalog.type": "rest",
      "iceberg.catalog.uri": catalogUri,
      "iceberg.control.topic": controlTopic,
      "iceberg.control.commit.interval-ms": String(COMMIT_INTERVAL_MS),
      ...(run.mode === "upsert" ? { "iceberg.tables.default-id-columns": "id" } : {}),
    }),
  );
  return measure({
    command: "java",
    args: [
      ...JVM_OPTIONS,
      `-Dlog4j2.configurationFile=${join(import.meta.dirname, "connect-log4j2.properties")}`,
      "-cp",
      run.install.classpath,
      "org.apache.kafka.connect.cli.ConnectStandalone",
      worker,
      connector,
    ],
    env: { LOG_DIR: logDir },
    cwd: run.dir,
    log: join(run.dir, "connect.log"),
    timeoutSeconds: run.timeoutSeconds,
    until: (exited) => lastMessageCommitted(run, exited),
  });
}

/** Resolves once the table's current snapshot holds every message; rejects if the worker dies first. */
async function lastMessageCommitted(run: ConnectRun, exited: Promise<number | null>): Promise<void> {
  let dead = false;
  void exited.then(() => {
    dead = true;
  });
  let records = 0;
  let grew = performance.now();
  for (;;) {
    if (dead) throw new Error(`the Connect worker exited before committing; see ${join(run.dir, "connect.log")}`);
    const summary = await currentSummary(run.namespace, run.table);
    const now = Number(summary?.["total-records"] ?? 0);
    if (now >= run.messages) return;
    if (now > records) [records, grew] = [now, performance.now()];
    if (performance.now() - grew > STALL_SECONDS * 1000) {
      throw new Error(
        `the sink's table stayed at ${records} of ${run.messages} records for ${STALL_SECONDS} s; see ${join(run.dir, "connect.log")}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function properties(entries: Record<string, string>): string {
  return `${Object.entries(entries)
    .map(([k, v]) => `${k}=${v.replaceAll("\\", "\\\\")}`)
    .join("\n")}\n`;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}
