// npm run demo: the seed walkthrough end to end. Starts the local Kafka broker, produces the
// first phase, runs `floe sync`, produces the second phase, syncs again, and shows the tables
// through DuckDB. Each run starts from fresh topics and an empty demo/warehouse.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createTopics, producePhase } from "../demo/seed-walkthrough.ts";
import { startReaders } from "../dev/readers.ts";
import { kafka } from "../dev/services/kafka.ts";
import { root } from "../dev/services/lib.ts";
import { readers as readerService } from "../dev/services/readers.ts";
import { openSqlCatalog } from "../src/iceberg/catalog/sql-catalog.ts";

const demoDir = join(root, "demo");
const jobFile = join(demoDir, "job.yaml");
const step = (text: string) => console.log(`\n\x1b[1m== ${text}\x1b[0m`);

step("starting Kafka (127.0.0.1:9092) and installing DuckDB for the read-back");
await kafka.start();
await readerService.install();
rmSync(join(demoDir, "warehouse"), { recursive: true, force: true });
rmSync(join(demoDir, ".floe"), { recursive: true, force: true });
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
console.log("\nKafka keeps running for another try; `npm run services -- stop` stops it.");

/** bigint counts and ids print as numbers; they are small here. */
function plain(value: unknown): unknown {
  return typeof value === "bigint" ? Number(value) : value;
}

function sync(): void {
  step("floe sync --config demo/job.yaml");
  const result = spawnSync(process.execPath, [join(root, "bin", "floe.js"), "sync", "--config", jobFile], {
    stdio: "inherit",
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
