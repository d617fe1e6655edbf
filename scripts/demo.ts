// npm run demo: the seed walkthrough end to end. Starts the local Kafka broker, produces the
// first phase, runs `floe sync`, produces the second phase, syncs again, and shows the tables
// through DuckDB, then serves the web UI with the demo's job in it. Each run starts from fresh
// topics and an empty demo/warehouse.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { createTopics, producePhase } from "../demo/seed-walkthrough.ts";
import { bootstrapServers } from "../dev/kafka.ts";
import { startReaders } from "../dev/readers.ts";
import { kafka } from "../dev/services/kafka.ts";
import { localDir, logDir, root } from "../dev/services/lib.ts";
import { readers as readerService } from "../dev/services/readers.ts";
import { openSqlCatalog } from "../src/iceberg/catalog/sql-catalog.ts";
import { ConfigStore } from "../src/state/config-store.ts";
import { SecretBox } from "../src/state/secret-box.ts";

const demoDir = join(root, "demo");
const jobFile = join(demoDir, "job.yaml");
const step = (text: string) => console.log(`\n\x1b[1m== ${text}\x1b[0m`);

step(`starting Kafka (${bootstrapServers}) and installing DuckDB for the read-back`);
await kafka.start();
await readerService.install();
rmSync(join(demoDir, "warehouse"), { recursive: true, force: true });
rmSync(join(demoDir, ".floe"), { recursive: true, force: true });
const syncedJobFile = jobFileForBroker();
await createTopics();

step("phase 1: producing customers.phase1.tsv and orders.phase1.tsv");
console.log(`${await producePhase(1)} messages`);
sync();

step("phase 2: producing customers.phase2.tsv and orders.phase2.tsv (7 new keys, 5 repeated)");
console.log(`${await producePhase(2)} messages`);
sync();

step("the tables, read by DuckDB 1.5.5 (iceberg extension)");
const catalog = await openSqlCatalog({ warehouse: join(demoDir, "warehouse") });
const location = async (name: string) =>
  (await catalog.loadTable({ namespace: ["kafka_to_databricks_topics"], name })).metadataLocation;
const customers = `iceberg_scan('${await location("customers")}')`;
const orders = `iceberg_scan('${await location("orders")}')`;
await catalog.close();
const duckdb = await startReaders({ engines: ["duckdb"] });
try {
  const show = async (title: string, query: string) => {
    console.log(`\n${title}`);
    const rows = await duckdb.sql("duckdb", query, null);
    console.table(rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, plain(v)]))));
  };
  await show("customers", `SELECT id, name, city, tier, _kafka_key, _op_type FROM ${customers} ORDER BY id`);
  await show(
    "orders by status",
    `SELECT status, count(*) AS n, round(sum(amount), 2) AS total FROM ${orders} GROUP BY status ORDER BY status`,
  );
  await show("orders", `SELECT count(*) AS n, round(sum(amount), 2) AS total FROM ${orders}`);
} finally {
  await duckdb.close();
}
await serveUi();
console.log("\nKafka keeps running for another try; `npm run services -- stop` stops it.");

/**
 * The demo's job in `floe serve`: imported into the state root the demo's `floe sync` used
 * (demo/.floe, beside the job file; its warehouse made absolute, the demo's own), so that the
 * UI shows the runs those syncs recorded and a Sync now reuses their upsert key indexes; the
 * server left running in the background on 127.0.0.1:8000
 * (FLOE_DEMO_UI_PORT), its output in .local/logs/demo-serve.log.
 */
async function serveUi(): Promise<void> {
  step("floe serve: the demo's job in the web UI");
  const stateDir = join(demoDir, ".floe");
  const job = parseYaml(readFileSync(syncedJobFile, "utf8")) as { destination: { iceberg: Record<string, unknown> } };
  job.destination.iceberg["catalog"] = { type: "sql", warehouse: join(demoDir, "warehouse") };
  const store = new ConfigStore(stateDir, SecretBox.open(stateDir));
  store.importJob(stringifyYaml(job), "demo");
  store.close();
  const port = Number(process.env["FLOE_DEMO_UI_PORT"] ?? 8000);
  // The server of the previous demo, by the pid it recorded, so that this one gets the port.
  const pidFile = join(localDir, "demo-serve.pid");
  try {
    const pid = Number(readFileSync(pidFile, "utf8"));
    // Only if that pid is still a floe serve (a pid can be reused by another program).
    if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("serve")) throw new Error("not ours");
    process.kill(pid, "SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  } catch {
    // none running
  }
  mkdirSync(logDir, { recursive: true });
  const log = openSync(join(logDir, "demo-serve.log"), "w");
  const server = spawn(
    process.execPath,
    [join(root, "bin", "floe.js"), "serve", "--state-dir", stateDir, "--listen", `127.0.0.1:${port}`, "--no-auth"],
    { detached: true, stdio: ["ignore", log, log] },
  );
  server.unref();
  writeFileSync(pidFile, String(server.pid));
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 100; i++) {
    if (server.exitCode !== null) {
      console.log(
        `floe serve did not start (port ${port} taken? set FLOE_DEMO_UI_PORT); see ${join(logDir, "demo-serve.log")}`,
      );
      return;
    }
    if (
      await fetch(`${url}api/session`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  console.log(`\nThe UI, with the demo's job kafka_to_databricks: \x1b[1m${url}#/jobs\x1b[0m`);
  console.log(`(floe serve runs in the background as process ${server.pid}; \`kill ${server.pid}\` stops it)`);
}

/** bigint counts and ids print as numbers; they are small here. */
function plain(value: unknown): unknown {
  return typeof value === "bigint" ? Number(value) : value;
}

/**
 * demo/job.yaml names the broker at 127.0.0.1:9092. With KAFKA_PORT set (another broker holds
 * 9092), the demo syncs a copy of it beside it, demo/job.local.yaml (ignored by git), that names
 * the broker the demo started: the same folder, so the same warehouse and state root.
 */
function jobFileForBroker(): string {
  const job = parseYaml(readFileSync(jobFile, "utf8")) as { source: { kafka: { bootstrap_servers: string[] } } };
  if (job.source.kafka.bootstrap_servers.join(",") === bootstrapServers) return jobFile;
  job.source.kafka.bootstrap_servers = [bootstrapServers];
  const copy = join(demoDir, "job.local.yaml");
  writeFileSync(copy, stringifyYaml(job));
  return copy;
}

function sync(): void {
  step(
    `floe sync --config ${syncedJobFile === jobFile ? "demo/job.yaml" : "demo/job.local.yaml (demo/job.yaml with this broker)"}`,
  );
  const result = spawnSync(process.execPath, [join(root, "bin", "floe.js"), "sync", "--config", syncedJobFile], {
    stdio: "inherit",
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
