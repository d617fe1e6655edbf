// Avro values through the real schema registry and the real broker: produced in the Confluent
// wire format, their schemas fetched by id, every type and logical type, evolution between
// versions and framed keys; each table read back through DuckDB, PyIceberg and Spark and
// compared with a model.
import assert from "node:assert/strict";
import { test } from "node:test";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { typeToString } from "#src/iceberg/spec/types.ts";
import { discoverBindings, withDiscoveryConnections } from "#src/inspect/discover-bindings.ts";
import { produce } from "../../dev/kafka.ts";
import { restTable } from "../../dev/readers.ts";
import { avroValue, avroWriter, registerSchema } from "../../dev/registry.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { decimalBytes, registrySuite, report, tableSchema } from "../helpers/registry-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const suite = registrySuite();
const { run, topics, stateDir, jobFor } = suite;

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
  const job = jobFor(name, { [topic]: { mode: "append", format: "avro", table: "readings" } });
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
    address: "struct<city: string>",
    tags: "list<string>",
    scores: "map<string, int>",
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
      address: { city: "Oslo" },
      tags: ["a", "b"],
      scores: [["x", 1]],
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
      address: { city: "Oslo" },
      tags: ["a", "b"],
      scores: [["x", 1]],
    },
  ];
  const columns = Object.keys(model[0]!);
  await suite.readers.assertRows(restTable(namespace, "readings"), model, { columns, orderBy: ["id"] });
  const dead = await suite.readers.rows("duckdb", restTable(namespace, "readings__dlq"), {
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
  await syncJob(jobFor(name, { [topic]: { mode: "append", format: "avro", table: "times" } }), { stateDir });
  const schemaRead = await tableSchema(namespace, "times");
  assert.deepEqual(
    schemaRead.fields.filter((f) => f.name.startsWith("at_")).map((f) => typeToString(f.type)),
    ["time", "time"],
  );
  for (const engine of ["duckdb", "pyiceberg"] as const) {
    const rows = await suite.readers.rows(engine, restTable(namespace, "times"), {
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
  await assert.rejects(
    suite.readers.rows("spark", restTable(namespace, "times")),
    /Spark does not support time fields/,
  );
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
  const job = jobFor(name, { [topic]: { mode: "upsert", dedup_keys: ["id"], format: "avro", table: "items" } });
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
  await suite.readers.assertRows(
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
  const discovered = await withDiscoveryConnections(job, (connections) => discoverBindings(job, connections));
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
  const rows = await suite.readers.rows("duckdb", restTable(namespace, "items"), { columns: ["id"] });
  assert.equal(rows.length, 4);
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
  const job = jobFor(name, {
    [topic]: { mode: "upsert", dedup_keys: ["_kafka_key.id"], key_format: "avro", format: "avro", table: "keyed" },
  });
  const result = await syncJob(job, { stateDir });
  assert.equal(result.status, "complete");
  await suite.readers.assertRows(
    restTable(namespace, "keyed"),
    [{ _kafka_key: key(1n).toString("base64"), name: "one again", _kafka_offset: 2n }],
    { columns: ["_kafka_key", "name", "_kafka_offset"] },
  );
  const dead = await suite.readers.rows("duckdb", restTable(namespace, "keyed__dlq"), {
    columns: ["_error_kind", "_error"],
  });
  assert.equal(dead.length, 1);
  assert.equal(dead[0]!._error_kind, "not-framed");
  assert.match(String(dead[0]!._error), /^key: .*key_format is avro/);
});
