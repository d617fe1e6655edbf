// Nested Protobuf through the real schema registry and the real broker: messages land as
// structs, repeated fields as lists, maps as maps (an int32 key as an int key), a oneof as a
// struct of its members, that DuckDB, PyIceberg and Spark read back and project into
// (customer.address.city); a recursive message keeps its JSON text at the recursion, a field
// declared json its JSON text; schema version 2 adds a field inside a nested message mid-stream.
import assert from "node:assert/strict";
import { test } from "node:test";
import protobuf from "protobufjs";
import { typeToString } from "#src/iceberg/spec/types.ts";
import { produce } from "../../dev/kafka.ts";
import { restTable } from "../../dev/readers.ts";
import { protobufValue, registerSchema } from "../../dev/registry.ts";
import { registrySuite, report, tableSchema } from "../helpers/registry-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const suite = registrySuite();
const { run, topics, stateDir, jobFor } = suite;

function orderProto(version: 1 | 2): string {
  return `syntax = "proto3";
package shop;

message Order {
  int64 id = 1;
  Customer customer = 2;
  repeated Line lines = 3;
  map<int32, string> labels = 4;
  map<string, Line> by_sku = 5;
  oneof payment { string card = 6; Cash cash = 7; }
  Category category = 8;
  Customer raw = 9;
  repeated string tags = 10;
}
message Customer { string name = 1; Address address = 2; }
message Address { string city = 1;${version === 2 ? " string country = 2;" : ""} }
message Line { string sku = 1; int32 qty = 2; }
message Cash { int64 cents = 1; }
message Category { string name = 1; Category parent = 2; }
`;
}

function encoder(version: 1 | 2) {
  const root = protobuf.parse(orderProto(version), new protobuf.Root(), { keepCase: true }).root;
  root.resolveAll();
  const Order = root.lookupType("shop.Order");
  return (value: object) => Order.encode(Order.fromObject(value)).finish();
}

const COLUMNS = ["id", "customer", "lines", "labels", "by_sku", "payment", "category", "raw", "tags"];

test("Protobuf: messages, repeated fields, maps and oneofs read back as structs, lists and maps in every engine; v2 adds a field inside a nested message mid-stream", async () => {
  const topic = await topics.create("nested_pb");
  const subject = `${topic}-value`;
  const v1 = await registerSchema(subject, orderProto(1), { schemaType: "PROTOBUF" });
  const e1 = encoder(1);
  await produce(topic, [
    {
      key: "1",
      value: protobufValue(
        v1,
        [0],
        e1({
          id: 1,
          customer: { name: "Ada", address: { city: "Paris" } },
          lines: [{ sku: "A1", qty: 2 }, { sku: "B2" }],
          labels: { 1: "one", 2: "two" },
          by_sku: { A1: { sku: "A1", qty: 2 } },
          cash: { cents: "9007199254740993" },
          category: { name: "saws", parent: { name: "tools" } },
          raw: { name: "Ada", address: { city: "Paris" } },
          tags: ["new", "gift"],
        }),
      ),
    },
    { key: "2", value: protobufValue(v1, [0], e1({ id: 2, customer: { name: "Bo" }, card: "visa" })) },
  ]);
  const name = `${run}_npb`;
  const namespace = `${name}_topics`;
  const job = jobFor(name, {
    [topic]: { mode: "append", format: "protobuf", table: "orders", columns: { raw: "json" } },
  });
  const first = await syncJob(job, { stateDir });
  assert.equal(first.status, "complete");
  const schema = await tableSchema(namespace, "orders");
  assert.deepEqual(
    Object.fromEntries(schema.fields.filter((f) => !f.name.startsWith("_")).map((f) => [f.name, typeToString(f.type)])),
    {
      id: "long",
      customer: "struct<name: string, address: struct<city: string>>",
      lines: "list<struct<sku: string, qty: int>>",
      labels: "map<int, string>",
      by_sku: "map<string, struct<sku: string, qty: int>>",
      payment: "struct<card: string, cash: struct<cents: long>>",
      category: "struct<name: string, parent: string>",
      raw: "string",
      tags: "list<string>",
    },
  );
  const orders = restTable(namespace, "orders");
  const ada = {
    id: 1n,
    customer: { name: "Ada", address: { city: "Paris" } },
    lines: [
      { sku: "A1", qty: 2 },
      { sku: "B2", qty: 0 },
    ],
    labels: [
      [1, "one"],
      [2, "two"],
    ],
    by_sku: [["A1", { sku: "A1", qty: 2 }]],
    payment: { card: null, cash: { cents: 9007199254740993n } },
    category: { name: "saws", parent: '{"name":"tools"}' },
    raw: '{"name":"Ada","address":{"city":"Paris"}}',
    tags: ["new", "gift"],
  };
  const bo = {
    id: 2n,
    customer: { name: "Bo", address: null },
    lines: [],
    labels: [],
    by_sku: [],
    payment: { card: "visa", cash: null },
    category: null,
    raw: null,
    tags: [],
  };
  await suite.readers.assertRows(orders, [ada, bo], { columns: COLUMNS, orderBy: ["id"] });

  // Version 2: a field inside the nested Address message.
  const v2 = await registerSchema(subject, orderProto(2), { schemaType: "PROTOBUF" });
  const e2 = encoder(2);
  await produce(topic, [
    {
      key: "3",
      value: protobufValue(
        v2,
        [0],
        e2({ id: 3, customer: { name: "Cy", address: { city: "Lyon", country: "FR" } }, labels: { 3: "three" } }),
      ),
    },
    { key: "4", value: protobufValue(v1, [0], e1({ id: 4, customer: { name: "Dee", address: { city: "Oslo" } } })) },
  ]);
  const second = await syncJob(job, { stateDir });
  assert.equal(second.status, "complete");
  assert.deepEqual(report(second, "orders").columnsAdded, ["customer.address.country"]);
  const evolved = await tableSchema(namespace, "orders");
  assert.equal(
    typeToString(evolved.fields.find((f) => f.name === "customer")!.type),
    "struct<name: string, address: struct<city: string, country: string>>",
  );

  // A query that projects fields inside structs, a map's value and a oneof's member.
  for (const engine of ["duckdb", "spark"] as const) {
    const rows = await suite.readers.sql(
      engine,
      "SELECT id, customer.address.city AS city, customer.address.country AS country, " +
        "labels[1] AS label, payment.cash.cents AS cents " +
        `FROM rest.${namespace}.orders ORDER BY id`,
    );
    assert.deepEqual(
      rows,
      [
        { id: 1n, city: "Paris", country: null, label: "one", cents: 9007199254740993n },
        { id: 2n, city: null, country: null, label: null, cents: null },
        { id: 3n, city: "Lyon", country: "FR", label: null, cents: null },
        { id: 4n, city: "Oslo", country: null, label: null, cents: null },
      ],
      engine,
    );
  }
  assert.deepEqual(await suite.readers.rows("pyiceberg", orders, { columns: ["id", "customer.address.country"] }), [
    { id: 1n, customer: { address: { country: null } } },
    { id: 2n, customer: { address: null } },
    { id: 3n, customer: { address: { country: "FR" } } },
    { id: 4n, customer: { address: { country: null } } },
  ]);
  const none = { lines: [], labels: [], by_sku: [], payment: null, category: null, raw: null, tags: [] };
  await suite.readers.assertRows(
    orders,
    [
      { ...ada, customer: { name: "Ada", address: { city: "Paris", country: null } } },
      bo,
      { id: 3n, customer: { name: "Cy", address: { city: "Lyon", country: "FR" } }, ...none, labels: [[3, "three"]] },
      { id: 4n, customer: { name: "Dee", address: { city: "Oslo", country: null } }, ...none },
    ],
    { columns: COLUMNS, orderBy: ["id"] },
  );
});
