// Protobuf values through the real schema registry and the real broker: a schema with a
// reference, produced in the Confluent wire format; the table read back through DuckDB, PyIceberg
// and Spark and compared with a model.
import assert from "node:assert/strict";
import { test } from "node:test";
import protobuf from "protobufjs";
import { typeToString } from "#src/iceberg/spec/types.ts";
import { discoverBindings, withDiscoveryConnections } from "#src/inspect/discover-bindings.ts";
import { produce } from "../../dev/kafka.ts";
import { restTable } from "../../dev/readers.ts";
import { protobufValue, registerSchema } from "../../dev/registry.ts";
import { registrySuite, tableSchema } from "../helpers/registry-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const suite = registrySuite();
const { run, topics, stateDir, jobFor } = suite;

const orderProto = `syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "shop/address.proto";

message Order {
  int64 id = 1;
  google.protobuf.Timestamp placed_at = 2;
  Status status = 3;
  Address ship_to = 4;
  repeated int32 quantities = 5;
  map<string, int32> stock = 6;
  oneof payment { string card = 7; int32 cash = 8; }
  optional string note = 9;
  double amount = 10;
  bool gift = 11;
  uint64 huge = 12;
  bytes raw = 13;
  sint64 delta = 14;
  float ratio = 15;
  enum Status { NEW = 0; PAID = 1; }
}

message Refund {
  int64 order_id = 1;
  string reason = 2;
}
`;
const addressProto = 'syntax = "proto3";\npackage shop;\nmessage Address { string city = 1; }\n';

test("Protobuf: a schema with a reference; scalars, Timestamp, enums, nested, repeated, map and oneof, read back by the three engines", async () => {
  const topic = await topics.create("orders_pb");
  const addressSubject = `${run}-shop-address`;
  await registerSchema(addressSubject, addressProto, { schemaType: "PROTOBUF" });
  const id = await registerSchema(`${topic}-value`, orderProto, {
    schemaType: "PROTOBUF",
    references: [{ name: "shop/address.proto", subject: addressSubject, version: 1 }],
  });
  const root = new protobuf.Root();
  protobuf.parse(addressProto, root, { keepCase: true });
  protobuf.parse(orderProto, root, { keepCase: true });
  root.addJSON(protobuf.common.get("google/protobuf/timestamp.proto")!.nested!);
  root.resolveAll();
  const Order = root.lookupType("shop.Order");
  const Refund = root.lookupType("shop.Refund");
  const encode = (type: protobuf.Type, value: object) => type.encode(type.fromObject(value)).finish();
  await produce(topic, [
    {
      key: "1",
      value: protobufValue(
        id,
        [0],
        encode(Order, {
          id: "9007199254740993",
          placed_at: { seconds: 1_761_751_324, nanos: 123_456_789 },
          status: "PAID",
          ship_to: { city: "Oslo" },
          quantities: [1, 2],
          stock: { a: 3 },
          cash: 5,
          note: "ring twice",
          amount: 12.5,
          huge: "18446744073709551615",
          raw: Buffer.from([1, 2, 3]),
          delta: "-9007199254740993",
          ratio: 0.25,
        }),
      ),
    },
    { key: "2", value: protobufValue(id, [0], encode(Order, { id: 2, card: "visa" })) },
    { key: "3", value: protobufValue(id, [1], encode(Refund, { order_id: 2, reason: "late" })) },
    { key: "4", value: Buffer.from(encode(Order, { id: 4 })) },
  ]);
  const name = `${run}_pb`;
  const namespace = `${name}_topics`;
  const job = jobFor(name, { [topic]: { mode: "append", format: "protobuf", table: "orders" } });
  // Before the first sync, floe discover shows the columns of the registry's schema, by message type.
  const discovered = await withDiscoveryConnections(job, (connections) => discoverBindings(job, connections));
  const sampled = discovered.streams[0]!.sample;
  assert.deepEqual(sampled.bad, { "not-framed": 1 });
  assert.deepEqual(
    sampled.columns.slice(0, 3).map((c) => [c.name, c.type, c.source, c.example]),
    [
      ["id", "long", "registry", "9007199254740993"],
      ["placed_at", "timestamptz", "registry", "1761751324123456"],
      ["status", "string", "registry", "PAID"],
    ],
  );
  const result = await syncJob(job, { stateDir });
  assert.equal(result.status, "complete");
  const schema = await tableSchema(namespace, "orders");
  assert.deepEqual(
    Object.fromEntries(schema.fields.filter((f) => !f.name.startsWith("_")).map((f) => [f.name, typeToString(f.type)])),
    {
      id: "long",
      placed_at: "timestamptz",
      status: "string",
      ship_to: "struct<city: string>",
      quantities: "list<int>",
      stock: "map<string, int>",
      payment: "struct<card: string, cash: int>",
      note: "string",
      amount: "double",
      gift: "boolean",
      huge: "decimal(20, 0)",
      raw: "binary",
      delta: "long",
      ratio: "float",
      order_id: "long",
      reason: "string",
    },
  );
  const empty = { order_id: null, reason: null };
  await suite.readers.assertRows(
    restTable(namespace, "orders"),
    [
      {
        _kafka_offset: 0n,
        id: 9007199254740993n,
        placed_at: "2025-10-29T15:22:04.123456Z",
        status: "PAID",
        ship_to: { city: "Oslo" },
        quantities: [1, 2],
        stock: [["a", 3]],
        payment: { card: null, cash: 5 },
        note: "ring twice",
        amount: 12.5,
        gift: false,
        ...empty,
      },
      {
        _kafka_offset: 1n,
        id: 2n,
        placed_at: null,
        status: "NEW",
        ship_to: null,
        quantities: [],
        stock: [],
        payment: { card: "visa", cash: null },
        note: null,
        amount: 0,
        gift: false,
        ...empty,
      },
      {
        _kafka_offset: 2n,
        id: null,
        placed_at: null,
        status: null,
        ship_to: null,
        quantities: null,
        stock: null,
        payment: null,
        note: null,
        amount: null,
        gift: null,
        order_id: 2n,
        reason: "late",
      },
    ],
    {
      columns: [
        "_kafka_offset",
        "id",
        "placed_at",
        "status",
        "ship_to",
        "quantities",
        "stock",
        "payment",
        "note",
        "amount",
        "gift",
        "order_id",
        "reason",
      ],
      orderBy: ["_kafka_offset"],
    },
  );
  const dead = await suite.readers.rows("duckdb", restTable(namespace, "orders__dlq"), {
    columns: ["_kafka_offset", "_error_kind"],
  });
  assert.deepEqual(dead, [{ _kafka_offset: 3n, _error_kind: "not-framed" }]);
});
