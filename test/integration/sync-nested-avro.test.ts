// Nested Avro through the real schema registry and the real broker: records land as structs,
// arrays as lists and maps as maps, that DuckDB, PyIceberg and Spark read back and project into
// (customer.address.city); a recursive record keeps its JSON text at the recursion, a union of
// several types its JSON text, a field declared json its JSON text; schema version 2 adds a
// field inside a nested record and widens an int inside a list's records, mid-stream.
import assert from "node:assert/strict";
import { test } from "node:test";
import { typeToString } from "#src/iceberg/spec/types.ts";
import { produce } from "../../dev/kafka.ts";
import { restTable } from "../../dev/readers.ts";
import { avroValue, avroWriter, registerSchema } from "../../dev/registry.ts";
import { registrySuite, report, tableSchema } from "../helpers/registry-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const suite = registrySuite();
const { run, topics, stateDir, jobFor } = suite;

function orderSchema(version: 1 | 2) {
  const addressFields: object[] = [
    { name: "city", type: "string" },
    { name: "zip", type: ["null", "string"], default: null },
  ];
  if (version === 2) addressFields.push({ name: "country", type: ["null", "string"], default: null });
  return {
    type: "record",
    name: "Order",
    namespace: "shop",
    fields: [
      { name: "id", type: "long" },
      {
        name: "customer",
        type: {
          type: "record",
          name: "Customer",
          fields: [
            { name: "name", type: "string" },
            {
              name: "address",
              type: ["null", { type: "record", name: "Address", fields: addressFields }],
              default: null,
            },
          ],
        },
      },
      {
        name: "lines",
        type: {
          type: "array",
          items: {
            type: "record",
            name: "Line",
            fields: [
              { name: "sku", type: "string" },
              { name: "qty", type: version === 1 ? "int" : "long" },
            ],
          },
        },
      },
      { name: "attrs", type: { type: "map", values: "long" } },
      {
        name: "category",
        type: [
          "null",
          {
            type: "record",
            name: "Category",
            fields: [
              { name: "name", type: "string" },
              { name: "parent", type: ["null", "Category"], default: null },
            ],
          },
        ],
        default: null,
      },
      { name: "meta", type: { type: "record", name: "Meta", fields: [{ name: "source", type: "string" }] } },
      { name: "choice", type: ["null", "long", "string"], default: null },
    ],
  };
}

const COLUMNS = ["id", "customer", "lines", "attrs", "category", "meta", "choice"];

test("Avro: records, arrays and maps read back as structs, lists and maps in every engine; v2 adds a field inside a nested record mid-stream", async () => {
  const topic = await topics.create("nested_avro");
  const subject = `${topic}-value`;
  const v1 = await registerSchema(subject, orderSchema(1));
  const w1 = avroWriter(orderSchema(1));
  await produce(topic, [
    {
      key: "1",
      value: avroValue(v1, w1, {
        id: 1n,
        customer: { name: "Ada", address: { city: "Paris", zip: "75001" } },
        lines: [
          { sku: "A1", qty: 2 },
          { sku: "B2", qty: 1 },
        ],
        attrs: { clicks: 3n, views: 9007199254740993n },
        category: { name: "saws", parent: { name: "tools", parent: null } },
        meta: { source: "web" },
        choice: 7n,
      }),
    },
    {
      key: "2",
      value: avroValue(v1, w1, {
        id: 2n,
        customer: { name: "Bo", address: null },
        lines: [],
        attrs: {},
        category: null,
        meta: { source: "app" },
        choice: "x",
      }),
    },
  ]);
  const name = `${run}_navro`;
  const namespace = `${name}_topics`;
  const job = jobFor(name, { [topic]: { mode: "append", format: "avro", table: "orders", columns: { meta: "json" } } });
  const first = await syncJob(job, { stateDir });
  assert.equal(first.status, "complete");
  const schema = await tableSchema(namespace, "orders");
  assert.deepEqual(
    Object.fromEntries(schema.fields.filter((f) => !f.name.startsWith("_")).map((f) => [f.name, typeToString(f.type)])),
    {
      id: "long",
      customer: "struct<name: string, address: struct<city: string, zip: string>>",
      lines: "list<struct<sku: string, qty: int>>",
      attrs: "map<string, long>",
      category: "struct<name: string, parent: string>",
      meta: "string",
      choice: "string",
    },
  );
  const orders = restTable(namespace, "orders");
  const ada = {
    id: 1n,
    customer: { name: "Ada", address: { city: "Paris", zip: "75001" } },
    lines: [
      { sku: "A1", qty: 2 },
      { sku: "B2", qty: 1 },
    ],
    attrs: [
      ["clicks", 3n],
      ["views", 9007199254740993n],
    ],
    category: { name: "saws", parent: '{"name":"tools","parent":null}' },
    meta: '{"source":"web"}',
    choice: "7",
  };
  const bo = {
    id: 2n,
    customer: { name: "Bo", address: null },
    lines: [],
    attrs: [],
    category: null,
    meta: '{"source":"app"}',
    choice: "x",
  };
  await suite.readers.assertRows(orders, [ada, bo], { columns: COLUMNS, orderBy: ["id"] });

  // Version 2: a field inside the nested Address record, and Line.qty widened to long.
  const v2 = await registerSchema(subject, orderSchema(2));
  const w2 = avroWriter(orderSchema(2));
  await produce(topic, [
    {
      key: "3",
      value: avroValue(v2, w2, {
        id: 3n,
        customer: { name: "Cy", address: { city: "Lyon", zip: null, country: "FR" } },
        lines: [{ sku: "C3", qty: 5_000_000_000n }],
        attrs: { clicks: 1n },
        category: { name: "drills", parent: null },
        meta: { source: "web" },
        choice: null,
      }),
    },
    // A producer still on version 1.
    {
      key: "4",
      value: avroValue(v1, w1, {
        id: 4n,
        customer: { name: "Dee", address: { city: "Oslo", zip: "0150" } },
        lines: [{ sku: "D4", qty: 4 }],
        attrs: {},
        category: null,
        meta: { source: "app" },
        choice: null,
      }),
    },
  ]);
  const second = await syncJob(job, { stateDir });
  assert.equal(second.status, "complete");
  assert.deepEqual(report(second, "orders").columnsAdded, ["customer.address.country"]);
  const evolved = await tableSchema(namespace, "orders");
  const types = Object.fromEntries(evolved.fields.map((f) => [f.name, typeToString(f.type)]));
  assert.equal(types.customer, "struct<name: string, address: struct<city: string, zip: string, country: string>>");
  assert.equal(types.lines, "list<struct<sku: string, qty: long>>");

  // A query that projects fields inside structs and a list's struct, in DuckDB and Spark SQL.
  for (const engine of ["duckdb", "spark"] as const) {
    const rows = await suite.readers.sql(
      engine,
      `SELECT id, customer.address.city AS city, customer.address.country AS country, ` +
        `${engine === "duckdb" ? "lines[1]" : "get(lines, 0)"}.qty AS qty, ` +
        `${engine === "duckdb" ? "attrs['clicks']" : "attrs['clicks']"} AS clicks ` +
        `FROM rest.${namespace}.orders ORDER BY id`,
    );
    assert.deepEqual(
      rows,
      [
        { id: 1n, city: "Paris", country: null, qty: 2n, clicks: 3n },
        { id: 2n, city: null, country: null, qty: null, clicks: null },
        { id: 3n, city: "Lyon", country: "FR", qty: 5_000_000_000n, clicks: 1n },
        { id: 4n, city: "Oslo", country: null, qty: 4n, clicks: null },
      ],
      engine,
    );
  }
  // PyIceberg's scan projects the nested field by its dotted name: the structs keep only it.
  assert.deepEqual(await suite.readers.rows("pyiceberg", orders, { columns: ["id", "customer.address.city"] }), [
    { id: 1n, customer: { address: { city: "Paris" } } },
    { id: 2n, customer: { address: null } },
    { id: 3n, customer: { address: { city: "Lyon" } } },
    { id: 4n, customer: { address: { city: "Oslo" } } },
  ]);
  const widened = (lines: { sku: string; qty: number }[]) => lines.map((l) => ({ ...l, qty: BigInt(l.qty) }));
  await suite.readers.assertRows(
    orders,
    [
      {
        ...ada,
        customer: { name: "Ada", address: { city: "Paris", zip: "75001", country: null } },
        lines: widened(ada.lines),
      },
      bo,
      {
        id: 3n,
        customer: { name: "Cy", address: { city: "Lyon", zip: null, country: "FR" } },
        lines: [{ sku: "C3", qty: 5_000_000_000n }],
        attrs: [["clicks", 1n]],
        category: { name: "drills", parent: null },
        meta: '{"source":"web"}',
        choice: null,
      },
      {
        id: 4n,
        customer: { name: "Dee", address: { city: "Oslo", zip: "0150", country: null } },
        lines: [{ sku: "D4", qty: 4n }],
        attrs: [],
        category: null,
        meta: '{"source":"app"}',
        choice: null,
      },
    ],
    { columns: COLUMNS, orderBy: ["id"] },
  );
});
