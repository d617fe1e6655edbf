// An upsert stream keyed on a field inside a struct (`dedup_keys: [customer.id, sku]`), against
// real Kafka and the REST catalog: after every sync DuckDB, PyIceberg and Spark read exactly one
// row per nested key, the latest; a sync with a fresh state folder rebuilds the key index from
// the nested field's own column in the data files and still replaces the right rows; each data
// file's bounds for customer.id (its own field id) hold its rows' least and greatest ids, and
// both SQL engines filter on the nested key.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { decodeSingleValue } from "#src/iceberg/spec/single-value.ts";
import { currentSchema, currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { createTopic, produce } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { buildJob } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import { loadJobTable } from "../helpers/tables.ts";

const run = `nkeys${process.pid}_${Date.now()}`;
const namespace = `${run}_topics`;
const topic = `${run}_orders`;
const dir = mkdtempSync(join(tmpdir(), "floe-nested-keys-"));

const job = buildJob(
  {
    name: run,
    kafka: { topic_pattern: `^${run}_orders$`, max_threads: 1 },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    streams: { [topic]: { mode: "upsert", dedup_keys: ["customer.id", "sku"], table: "orders" } },
  },
  join(dir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await createTopic(topic, 2);
});
after(() => readers?.close());

interface Order {
  customer: { id: number; name: string };
  sku: string;
  qty: number;
}

/** The model: the latest order of each (customer.id, sku); every qty is unique, the rows' order. */
const model = new Map<string, Order>();

async function send(orders: Order[]) {
  await produce(
    topic,
    orders.map((o) => {
      model.set(`${o.customer.id}/${o.sku}`, o);
      return { key: String(o.customer.id), value: JSON.stringify(o), partition: o.customer.id % 2 };
    }),
  );
}

async function syncAndCheck(stateDir: string) {
  const report = await syncJob(job, { stateDir });
  assert.equal(report.status, "complete");
  assert.equal(report.tables[0]?.deadLetters, 0);
  const expected = [...model.values()]
    .sort((a, b) => a.qty - b.qty)
    .map((o) => ({ customer: { id: BigInt(o.customer.id), name: o.customer.name }, sku: o.sku, qty: BigInt(o.qty) }));
  await readers.assertRows(restTable(namespace, "orders"), expected, {
    columns: ["customer", "sku", "qty"],
    orderBy: ["qty"],
  });
  return report;
}

const order = (id: number, sku: string, qty: number, name = `c${id}`): Order => ({ customer: { id, name }, sku, qty });

test("upserts keyed on customer.id and sku: one row per nested key in every engine, across syncs and a rebuilt key index", async () => {
  const stateDir = join(dir, "state");
  await send([order(1, "a", 1), order(2, "a", 2), order(3, "b", 3), order(1, "b", 4), order(40, "a", 5)]);
  await syncAndCheck(stateDir);

  await send([order(1, "a", 6, "Ada"), order(2, "b", 7), order(40, "a", 8), order(40, "a", 9)]);
  const second = await syncAndCheck(stateDir);
  assert.equal(second.tables[0]?.positionsDeleted, 2);

  // A fresh state folder: the key index is rebuilt from the data files' customer.id and sku columns.
  await send([order(3, "b", 10), order(2, "a", 11)]);
  const rebuilt = await syncAndCheck(join(dir, "fresh-state"));
  assert.equal(rebuilt.tables[0]?.positionsDeleted, 2);

  // The nested key's own field id carries bounds in every data file.
  const table = await loadJobTable(job, "orders");
  const customer = currentSchema(table.metadata).fields.find((f) => f.name === "customer")!;
  assert.ok(typeof customer.type === "object" && customer.type.kind === "struct");
  const idField = customer.type.fields.find((f) => f.name === "id")!;
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  assert.ok(plan.dataFiles.size >= 3);
  for (const { entry } of plan.dataFiles.values()) {
    const lower = entry.file.lowerBounds?.get(idField.id);
    const upper = entry.file.upperBounds?.get(idField.id);
    assert.ok(lower && upper, `${entry.file.filePath}: bounds of customer.id (field ${idField.id})`);
    assert.ok((decodeSingleValue("long", lower) as bigint) <= (decodeSingleValue("long", upper) as bigint));
  }
  for (const engine of ["duckdb", "spark"] as const) {
    assert.deepEqual(
      await readers.sql(engine, `SELECT sku, qty FROM rest.${namespace}.orders WHERE customer.id = 40`),
      [{ sku: "a", qty: 9n }],
      engine,
    );
  }
});
