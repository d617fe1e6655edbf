// The Confluent wire format, Avro and Protobuf schemas -> columns and values, and schema
// evolution across registry versions: pure logic, no registry.
import assert from "node:assert/strict";
import { test } from "node:test";
import avsc from "avsc";
import protobuf from "protobufjs";
import { avroDecoder, unscaled } from "#src/decode/avro-decoder.ts";
import { encodeConfluentFrame, parseConfluentFrame } from "#src/decode/confluent-frame.ts";
import { protobufDecoder } from "#src/decode/protobuf-decoder.ts";
import { RegistrySchema, SchemaEvolutionError } from "#src/decode/registry-schema.ts";
import { type SchemaDecoder, type TypedRecord, UnsupportedSchemaError } from "#src/decode/typed-record.ts";
import { bigintLongHook } from "#src/iceberg/spec/avro-long.ts";
import { typeToString } from "#src/iceberg/spec/types.ts";

function frame(result: ReturnType<typeof parseConfluentFrame>) {
  assert.ok("frame" in result, "problem" in result ? result.problem : "");
  return result.frame;
}

test("wire format: magic byte, big-endian schema id, payload", () => {
  const bytes = Uint8Array.from([0, 0, 0, 1, 2, 0xaa, 0xbb]);
  const f = frame(parseConfluentFrame(bytes, false));
  assert.equal(f.schemaId, 258);
  assert.deepEqual([...f.payload], [0xaa, 0xbb]);
  assert.deepEqual(f.messageIndexes, []);
  assert.equal(frame(parseConfluentFrame(Uint8Array.from([0, 0xff, 0xff, 0xff, 0xff]), false)).schemaId, 4294967295);
});

test("wire format: protobuf message indexes are zigzag varints; a lone 0 is [0]", () => {
  const first = frame(parseConfluentFrame(Uint8Array.from([0, 0, 0, 0, 7, 0, 0x08, 0x01]), true));
  assert.equal(first.schemaId, 7);
  assert.deepEqual(first.messageIndexes, [0]);
  assert.deepEqual([...first.payload], [0x08, 0x01]);
  // [1, 0]: count 2 -> 4, then 1 -> 2, 0 -> 0 (zigzag)
  const nested = frame(parseConfluentFrame(Uint8Array.from([0, 0, 0, 0, 7, 4, 2, 0, 0x08]), true));
  assert.deepEqual(nested.messageIndexes, [1, 0]);
  assert.deepEqual([...nested.payload], [0x08]);
  for (const indexes of [[0], [2], [1, 3], [70, 0, 200]]) {
    const encoded = encodeConfluentFrame(9, Uint8Array.from([5]), indexes);
    const back = frame(parseConfluentFrame(encoded, true));
    assert.deepEqual(back.messageIndexes, indexes);
    assert.deepEqual([...back.payload], [5]);
  }
});

test("wire format: unframed and truncated values are refused with the reason", () => {
  const json = new TextEncoder().encode('{"id":1}');
  const notFramed = parseConfluentFrame(json, false);
  assert.ok("problem" in notFramed && /first byte 0x7b, not the magic byte 0x00/.test(notFramed.problem));
  const short = parseConfluentFrame(Uint8Array.from([0, 0, 1]), false);
  assert.ok("problem" in short && /too short/.test(short.problem));
  const badCount = parseConfluentFrame(Uint8Array.from([0, 0, 0, 0, 1, 0x80]), true);
  assert.ok("problem" in badCount && /message-index count/.test(badCount.problem));
  const tooMany = parseConfluentFrame(Uint8Array.from([0, 0, 0, 0, 1, 20, 2]), true);
  assert.ok("problem" in tooMany);
});

const everyAvroType = {
  type: "record",
  name: "Everything",
  namespace: "floe.test",
  fields: [
    { name: "flag", type: "boolean", doc: "a flag" },
    { name: "small", type: "int" },
    { name: "big", type: "long" },
    { name: "ratio", type: "float" },
    { name: "amount", type: "double" },
    { name: "name", type: ["null", "string"], doc: "optional name" },
    { name: "raw", type: "bytes" },
    { name: "hash", type: { type: "fixed", name: "Hash", size: 4 } },
    { name: "day", type: { type: "int", logicalType: "date" } },
    { name: "at_ms", type: { type: "int", logicalType: "time-millis" } },
    { name: "at_us", type: { type: "long", logicalType: "time-micros" } },
    { name: "ts_ms", type: { type: "long", logicalType: "timestamp-millis" } },
    { name: "ts_us", type: ["null", { type: "long", logicalType: "timestamp-micros" }] },
    { name: "local_ms", type: { type: "long", logicalType: "local-timestamp-millis" } },
    { name: "local_us", type: { type: "long", logicalType: "local-timestamp-micros" } },
    { name: "price", type: { type: "bytes", logicalType: "decimal", precision: 9, scale: 2 } },
    {
      name: "fixed_price",
      type: { type: "fixed", name: "F8", size: 8, logicalType: "decimal", precision: 18, scale: 4 },
    },
    { name: "id", type: { type: "string", logicalType: "uuid" } },
    { name: "color", type: { type: "enum", name: "Color", symbols: ["RED", "GREEN"] } },
    {
      name: "address",
      type: { type: "record", name: "Address", fields: [{ name: "city", type: "string" }] },
    },
    { name: "tags", type: { type: "array", items: "string" } },
    { name: "scores", type: { type: "map", values: "long" } },
    { name: "either", type: ["null", "int", "string"] },
    { name: "home", type: ["null", "Address"] },
  ],
};

function decodeOk(decoder: SchemaDecoder, payload: Uint8Array, indexes: number[] = []): TypedRecord {
  const result = decoder.decode(payload, indexes);
  assert.ok("record" in result, "problem" in result ? result.problem : "");
  return result.record;
}

test("Avro: every type and logical type to its Iceberg column, docs kept", () => {
  const decoder = avroDecoder(JSON.stringify(everyAvroType));
  const types = Object.fromEntries(decoder.columns.map((c) => [c.name, typeToString(c.type)]));
  assert.deepEqual(types, {
    flag: "boolean",
    small: "int",
    big: "long",
    ratio: "float",
    amount: "double",
    name: "string",
    raw: "binary",
    hash: "fixed[4]",
    day: "date",
    at_ms: "time",
    at_us: "time",
    ts_ms: "timestamptz",
    ts_us: "timestamptz",
    local_ms: "timestamp",
    local_us: "timestamp",
    price: "decimal(9, 2)",
    fixed_price: "decimal(18, 4)",
    id: "uuid",
    color: "string",
    address: "struct<city: string>",
    tags: "list<string>",
    scores: "map<string, long>",
    either: "string",
    home: "struct<city: string>",
  });
  assert.equal(decoder.columns.find((c) => c.name === "flag")!.doc, "a flag");
  assert.equal(decoder.columns.find((c) => c.name === "name")!.doc, "optional name");
});

test("Avro: values in their columns' representation, exact beyond 2^53", () => {
  const writer = avsc.Type.forSchema(everyAvroType as avsc.Schema, {
    typeHook: bigintLongHook,
    wrapUnions: "auto",
  });
  const value = {
    flag: true,
    small: -5,
    big: 9007199254740993n,
    ratio: 1.5,
    amount: 99.19,
    name: null,
    raw: Buffer.from([1, 2, 3]),
    hash: Buffer.from([9, 8, 7, 6]),
    day: 20_000,
    at_ms: 3_600_000,
    at_us: 3_600_000_123n,
    ts_ms: 1_767_225_600_123n,
    ts_us: 1_767_225_600_123_456n,
    local_ms: 1_000n,
    local_us: 1_000_001n,
    price: Buffer.from([0xff, 0x85]), // -123 -> -1.23
    fixed_price: Buffer.from([0, 0, 0, 0, 0, 0, 0x30, 0x39]), // 12345 -> 1.2345
    id: "6f1c1a4e-6a5e-4c8b-9c1f-3f0b1c2d3e4f",
    color: "GREEN",
    address: { city: "Oslo" },
    tags: ["a", "b"],
    scores: { x: 9007199254740993n },
    either: 7,
    home: { city: "Bergen" },
  };
  const record = decodeOk(avroDecoder(JSON.stringify(everyAvroType)), writer.toBuffer(value));
  assert.equal(record.flag, true);
  assert.equal(record.small, -5);
  assert.equal(record.big, 9007199254740993n);
  assert.equal(record.ratio, 1.5);
  assert.equal(record.name, null);
  assert.deepEqual([...(record.raw as Uint8Array)], [1, 2, 3]);
  assert.deepEqual([...(record.hash as Uint8Array)], [9, 8, 7, 6]);
  assert.equal(record.day, 20_000);
  assert.equal(record.at_ms, 3_600_000_000);
  assert.equal(record.at_us, 3_600_000_123);
  assert.equal(record.ts_ms, 1_767_225_600_123_000);
  assert.equal(record.ts_us, 1_767_225_600_123_456);
  assert.equal(record.local_ms, 1_000_000);
  assert.equal(record.local_us, 1_000_001);
  assert.equal(record.price, -123n);
  assert.equal(record.fixed_price, 12345n);
  assert.equal(record.id, "6f1c1a4e-6a5e-4c8b-9c1f-3f0b1c2d3e4f");
  assert.equal(record.color, "GREEN");
  assert.deepEqual({ ...(record.address as object) }, { city: "Oslo" });
  assert.deepEqual(record.tags, ["a", "b"]);
  assert.deepEqual(record.scores, new Map([["x", 9007199254740993n]]));
  assert.equal(record.either, "7", "a union of several types is its JSON text");
  assert.deepEqual({ ...(record.home as object) }, { city: "Bergen" });
});

test("Avro: a datum that does not match its schema, and a schema that is no record", () => {
  const decoder = avroDecoder(JSON.stringify({ type: "record", name: "R", fields: [{ name: "a", type: "long" }] }));
  const result = decoder.decode(Uint8Array.from([0x02, 0x04]), []);
  assert.ok("problem" in result && /does not decode/.test(result.problem));
  assert.throws(() => avroDecoder('"string"'), UnsupportedSchemaError);
  assert.throws(() => avroDecoder("{not json"), UnsupportedSchemaError);
});

test("Avro: named types from references", () => {
  const address = JSON.stringify({
    type: "record",
    name: "Address",
    namespace: "shop",
    fields: [{ name: "city", type: "string" }],
  });
  const order = JSON.stringify({
    type: "record",
    name: "Order",
    namespace: "shop",
    fields: [
      { name: "id", type: "long" },
      { name: "ship_to", type: "shop.Address" },
    ],
  });
  const decoder = avroDecoder(order, [address]);
  assert.deepEqual(
    decoder.columns.map((c) => [c.name, typeToString(c.type)]),
    [
      ["id", "long"],
      ["ship_to", "struct<city: string>"],
    ],
  );
  const writer = avsc.Type.forSchema(JSON.parse(order), { registry: registryOf(address) });
  const record = decodeOk(decoder, writer.toBuffer({ id: 1, ship_to: { city: "Oslo" } }));
  assert.deepEqual({ ...(record.ship_to as object) }, { city: "Oslo" });
});

test("decimal bytes are two's complement big-endian", () => {
  assert.equal(unscaled(Uint8Array.from([])), 0n);
  assert.equal(unscaled(Uint8Array.from([0x7f])), 127n);
  assert.equal(unscaled(Uint8Array.from([0x80])), -128n);
  assert.equal(unscaled(Uint8Array.from([0x00, 0x80])), 128n);
  assert.equal(unscaled(Uint8Array.from([0xff, 0xff])), -1n);
});

const orderProto = `
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "address.proto";

message Order {
  int64 id = 1;
  google.protobuf.Timestamp placed_at = 2;
  Status status = 3;
  Address ship_to = 4;
  repeated int32 quantities = 5;
  map<string, int32> stock = 6;
  oneof payment { string card = 7; int32 cash = 8; }
  optional string note = 9;
  uint64 huge = 10;
  bytes raw = 11;
  bool gift = 12;
  double amount = 13;
  float ratio = 14;
  int32 small = 15;
  uint32 unsigned_small = 16;
  sint64 delta = 17;
  enum Status { NEW = 0; PAID = 1; }
  message Line { string sku = 1; }
}

message Refund {
  int64 order_id = 1;
  message Reason { string text = 1; }
}
`;
const addressProto = 'syntax = "proto3";\npackage shop;\nmessage Address { string city = 1; }\n';

test("Protobuf: scalars to columns, Timestamp to timestamptz, enums by name, messages, repeated, maps and oneofs nested", () => {
  const decoder = protobufDecoder(orderProto, [{ name: "address.proto", schema: addressProto }]);
  assert.deepEqual(Object.fromEntries(decoder.columns.map((c) => [c.name, typeToString(c.type)])), {
    id: "long",
    placed_at: "timestamptz",
    status: "string",
    ship_to: "struct<city: string>",
    quantities: "list<int>",
    stock: "map<string, int>",
    payment: "struct<card: string, cash: int>",
    note: "string",
    huge: "decimal(20, 0)",
    raw: "binary",
    gift: "boolean",
    amount: "double",
    ratio: "float",
    small: "int",
    unsigned_small: "long",
    delta: "long",
  });
  const root = new protobuf.Root();
  protobuf.parse(addressProto, root, { keepCase: true });
  protobuf.parse(orderProto, root, { keepCase: true });
  root.addJSON(protobuf.common.get("google/protobuf/timestamp.proto")!.nested!);
  root.resolveAll();
  const Order = root.lookupType("shop.Order");
  const payload = Order.encode(
    Order.fromObject({
      id: "9007199254740993",
      placed_at: { seconds: 1_767_225_600, nanos: 123_456_789 },
      status: "PAID",
      ship_to: { city: "Oslo" },
      quantities: [1, 2],
      stock: { a: 3 },
      cash: 5,
      huge: "18446744073709551615",
      raw: Buffer.from([1, 2]),
      small: -3,
      delta: "-7",
    }),
  ).finish();
  const record = decodeOk(decoder, payload, [0]);
  assert.equal(record.id, 9007199254740993n);
  assert.equal(record.placed_at, 1_767_225_600_123_456);
  assert.equal(record.status, "PAID");
  assert.deepEqual({ ...(record.ship_to as object) }, { city: "Oslo" });
  assert.deepEqual(record.quantities, [1, 2]);
  assert.deepEqual(record.stock, new Map([["a", 3]]));
  assert.deepEqual({ ...(record.payment as object) }, { card: null, cash: 5 }, "only the member that is set");
  assert.equal(record.note, null, "a proto3 optional that is absent is null");
  assert.equal(record.huge, 18446744073709551615n);
  assert.deepEqual([...(record.raw as Uint8Array)], [1, 2]);
  assert.equal(record.gift, false, "a scalar without presence reads as its default");
  assert.equal(record.amount, 0);
  assert.equal(record.small, -3);
  assert.equal(record.delta, -7);

  // The second message of the file, by its message index.
  const Refund = root.lookupType("shop.Refund");
  const refund = decodeOk(decoder, Refund.encode(Refund.fromObject({ order_id: 4 })).finish(), [1]);
  assert.deepEqual(refund, { order_id: 4 });
  const missing = decoder.decode(Uint8Array.from([]), [5]);
  assert.ok("problem" in missing && /name no message type/.test(missing.problem));
  const garbage = decoder.decode(Uint8Array.from([0xff, 0xff, 0xff]), [0]);
  assert.ok("problem" in garbage && /does not decode/.test(garbage.problem));
});

const place = { topic: "orders", partition: 2, offset: 41n };

test("evolution: an added field is a new column; int->long and float->double widen", () => {
  const shape = new RegistrySchema();
  shape.observe(
    1,
    [
      { name: "id", type: "int" },
      { name: "ratio", type: "float" },
    ],
    place,
  );
  const created = shape.schema;
  assert.deepEqual(
    created.fields.slice(8).map((f) => [f.id, f.name, f.type, f.required]),
    [
      [9, "id", "int", false],
      [10, "ratio", "float", false],
    ],
  );
  const evolved = new RegistrySchema({ schema: created, lastColumnId: 10 });
  evolved.observe(
    2,
    [
      { name: "id", type: "long" },
      { name: "ratio", type: "double" },
      { name: "note", type: "string", doc: "added in v2" },
    ],
    place,
  );
  assert.deepEqual(evolved.changes(), [
    { kind: "add-column", field: { id: 11, name: "note", required: false, type: "string", doc: "added in v2" } },
    { kind: "widen", name: "id", from: "int", to: "long" },
    { kind: "widen", name: "ratio", from: "float", to: "double" },
  ]);
  // An older version after the widening still fits.
  evolved.observe(1, [{ name: "id", type: "int" }], place);
  assert.equal(evolved.changes().length, 3);
  assert.equal(evolved.schema.schemaId, created.schemaId + 1);
});

test("evolution: any other change fails naming topic, partition, offset, field and both schema ids", () => {
  const shape = new RegistrySchema();
  shape.observe(3, [{ name: "amount", type: "long" }], place);
  assert.throws(
    () =>
      shape.observe(
        4,
        [
          { name: "amount", type: "string" },
          { name: "extra", type: "int" },
        ],
        place,
      ),
    (error: unknown) =>
      error instanceof SchemaEvolutionError &&
      error.message.includes("topic orders partition 2 offset 41") &&
      error.message.includes('field "amount"') &&
      error.message.includes("schema id 4 has it as string") &&
      error.message.includes("schema id 3 made it long"),
  );
  assert.equal(
    shape.schema.fields.some((f) => f.name === "extra"),
    false,
    "a refused schema adds nothing",
  );
  const table = new RegistrySchema({ schema: shape.schema, lastColumnId: 9 });
  assert.throws(
    () =>
      table.observe(
        5,
        [
          { name: "amount", type: "int" },
          { name: "Amount", type: "int" },
        ],
        place,
      ),
    /differs only in case/,
  );
  assert.throws(() => table.observe(6, [{ name: "_kafka_key", type: "string" }], place), /reserved/);
  assert.throws(() => table.observe(7, [{ name: "amount", type: "double" }], place), /the table's column is long/);
});

function registryOf(...schemas: string[]): Record<string, avsc.Type> {
  const registry: Record<string, avsc.Type> = {};
  for (const s of schemas) avsc.Type.forSchema(JSON.parse(s), { registry });
  return registry;
}
