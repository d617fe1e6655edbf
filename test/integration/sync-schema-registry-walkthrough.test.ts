// The seed walkthrough of demo/seed-walkthrough with its values as Avro through the schema
// registry; read back through DuckDB, PyIceberg and Spark.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { typeToString } from "#src/iceberg/spec/types.ts";
import { produce } from "../../dev/kafka.ts";
import { restTable } from "../../dev/readers.ts";
import { avroValue, avroWriter, registerSchema } from "../../dev/registry.ts";
import { assertSeedWalkthrough, engineReaders } from "../../dev/seed-walkthrough.ts";
import { decimalBytes, registrySuite, tableSchema } from "../helpers/registry-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const suite = registrySuite();
const { run, topics, stateDir, jobFor } = suite;

// The seed walkthrough of demo/seed-walkthrough, with its values as Avro through the registry:
// timestamps as timestamp-micros and amounts as decimal(10, 2).
test("seed walkthrough as Avro: two syncs reproduce expected.json in DuckDB, PyIceberg and Spark", async () => {
  const prefix = `${run}-seed-`;
  const customersTopic = await topics.create("seed-customers");
  const ordersTopic = await topics.create("seed-orders");
  assert.ok(customersTopic.startsWith(prefix) && ordersTopic.startsWith(prefix));
  const ts = { type: "long", logicalType: "timestamp-micros" };
  const customers = {
    type: "record",
    name: "Customer",
    fields: [
      { name: "id", type: "long" },
      { name: "name", type: "string" },
      { name: "email", type: "string" },
      { name: "city", type: "string" },
      { name: "tier", type: "string" },
      { name: "created_at", type: ts },
      { name: "updated_at", type: ts },
    ],
  };
  const orders = {
    type: "record",
    name: "Order",
    fields: [
      { name: "id", type: "long" },
      { name: "customer_id", type: "long" },
      { name: "product", type: "string" },
      { name: "amount", type: { type: "bytes", logicalType: "decimal", precision: 10, scale: 2 } },
      { name: "status", type: "string" },
      { name: "created_at", type: ts },
      { name: "updated_at", type: ts },
    ],
  };
  const ids = {
    customers: await registerSchema(`${customersTopic}-value`, customers),
    orders: await registerSchema(`${ordersTopic}-value`, orders),
  };
  const writers = { customers: avroWriter(customers), orders: avroWriter(orders) };
  const micros = (text: string) => BigInt(Date.parse(text)) * 1000n;
  const producePhase = async (phase: 1 | 2) => {
    for (const [entity, topic] of [
      ["customers", customersTopic],
      ["orders", ordersTopic],
    ] as const) {
      const lines = readFileSync(
        join(import.meta.dirname, "../../demo/seed-walkthrough", `${entity}.phase${phase}.tsv`),
        "utf8",
      )
        .split("\n")
        .filter(Boolean);
      await produce(
        topic,
        lines.map((line) => {
          const tab = line.indexOf("\t");
          const v = JSON.parse(line.slice(tab + 1));
          const value = {
            ...v,
            id: BigInt(v.id),
            created_at: micros(v.created_at),
            updated_at: micros(v.updated_at),
            ...(entity === "orders"
              ? { customer_id: BigInt(v.customer_id), amount: decimalBytes(BigInt(Math.round(v.amount * 100))) }
              : {}),
          };
          return { key: line.slice(0, tab), value: avroValue(ids[entity], writers[entity], value) };
        }),
      );
    }
  };
  const name = `${run}_seed`;
  const namespace = `${name}_topics`;
  const job = jobFor(name, {
    [customersTopic]: { mode: "upsert", dedup_keys: ["id"], format: "avro", table: "customers" },
    [ordersTopic]: { mode: "upsert", dedup_keys: ["id"], format: "avro", table: "orders" },
  });
  const target = { namespace, readers: engineReaders(suite.readers, restTable, namespace) };

  await producePhase(1);
  await assertSeedWalkthrough(1, await syncJob(job, { stateDir }), target);
  assert.equal(
    typeToString((await tableSchema(namespace, "orders")).fields.find((f) => f.name === "amount")!.type),
    "decimal(10, 2)",
  );

  await producePhase(2);
  await assertSeedWalkthrough(2, await syncJob(job, { stateDir }), target);
  const [created] = await suite.readers.sql(
    "duckdb",
    `SELECT created_at FROM rest.${namespace}.customers WHERE id = 3`,
  );
  assert.equal(String(created?.created_at), "2026-10-29T15:22:04.000000Z");
});
