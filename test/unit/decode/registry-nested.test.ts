// Avro records, arrays and maps and Protobuf messages, repeated fields, maps and oneofs as
// Iceberg structs, lists and maps; recursion kept as JSON text; fields declared json as their
// JSON text; and the evolution of nested columns across registry versions: pure logic.
import assert from "node:assert/strict";
import { test } from "node:test";
import avsc from "avsc";
import protobuf from "protobufjs";
import { avroDecoder } from "#src/decode/avro-decoder.ts";
import { protobufDecoder } from "#src/decode/protobuf-decoder.ts";
import { RegistrySchema, SchemaEvolutionError } from "#src/decode/registry-schema.ts";
import type { SchemaDecoder, TypedValue } from "#src/decode/typed-record.ts";
import { SchemaChange } from "#src/iceberg/commit/update-schema.ts";
import { bigintLongHook } from "#src/iceberg/spec/avro-long.ts";
import { allFieldIds, asStruct } from "#src/iceberg/spec/schema.ts";
import { type IcebergType, typeToString } from "#src/iceberg/spec/types.ts";

const place = { topic: "orders", partition: 0, offset: 7n };

function decodeOk(decoder: SchemaDecoder, payload: Uint8Array, indexes: number[] = [], text?: Set<string>) {
  const result = decoder.decode(payload, indexes, text);
  assert.ok("record" in result, "problem" in result ? result.problem : "");
  return result;
}

/** Structs as plain objects (the decoders' have no prototype), for deepEqual. */
function plain(value: TypedValue | undefined): unknown {
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, plain(v)]));
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

function typesOf(columns: readonly { name: string; type: IcebergType }[]) {
  return Object.fromEntries(columns.map((c) => [c.name, typeToString(c.type)]));
}

const customer = {
  type: "record",
  name: "Customer",
  namespace: "shop",
  fields: [
    { name: "id", type: "long" },
    {
      name: "address",
      type: [
        "null",
        {
          type: "record",
          name: "Address",
          fields: [
            { name: "city", type: "string" },
            { name: "zip", type: ["null", "string"], default: null },
          ],
        },
      ],
      default: null,
    },
    {
      name: "orders",
      type: {
        type: "array",
        items: {
          type: "record",
          name: "Line",
          fields: [
            { name: "sku", type: "string" },
            { name: "qty", type: "int" },
          ],
        },
      },
    },
    { name: "attrs", type: { type: "map", values: ["null", { type: "long", logicalType: "timestamp-millis" }] } },
    { name: "homes", type: { type: "array", items: ["null", "Address"] } },
    { name: "empty", type: { type: "record", name: "Empty", fields: [] } },
  ],
};

test("Avro: records are structs, arrays lists, maps map<string, V>, at any depth, with logical types inside", () => {
  const decoder = avroDecoder(JSON.stringify(customer));
  assert.deepEqual(typesOf(decoder.columns), {
    id: "long",
    address: "struct<city: string, zip: string>",
    orders: "list<struct<sku: string, qty: int>>",
    attrs: "map<string, timestamptz>",
    homes: "list<struct<city: string, zip: string>>",
    empty: "string",
  });
  const struct = decoder.columns.find((c) => c.name === "address")!.type;
  assert.ok(typeof struct === "object" && struct.kind === "struct");
  assert.deepEqual(
    struct.fields.map((f) => [f.id, f.required]),
    [
      [0, false],
      [0, false],
    ],
    "ids come from the table; every field is optional",
  );
  const writer = avsc.Type.forSchema(customer as avsc.Schema, { typeHook: bigintLongHook, wrapUnions: "auto" });
  const { record } = decodeOk(
    decoder,
    writer.toBuffer({
      id: 1n,
      address: { city: "Paris", zip: null },
      orders: [
        { sku: "A1", qty: 2 },
        { sku: "B2", qty: 1 },
      ],
      attrs: { seen: 1_767_225_600_123n, gone: null },
      homes: [null, { city: "Oslo", zip: "0150" }],
      empty: {},
    }),
  );
  assert.deepEqual(plain(record.address), { city: "Paris", zip: null });
  assert.deepEqual(plain(record.orders), [
    { sku: "A1", qty: 2 },
    { sku: "B2", qty: 1 },
  ]);
  assert.deepEqual(
    record.attrs,
    new Map<TypedValue, TypedValue>([
      ["seen", 1_767_225_600_123_000],
      ["gone", null],
    ]),
  );
  assert.deepEqual(plain(record.homes), [null, { city: "Oslo", zip: "0150" }]);
  assert.equal(record.empty, "{}");
  assert.equal(Object.getPrototypeOf(record.address), null, "a field named __proto__ would be a field");
});

test("Avro: a record inside itself is its JSON text at the recursion, and decoding terminates", () => {
  const node = {
    type: "record",
    name: "Node",
    fields: [
      { name: "value", type: "long" },
      { name: "next", type: ["null", "Node"], default: null },
      { name: "children", type: { type: "array", items: "Node" } },
    ],
  };
  const tree = {
    type: "record",
    name: "Tree",
    fields: [{ name: "root", type: node }],
  };
  const decoder = avroDecoder(JSON.stringify(tree));
  assert.deepEqual(typesOf(decoder.columns), { root: "struct<value: long, next: string, children: list<string>>" });
  const writer = avsc.Type.forSchema(tree as avsc.Schema, { typeHook: bigintLongHook, wrapUnions: "auto" });
  const leaf = { value: 3n, next: null, children: [] };
  const { record } = decodeOk(
    decoder,
    writer.toBuffer({ root: { value: 1n, next: { value: 2n, next: null, children: [] }, children: [leaf] } }),
  );
  assert.deepEqual(plain(record.root), {
    value: 1,
    next: '{"value":2,"next":null,"children":[]}',
    children: ['{"value":3,"next":null,"children":[]}'],
  });
  // The top-level record met again inside itself is a recursion too.
  const self = avroDecoder(JSON.stringify(node));
  assert.deepEqual(typesOf(self.columns), { value: "long", next: "string", children: "list<string>" });
});

test("Avro: fields named in text are their JSON text, in string columns", () => {
  const decoder = avroDecoder(JSON.stringify(customer));
  const writer = avsc.Type.forSchema(customer as avsc.Schema, { typeHook: bigintLongHook, wrapUnions: "auto" });
  const payload = writer.toBuffer({
    id: 1n,
    address: { city: "Paris", zip: null },
    orders: [],
    attrs: {},
    homes: [],
    empty: {},
  });
  const { record, columns } = decodeOk(decoder, payload, [], new Set(["address", "orders"]));
  assert.equal(record.address, '{"city":"Paris","zip":null}');
  assert.equal(record.orders, "[]");
  assert.deepEqual(record.attrs, new Map());
  assert.equal(typesOf(columns).address, "string");
  assert.equal(typesOf(columns).attrs, "map<string, timestamptz>");
});

const shopProto = `
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";

message Order {
  int64 id = 1;
  Customer customer = 2;
  repeated Line lines = 3;
  map<int32, string> labels = 4;
  map<int64, Line> by_id = 5;
  map<bool, int32> flags = 6;
  map<uint64, int32> big_keys = 7;
  oneof payment { string card = 8; Cash cash = 9; }
  Category category = 10;
  repeated google.protobuf.Timestamp times = 11;
  Empty nothing = 12;
}
message Customer {
  string name = 1;
  Address address = 2;
  optional string email = 3;
}
message Address { string city = 1; string zip = 2; }
message Line { string sku = 1; int32 qty = 2; }
message Cash { int64 cents = 1; }
message Category { string name = 1; Category parent = 2; repeated Category children = 3; }
message Empty {}
`;

function shopRoot() {
  const root = new protobuf.Root();
  protobuf.parse(shopProto, root, { keepCase: true });
  root.addJSON(protobuf.common.get("google/protobuf/timestamp.proto")!.nested!);
  root.resolveAll();
  return root;
}

test("Protobuf: messages are structs, repeated fields lists, maps map<K, V> with K a primitive, a oneof a struct of its members", () => {
  const decoder = protobufDecoder(shopProto);
  assert.deepEqual(typesOf(decoder.columns), {
    id: "long",
    customer: "struct<name: string, address: struct<city: string, zip: string>, email: string>",
    lines: "list<struct<sku: string, qty: int>>",
    labels: "map<int, string>",
    by_id: "map<long, struct<sku: string, qty: int>>",
    flags: "map<boolean, int>",
    big_keys: "map<decimal(20, 0), int>",
    payment: "struct<card: string, cash: struct<cents: long>>",
    category: "struct<name: string, parent: string, children: list<string>>",
    times: "list<timestamptz>",
    nothing: "string",
  });
  const Order = shopRoot().lookupType("shop.Order");
  const payload = Order.encode(
    Order.fromObject({
      id: 1,
      customer: { name: "Ada", address: { city: "Paris" } },
      lines: [{ sku: "A1", qty: 2 }, { sku: "B2" }],
      labels: { 7: "seven", "-1": "minus one" },
      by_id: { "9007199254740993": { sku: "Z", qty: 1 }, "-5": { sku: "N" } },
      flags: { true: 1, false: 0 },
      big_keys: { "18446744073709551615": 1 },
      cash: { cents: "9007199254740993" },
      category: { name: "tools", parent: { name: "all" }, children: [{ name: "saws" }] },
      times: [{ seconds: 1, nanos: 2000 }],
      nothing: {},
    }),
  ).finish();
  const { record } = decodeOk(decoder, payload, [0]);
  assert.deepEqual(plain(record.customer), {
    name: "Ada",
    address: { city: "Paris", zip: "" },
    email: null,
  });
  assert.deepEqual(plain(record.lines), [
    { sku: "A1", qty: 2 },
    { sku: "B2", qty: 0 },
  ]);
  assert.deepEqual(
    record.labels,
    new Map([
      [7, "seven"],
      [-1, "minus one"],
    ]),
  );
  assert.deepEqual(
    plain(record.by_id),
    new Map<unknown, unknown>([
      [9007199254740993n, { sku: "Z", qty: 1 }],
      [-5, { sku: "N", qty: 0 }],
    ]),
  );
  assert.deepEqual(
    record.flags,
    new Map([
      [true, 1],
      [false, 0],
    ]),
  );
  assert.deepEqual(record.big_keys, new Map([[18446744073709551615n, 1]]));
  assert.deepEqual(plain(record.payment), { card: null, cash: { cents: 9007199254740993n } });
  assert.deepEqual(plain(record.category), {
    name: "tools",
    parent: '{"children":[],"name":"all"}',
    children: ['{"children":[],"name":"saws"}'],
  });
  assert.deepEqual(record.times, [1_000_002]);
  assert.equal(record.nothing, "{}");

  const bare = decodeOk(decoder, Order.encode(Order.fromObject({ id: 2 })).finish(), [0]).record;
  assert.equal(bare.customer, null, "an absent message is null");
  assert.deepEqual(bare.lines, [], "an absent repeated field is empty (proto3)");
  assert.deepEqual(bare.labels, new Map());
  assert.equal(bare.payment, null, "a oneof with no member set is null");
});

test("Protobuf: fields named in text are their proto3 JSON text, a oneof naming its member", () => {
  const decoder = protobufDecoder(shopProto);
  const Order = shopRoot().lookupType("shop.Order");
  const payload = Order.encode(
    Order.fromObject({ id: 1, customer: { name: "Ada" }, cash: { cents: 5 }, labels: { 1: "a" } }),
  ).finish();
  const { record, columns } = decodeOk(decoder, payload, [0], new Set(["customer", "payment", "labels", "id"]));
  assert.equal(record.customer, '{"name":"Ada"}');
  assert.equal(record.payment, '{"cash":{"cents":"5"}}');
  assert.equal(record.labels, '{"1":"a"}');
  assert.equal(record.id, '"1"');
  assert.equal(typesOf(columns).payment, "string");
  assert.equal(typesOf(columns).lines, "list<struct<sku: string, qty: int>>");
});

const struct = (...fields: [string, IcebergType][]): IcebergType => ({
  kind: "struct",
  fields: fields.map(([name, type]) => ({ id: 0, name, required: false, type })),
});
const list = (element: IcebergType): IcebergType => ({ kind: "list", elementId: 0, element, elementRequired: false });

test("evolution: a field added inside a nested record is added to the table's struct, with the struct as parent", () => {
  const v1 = new RegistrySchema();
  v1.observe(
    1,
    [{ name: "customer", type: struct(["name", "string"], ["address", struct(["city", "string"])]) }],
    place,
  );
  const created = v1.schema;
  const column = created.fields.find((f) => f.name === "customer")!;
  assert.equal(typeToString(column.type), "struct<name: string, address: struct<city: string>>");
  assert.deepEqual(
    [column.id, v1.lastColumnId],
    [9, 12],
    "the column, then its fields, then the nested struct's fields: every id unique",
  );
  const table = new RegistrySchema({ schema: created, lastColumnId: v1.lastColumnId });
  table.observe(
    2,
    [
      {
        name: "customer",
        type: struct(
          ["name", "string"],
          ["address", struct(["city", "string"], ["zip", "string"])],
          ["vip", "boolean"],
        ),
      },
    ],
    place,
  );
  assert.deepEqual(table.changes(), [
    {
      kind: "add-column",
      field: { id: 13, name: "zip", required: false, type: "string" },
      parent: ["customer", "address"],
    },
    { kind: "add-column", field: { id: 14, name: "vip", required: false, type: "boolean" }, parent: ["customer"] },
  ]);
  assert.equal(table.lastColumnId, 14);
  // The older version still fits: its struct lacks fields, which are null.
  table.observe(1, [{ name: "customer", type: struct(["name", "string"]) }], place);
  assert.equal(table.changes().length, 2);
  // And the commit's schema change gives the same schema.
  const change = new SchemaChange();
  for (const c of table.changes())
    if (c.kind === "add-column") change.addColumn(c.field.name, c.field.type, c.field.doc, c.parent);
  assert.equal(
    typeToString(change.applyTo(created, v1.lastColumnId)!.fields.find((f) => f.name === "customer")!.type),
    typeToString(table.schema.fields.find((f) => f.name === "customer")!.type),
  );
});

test("evolution: a struct field's int -> long widens it inside lists; a list's own elements, a shape change, a map key do not change", () => {
  const v1 = new RegistrySchema();
  v1.observe(
    1,
    [
      { name: "lines", type: list(struct(["qty", "int"])) },
      { name: "tags", type: list("int") },
      {
        name: "labels",
        type: { kind: "map", keyId: 0, key: "int", valueId: 0, value: "string", valueRequired: false },
      },
    ],
    place,
  );
  const table = new RegistrySchema({ schema: v1.schema, lastColumnId: v1.lastColumnId });
  table.observe(2, [{ name: "lines", type: list(struct(["qty", "long"])) }], place);
  assert.deepEqual(table.changes(), [{ kind: "widen", name: "qty", from: "int", to: "long", parent: ["lines"] }]);
  const change = new SchemaChange().widenColumn("qty", "long", ["lines"]);
  assert.equal(
    typeToString(change.applyTo(v1.schema, v1.lastColumnId)!.fields.find((f) => f.name === "lines")!.type),
    "list<struct<qty: long>>",
  );
  assert.throws(
    () => table.observe(3, [{ name: "tags", type: list("long") }], place),
    (e: unknown) => e instanceof SchemaEvolutionError && e.field === "tags.element",
  );
  assert.throws(
    () => table.observe(4, [{ name: "lines", type: list("string") }], place),
    (e: unknown) => e instanceof SchemaEvolutionError && e.field === "lines.element" && /struct<qty/.test(e.message),
  );
  assert.throws(
    () =>
      table.observe(
        5,
        [
          {
            name: "labels",
            type: { kind: "map", keyId: 0, key: "long", valueId: 0, value: "string", valueRequired: false },
          },
        ],
        place,
      ),
    (e: unknown) => e instanceof SchemaEvolutionError && e.field === "labels.key",
  );
  assert.throws(
    () => table.observe(6, [{ name: "lines", type: list(struct(["QTY", "int"])) }], place),
    /field "lines\.element\.QTY".*differs only in case/,
  );
});

test("text columns: declared json, and a nested field whose table column is a string (a table from before nested types)", () => {
  const old = new RegistrySchema();
  old.observe(1, [{ name: "address", type: "string" }], place);
  const table = new RegistrySchema(
    { schema: old.schema, lastColumnId: old.lastColumnId },
    new Map([["payload", "json"]]),
  );
  const columns = [
    { name: "address", type: struct(["city", "string"]) },
    { name: "payload", type: struct(["a", "long"]) },
    { name: "lines", type: list("int") },
  ];
  assert.deepEqual([...table.textColumns(2, columns)], ["address", "payload"]);
  assert.equal(
    table.textColumns(2, columns),
    table.textColumns(2, columns),
    "one set per schema: the decoders cache by it",
  );
});

test("Avro and Protobuf through a RegistrySchema: a decoded record's columns are what the table takes", () => {
  const decoder = avroDecoder(JSON.stringify(customer));
  const schema = new RegistrySchema();
  schema.observe(1, decoder.columns, place);
  const types = Object.fromEntries(schema.schema.fields.map((f) => [f.name, typeToString(f.type)]));
  assert.equal(types.attrs, "map<string, timestamptz>");
  // Every field, element, key and value has an id of its own, up to the last column id.
  const ids = allFieldIds(asStruct(schema.schema));
  assert.equal(new Set(ids).size, ids.length);
  assert.equal(Math.max(...ids), schema.lastColumnId);
});
