// Avro and Protobuf values through the real schema registry service and the real broker: the
// values are produced in the Confluent wire format, floe fetches their schemas by id, and every
// table is read back through DuckDB, PyIceberg and Spark and compared with a model.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import protobuf from "protobufjs";
import { bootstrapServers, produce, TestTopics } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { avroValue, avroWriter, protobufValue, registerSchema } from "../../dev/registry.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { schemaRegistry } from "../../dev/services/schema-registry.ts";
import { parseJob } from "../../src/config/load-job.ts";
import { connectRestCatalog } from "../../src/iceberg/catalog/rest-catalog.ts";
import { currentSchema } from "../../src/iceberg/spec/table-metadata.ts";
import { typeToString } from "../../src/iceberg/spec/types.ts";
import { discoverStreams, withDiscoveryConnections } from "../../src/sync/discover-streams.ts";
import type { SyncReport } from "../../src/sync/sync.ts";
import { assertSeedWalkthrough, engineReaders } from "../helpers/seed-walkthrough.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `reg${process.pid}_${Date.now()}`;
const topics = new TestTopics(run);
const stateDir = mkdtempSync(join(tmpdir(), "floe-registry-"));

function jobFor(name: string, streams: string, registry = `{url: ${schemaRegistry.url}}`) {
  return parseJob(
    `
name: ${name}
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    consumer_group: floe_${name}
    schema_registry: ${registry}
destination:
  iceberg:
    catalog: {type: rest, uri: ${restCatalog.uri}}
streams:
${streams}
`,
    join(stateDir, `${name}.yaml`),
  );
}

let readers: Readers;
before(async () => {
  readers = await startReaders();
});
after(async () => {
  await readers?.close();
  await topics.deleteAll();
});

async function tableSchema(namespace: string, table: string) {
  const catalog = await connectRestCatalog({ uri: restCatalog.uri, warehouse: restCatalog.warehouse });
  return currentSchema((await catalog.loadTable({ namespace: [namespace], name: table })).metadata);
}

function report(r: SyncReport, table: string) {
  const t = r.tables.find((x) => x.table.endsWith(`.${table}`));
  assert.ok(t, `no report for ${table}`);
  return t;
}

const everyType = {
  type: "record",
  name: "Reading",
  namespace: "floe.test",
  fields: [
    { name: "id", type: "long", doc: "the reading's id" },
    { name: "flag", type: "boolean" },
    { name: "small", type: "int" },
    { name: "ratio", type: "float" },
    { name: "amount", type: "double" },
    { name: "name", type: ["null", "string"], default: null, doc: "optional name" },
    { name: "raw", type: "bytes" },
    { name: "day", type: { type: "int", logicalType: "date" } },
    { name: "ts_ms", type: { type: "long", logicalType: "timestamp-millis" } },
    { name: "ts_us", type: { type: "long", logicalType: "timestamp-micros" } },
    { name: "local_us", type: { type: "long", logicalType: "local-timestamp-micros" } },
    { name: "local_ms", type: { type: "long", logicalType: "local-timestamp-millis" } },
    { name: "price", type: { type: "bytes", logicalType: "decimal", precision: 9, scale: 2 } },
    {
      name: "big_price",
      type: { type: "fixed", name: "Money", size: 16, logicalType: "decimal", precision: 38, scale: 6 },
    },
    { name: "uid", type: { type: "string", logicalType: "uuid" } },
    { name: "fixed_uid", type: { type: "fixed", name: "Uuid", size: 16, logicalType: "uuid" } },
    { name: "hash", type: { type: "fixed", name: "Hash", size: 4 } },
    { name: "color", type: { type: "enum", name: "Color", symbols: ["RED", "GREEN"] } },
    { name: "address", type: { type: "record", name: "Address", fields: [{ name: "city", type: "string" }] } },
    { name: "tags", type: { type: "array", items: "string" } },
    { name: "scores", type: { type: "map", values: "int" } },
  ],
};

/** Two's-complement big-endian bytes of an unscaled decimal. */
function decimalBytes(unscaled: bigint): Buffer {
  let hex = (unscaled < 0n ? (1n << 64n) + unscaled : unscaled).toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const bytes = Buffer.from(hex, "hex");
  return unscaled < 0n
    ? Buffer.concat([Buffer.alloc(8 - bytes.length, 0xff), bytes])
    : Buffer.concat([Buffer.from([0]), bytes]);
}

test("Avro: every type and logical type lands in its Iceberg type, read back by DuckDB, PyIceberg and Spark; bad values are dead letters", async () => {
  const topic = await topics.create("readings");
  const subject = `${topic}-value`;
  const id = await registerSchema(subject, everyType);
  const writer = avroWriter(everyType);
  const base = {
    flag: true,
    small: -7,
    ratio: 1.5,
    amount: 99.19,
    raw: Buffer.from([1, 2, 255]),
    day: 20_390, // 2025-10-29
    ts_ms: 1_761_751_324_123n, // 2025-10-29T15:22:04.123Z
    ts_us: 1_761_751_324_123_456n,
    local_us: 1_761_751_324_000_001n,
    local_ms: 1_761_751_324_123n,
    // 12345678901234567890.123456: 38 digits of precision hold it exactly
    big_price: Buffer.from(12345678901234567890123456n.toString(16).padStart(32, "0"), "hex"),
    fixed_uid: Buffer.from("0f1e2d3c4b5a69788796a5b4c3d2e1f0", "hex"),
    hash: Buffer.from([0xde, 0xad, 0xbe, 0xef]),
    uid: "6f1c1a4e-6a5e-4c8b-9c1f-3f0b1c2d3e4f",
    color: "GREEN",
    address: { city: "Oslo" },
    tags: ["a", "b"],
    scores: { x: 1 },
  };
  const values = [
    { ...base, id: 1n, name: "first", price: decimalBytes(12345n) },
    { ...base, id: 9007199254740993n, name: null, price: decimalBytes(-1n), flag: false, color: "RED" },
  ];
  await produce(topic, [
    ...values.map((v, i) => ({ key: String(i), value: avroValue(id, writer, v) })),
    { key: "json", value: '{"id": 3}' },
    { key: "unknown", value: avroValue(id + 1000, writer, values[0]) },
    { key: "garbage", value: Buffer.from([0, 0, 0, 0, id, 0xff]) },
  ]);

  const name = `${run}_types`;
  const namespace = `${name}_topics`;
  const job = jobFor(name, `  ${topic}: {mode: append, format: avro, table: readings}`);
  const result = await syncJob(job, { stateDir });
  assert.equal(result.status, "complete");
  assert.equal(report(result, "readings").recordsAdded, 2);
  assert.equal(report(result, "readings").deadLetters, 3);

  const schema = await tableSchema(namespace, "readings");
  const types = Object.fromEntries(
    schema.fields.filter((f) => !f.name.startsWith("_")).map((f) => [f.name, typeToString(f.type)]),
  );
  assert.deepEqual(types, {
    id: "long",
    flag: "boolean",
    small: "int",
    ratio: "float",
    amount: "double",
    name: "string",
    raw: "binary",
    day: "date",
    ts_ms: "timestamptz",
    ts_us: "timestamptz",
    local_us: "timestamp",
    local_ms: "timestamp",
    price: "decimal(9, 2)",
    big_price: "decimal(38, 6)",
    uid: "uuid",
    fixed_uid: "uuid",
    hash: "fixed[4]",
    color: "string",
    address: "string",
    tags: "string",
    scores: "string",
  });
  assert.equal(schema.fields.find((f) => f.name === "id")!.doc, "the reading's id");
  assert.equal(schema.fields.find((f) => f.name === "name")!.doc, "optional name");

  const model = [
    {
      id: 1n,
      flag: true,
      small: -7,
      ratio: 1.5,
      amount: 99.19,
      name: "first",
      raw: Buffer.from([1, 2, 255]),
      day: "2025-10-29",
      ts_ms: "2025-10-29T15:22:04.123000Z",
      ts_us: "2025-10-29T15:22:04.123456Z",
      local_us: "2025-10-29T15:22:04.000001",
      local_ms: "2025-10-29T15:22:04.123000",
      big_price: "12345678901234567890.123456",
      fixed_uid: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
      hash: Buffer.from([0xde, 0xad, 0xbe, 0xef]),
      price: "123.45",
      uid: "6f1c1a4e-6a5e-4c8b-9c1f-3f0b1c2d3e4f",
      color: "GREEN",
      address: '{"city":"Oslo"}',
      tags: '["a","b"]',
      scores: '{"x":1}',
    },
    {
      id: 9007199254740993n,
      flag: false,
      small: -7,
      ratio: 1.5,
      amount: 99.19,
      name: null,
      raw: Buffer.from([1, 2, 255]),
      day: "2025-10-29",
      ts_ms: "2025-10-29T15:22:04.123000Z",
      ts_us: "2025-10-29T15:22:04.123456Z",
      local_us: "2025-10-29T15:22:04.000001",
      local_ms: "2025-10-29T15:22:04.123000",
      big_price: "12345678901234567890.123456",
      fixed_uid: "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
      hash: Buffer.from([0xde, 0xad, 0xbe, 0xef]),
      price: "-0.01",
      uid: "6f1c1a4e-6a5e-4c8b-9c1f-3f0b1c2d3e4f",
      color: "RED",
      address: '{"city":"Oslo"}',
      tags: '["a","b"]',
      scores: '{"x":1}',
    },
  ];
  const columns = Object.keys(model[0]!);
  await readers.assertRows(restTable(namespace, "readings"), model, { columns, orderBy: ["id"] });
  const dead = await readers.rows("duckdb", restTable(namespace, "readings__dlq"), {
    columns: ["_kafka_offset", "_error_kind", "_error"],
    orderBy: ["_kafka_offset"],
  });
  assert.deepEqual(
    dead.map((r) => r._error_kind),
    ["not-framed", "schema-not-found", "undecodable"],
  );
  assert.match(String(dead[0]!._error), /first byte 0x7b, not the magic byte 0x00; the stream's format is avro/);
  assert.match(String(dead[1]!._error), new RegExp(`schema id ${id + 1000}`));
  assert.match(String(dead[2]!._error), new RegExp(`schema id ${id}: the Avro datum does not decode`));
});

test("Avro time-millis and time-micros land as time, read by DuckDB and PyIceberg (Spark 4.0 refuses a table with a time column)", async () => {
  const topic = await topics.create("times");
  const schema = {
    type: "record",
    name: "Times",
    fields: [
      { name: "id", type: "int" },
      { name: "at_ms", type: { type: "int", logicalType: "time-millis" } },
      { name: "at_us", type: ["null", { type: "long", logicalType: "time-micros" }] },
    ],
  };
  const id = await registerSchema(`${topic}-value`, schema);
  const writer = avroWriter(schema);
  await produce(topic, [
    { key: "1", value: avroValue(id, writer, { id: 1, at_ms: 45_296_789, at_us: 45_296_789_012n }) },
    { key: "2", value: avroValue(id, writer, { id: 2, at_ms: 0, at_us: null }) },
  ]);
  const name = `${run}_times`;
  const namespace = `${name}_topics`;
  await syncJob(jobFor(name, `  ${topic}: {mode: append, format: avro, table: times}`), { stateDir });
  const schemaRead = await tableSchema(namespace, "times");
  assert.deepEqual(
    schemaRead.fields.filter((f) => f.name.startsWith("at_")).map((f) => typeToString(f.type)),
    ["time", "time"],
  );
  for (const engine of ["duckdb", "pyiceberg"] as const) {
    const rows = await readers.rows(engine, restTable(namespace, "times"), {
      columns: ["id", "at_ms", "at_us"],
      orderBy: ["id"],
    });
    assert.deepEqual(
      rows,
      [
        { id: 1, at_ms: "12:34:56.789000", at_us: "12:34:56.789012" },
        { id: 2, at_ms: "00:00:00.000000", at_us: null },
      ],
      engine,
    );
  }
  await assert.rejects(readers.rows("spark", restTable(namespace, "times")), /Spark does not support time fields/);
});

test("Avro evolution: a version with an added field adds a column and widens int->long, float->double in the same sync; an incompatible one fails and commits nothing", async () => {
  const topic = await topics.create("evolving", 2);
  const subject = `${topic}-value`;
  const v1 = {
    type: "record",
    name: "Item",
    fields: [
      { name: "id", type: "int" },
      { name: "ratio", type: "float" },
    ],
  };
  const v2 = {
    type: "record",
    name: "Item",
    fields: [
      { name: "id", type: "long" },
      { name: "ratio", type: "double" },
      { name: "note", type: ["null", "string"], default: null, doc: "added in v2" },
    ],
  };
  const id1 = await registerSchema(subject, v1);
  const id2 = await registerSchema(subject, v2);
  assert.notEqual(id1, id2);
  const w1 = avroWriter(v1);
  const w2 = avroWriter(v2);
  await produce(topic, [
    { key: "1", value: avroValue(id1, w1, { id: 1, ratio: 0.5 }), partition: 0 },
    { key: "2", value: avroValue(id1, w1, { id: 2, ratio: 0.25 }), partition: 1 },
    { key: "3", value: avroValue(id2, w2, { id: 3n, ratio: 0.1, note: "hello" }), partition: 0 },
    { key: "4", value: avroValue(id2, w2, { id: 9007199254740993n, ratio: 2.5, note: null }), partition: 1 },
  ]);
  const name = `${run}_evolve`;
  const namespace = `${name}_topics`;
  const job = jobFor(name, `  ${topic}: {mode: upsert, dedup_keys: [id], format: avro, table: items}`);
  const first = await syncJob(job, { stateDir });
  assert.equal(first.status, "complete");
  const schema = await tableSchema(namespace, "items");
  assert.deepEqual(
    schema.fields.filter((f) => !f.name.startsWith("_")).map((f) => [f.name, typeToString(f.type), f.doc ?? null]),
    [
      ["id", "long", null],
      ["ratio", "double", null],
      ["note", "string", "added in v2"],
    ],
  );
  await readers.assertRows(
    restTable(namespace, "items"),
    [
      { id: 1n, ratio: 0.5, note: null },
      { id: 2n, ratio: 0.25, note: null },
      { id: 3n, ratio: 0.1, note: "hello" },
      { id: 9007199254740993n, ratio: 2.5, note: null },
    ],
    { columns: ["id", "ratio", "note"], orderBy: ["id"] },
  );

  // A version that makes id a string: the sync fails naming where, and the table is unchanged.
  const v3 = { type: "record", name: "Item", fields: [{ name: "id", type: "string" }] };
  const id3 = await registerSchema(subject, v3);
  await produce(topic, [
    { key: "5", value: avroValue(id2, w2, { id: 5n, ratio: 1, note: "kept out" }), partition: 1 },
    { key: "6", value: avroValue(id3, avroWriter(v3), { id: "six" }), partition: 1 },
  ]);
  const catalog = await connectRestCatalog({ uri: restCatalog.uri, warehouse: restCatalog.warehouse });
  const before = (await catalog.loadTable({ namespace: [namespace], name: "items" })).metadata.currentSnapshotId;
  await assert.rejects(syncJob(job, { stateDir }), (error: Error) => {
    assert.equal(error.name, "SchemaEvolutionError");
    assert.match(error.message, new RegExp(`topic ${topic} partition 1 offset 3: field "id"`));
    assert.match(error.message, new RegExp(`schema id ${id3} has it as string`));
    assert.match(error.message, new RegExp(`schema id ${id2} made it long|the table's column is long`));
    return true;
  });
  // floe discover shows the registry's schema: the table's columns, widened, and the new version's type clash.
  const discovered = await withDiscoveryConnections(job, (connections) => discoverStreams(job, connections));
  const stream = discovered.streams.find((d) => d.topic === topic)!;
  assert.deepEqual(stream.sample.bad, { "incompatible-schema": 1 });
  assert.deepEqual(
    stream.sample.columns.map((c) => [c.name, c.type, c.source]),
    [
      ["id", "long", "table"],
      ["ratio", "double", "table"],
      ["note", "string", "table"],
    ],
  );
  const after = (await catalog.loadTable({ namespace: [namespace], name: "items" })).metadata.currentSnapshotId;
  assert.equal(after, before, "nothing committed");
  const rows = await readers.rows("duckdb", restTable(namespace, "items"), { columns: ["id"] });
  assert.equal(rows.length, 4);
});

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
  const job = jobFor(name, `  ${topic}: {mode: append, format: protobuf, table: orders}`);
  // Before the first sync, floe discover shows the columns of the registry's schema, by message type.
  const discovered = await withDiscoveryConnections(job, (connections) => discoverStreams(job, connections));
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
      ship_to: "string",
      quantities: "string",
      stock: "string",
      payment: "string",
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
  await readers.assertRows(
    restTable(namespace, "orders"),
    [
      {
        _kafka_offset: 0n,
        id: 9007199254740993n,
        placed_at: "2025-10-29T15:22:04.123456Z",
        status: "PAID",
        ship_to: '{"city":"Oslo"}',
        quantities: "[1,2]",
        stock: '{"a":3}',
        payment: '{"cash":5}',
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
        quantities: "[]",
        stock: "{}",
        payment: '{"card":"visa"}',
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
  const dead = await readers.rows("duckdb", restTable(namespace, "orders__dlq"), {
    columns: ["_kafka_offset", "_error_kind"],
  });
  assert.deepEqual(dead, [{ _kafka_offset: 3n, _error_kind: "not-framed" }]);
});

test("registry credentials: basic auth and a bearer token are sent; a wrong password fails the sync as auth without printing it", async () => {
  const topic = await topics.create("auth");
  const schema = { type: "record", name: "A", fields: [{ name: "n", type: "int" }] };
  const id = await registerSchema(`${topic}-value`, schema);
  await produce(topic, [{ key: "1", value: avroValue(id, avroWriter(schema), { n: 1 }) }]);
  const stream = `  ${topic}: {mode: append, format: avro, table: t}`;
  const basic = jobFor(
    `${run}_basic`,
    stream,
    `{url: ${schemaRegistry.authUrl}, auth: {basic: {username: ${schemaRegistry.username}, password: ${schemaRegistry.password}}}}`,
  );
  assert.equal(report(await syncJob(basic, { stateDir }), "t").recordsAdded, 1);
  const bearer = jobFor(
    `${run}_bearer`,
    stream,
    `{url: ${schemaRegistry.authUrl}, auth: {bearer: {token: ${schemaRegistry.token}}}}`,
  );
  assert.equal(report(await syncJob(bearer, { stateDir }), "t").recordsAdded, 1);
  const wrong = jobFor(
    `${run}_wrong`,
    stream,
    `{url: ${schemaRegistry.authUrl}, auth: {basic: {username: floe, password: not-the-password-42}}}`,
  );
  let failed: unknown;
  await assert.rejects(
    syncJob(wrong, {
      stateDir,
      onEvent: (e) => {
        if (e.type === "failed") failed = e.error;
      },
    }),
    /HTTP 403/,
  );
  assert.equal((failed as { kind: string }).kind, "auth");
  assert.doesNotMatch(JSON.stringify(failed), /not-the-password-42/);
});

test("framed keys: _kafka_key keeps the raw bytes, a key field is the dedup key, and a tombstone with that key deletes the row", async () => {
  const topic = await topics.create("keyed");
  const keySchema = { type: "record", name: "Key", fields: [{ name: "id", type: "long" }] };
  const valueSchema = { type: "record", name: "Value", fields: [{ name: "name", type: "string" }] };
  const keyId = await registerSchema(`${topic}-key`, keySchema);
  const valueId = await registerSchema(`${topic}-value`, valueSchema);
  const key = (id: bigint) => avroValue(keyId, avroWriter(keySchema), { id });
  const value = (name: string) => avroValue(valueId, avroWriter(valueSchema), { name });
  await produce(topic, [
    { key: key(1n), value: value("one") },
    { key: key(2n), value: value("two") },
    { key: key(1n), value: value("one again") },
    { key: key(2n), value: null },
    { key: "plain", value: value("unframed key") },
  ]);
  const name = `${run}_keyed`;
  const namespace = `${name}_topics`;
  const job = jobFor(
    name,
    `  ${topic}: {mode: upsert, dedup_keys: [_kafka_key.id], key_format: avro, format: avro, table: keyed}`,
  );
  const result = await syncJob(job, { stateDir });
  assert.equal(result.status, "complete");
  await readers.assertRows(
    restTable(namespace, "keyed"),
    [{ _kafka_key: key(1n).toString("base64"), name: "one again", _kafka_offset: 2n }],
    { columns: ["_kafka_key", "name", "_kafka_offset"] },
  );
  const dead = await readers.rows("duckdb", restTable(namespace, "keyed__dlq"), { columns: ["_error_kind", "_error"] });
  assert.equal(dead.length, 1);
  assert.equal(dead[0]!._error_kind, "not-framed");
  assert.match(String(dead[0]!._error), /^key: .*key_format is avro/);
});

test("an https registry signed by a private CA: trusted through tls.ca; without it the sync fails as a config error naming the fix", async () => {
  const topic = await topics.create("tls");
  const schema = { type: "record", name: "T", fields: [{ name: "n", type: "int" }] };
  const id = await registerSchema(`${topic}-value`, schema);
  await produce(topic, [{ key: "1", value: avroValue(id, avroWriter(schema), { n: 7 }) }]);
  const stream = `  ${topic}: {mode: append, format: avro, table: t}`;
  const trusted = jobFor(`${run}_tls`, stream, `{url: ${schemaRegistry.tlsUrl}, tls: {ca: ${schemaRegistry.caFile}}}`);
  assert.equal(report(await syncJob(trusted, { stateDir }), "t").recordsAdded, 1);
  const skip = jobFor(`${run}_tls_skip`, stream, `{url: ${schemaRegistry.tlsUrl}, tls: {insecure_skip_verify: true}}`);
  assert.equal(report(await syncJob(skip, { stateDir }), "t").recordsAdded, 1);
  const untrusted = jobFor(`${run}_tls_untrusted`, stream, `{url: ${schemaRegistry.tlsUrl}}`);
  let failed: { kind: string; message: string } | undefined;
  await assert.rejects(
    syncJob(untrusted, {
      stateDir,
      onEvent: (e) => {
        if (e.type === "failed") failed = e.error;
      },
    }),
    /certificate is not trusted .*set schema_registry.tls.ca/,
  );
  assert.equal(failed?.kind, "config");
});

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
  const job = jobFor(
    name,
    `  ${customersTopic}: {mode: upsert, dedup_keys: [id], format: avro, table: customers}\n` +
      `  ${ordersTopic}: {mode: upsert, dedup_keys: [id], format: avro, table: orders}`,
  );
  const target = { namespace, readers: engineReaders(readers, restTable, namespace) };

  await producePhase(1);
  await assertSeedWalkthrough(1, await syncJob(job, { stateDir }), target);
  assert.equal(
    typeToString((await tableSchema(namespace, "orders")).fields.find((f) => f.name === "amount")!.type),
    "decimal(10, 2)",
  );

  await producePhase(2);
  await assertSeedWalkthrough(2, await syncJob(job, { stateDir }), target);
  const [created] = await readers.sql("duckdb", `SELECT created_at FROM rest.${namespace}.customers WHERE id = 3`);
  assert.equal(String(created?.created_at), "2026-10-29T15:22:04.000000Z");
});
