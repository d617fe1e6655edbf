// Column builders and the batch builder: Arrow types and field ids from the schema, typed
// appends, nulls, rows taken back, growth past the initial capacity.
import assert from "node:assert/strict";
import { test } from "node:test";
import type * as arrow from "apache-arrow";
import { FIELD_ID_KEY } from "#src/iceberg/parquet/arrow-schema.ts";
import { ColumnBatchBuilder } from "#src/iceberg/parquet/column-batch.ts";
import type { Schema } from "#src/iceberg/spec/schema.ts";
import { decimal } from "#src/iceberg/spec/types.ts";

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: "id", required: true, type: "long" },
    { id: 2, name: "name", required: false, type: "string" },
    { id: 3, name: "ts", required: false, type: "timestamptz" },
    { id: 4, name: "local", required: false, type: "timestamp" },
    { id: 5, name: "day", required: false, type: "date" },
    { id: 6, name: "amount", required: false, type: decimal(10, 2) },
    { id: 7, name: "u", required: false, type: "uuid" },
    {
      id: 8,
      name: "tags",
      required: false,
      type: { kind: "list", elementId: 9, element: "string", elementRequired: true },
    },
    {
      id: 10,
      name: "attrs",
      required: false,
      type: { kind: "map", keyId: 11, key: "string", valueId: 12, value: "long", valueRequired: false },
    },
    {
      id: 13,
      name: "loc",
      required: false,
      type: {
        kind: "struct",
        fields: [
          { id: 14, name: "lat", required: true, type: "double" },
          { id: 15, name: "ok", required: false, type: "boolean" },
        ],
      },
    },
  ],
};

function fieldIds(fields: readonly arrow.Field[]): string[] {
  return fields.flatMap((f) => [
    `${f.name}:${f.metadata.get(FIELD_ID_KEY) ?? "-"}`,
    ...fieldIds(f.type.children ?? []),
  ]);
}

test("the Arrow schema carries every field id, nested ones included, and Iceberg's types", () => {
  const table = new ColumnBatchBuilder(schema).build();
  assert.deepEqual(fieldIds(table.schema.fields), [
    "id:1",
    "name:2",
    "ts:3",
    "local:4",
    "day:5",
    "amount:6",
    "u:7",
    "tags:8",
    "element:9",
    "attrs:10",
    "key_value:-",
    "key:11",
    "value:12",
    "loc:13",
    "lat:14",
    "ok:15",
  ]);
  const types = Object.fromEntries(
    table.schema.fields.map((f) => [f.name, `${f.type} ${f.nullable ? "null" : "required"}`]),
  );
  assert.deepEqual(types, {
    id: "Int64 required",
    name: "Utf8 null",
    ts: "Timestamp<MICROSECOND, UTC> null",
    local: "Timestamp<MICROSECOND> null",
    day: "Date32<DAY> null",
    amount: "Decimal[10e+2] null",
    u: "FixedSizeBinary[16] null",
    tags: "List<Utf8> null",
    attrs: "Map<{key:Utf8, value:Int64}> null",
    loc: "Struct<{lat:Float64, ok:Bool}> null",
  });
  const amount = table.schema.fields[5]!.type as arrow.Decimal;
  assert.deepEqual([amount.precision, amount.scale, amount.bitWidth], [10, 2, 128]);
  const ts = table.schema.fields[2]!.type as arrow.Timestamp;
  assert.equal(ts.timezone, "UTC");
  const tags = table.schema.fields[7]!.type.children[0]!;
  assert.equal(tags.nullable, false, "a required list element is non-nullable");
});

test("typed appends and endRow: a column left out of a row is null", () => {
  const batch = new ColumnBatchBuilder(schema);
  const id = batch.column(1);
  const name = batch.column(2);
  const ts = batch.column(3);
  assert.ok(id.kind === "long" && name.kind === "bytes" && ts.kind === "long");
  id.appendNumber(-4294967297);
  name.append("héllo");
  ts.append(1_700_000_000_123_456n);
  batch.endRow();
  id.append(9007199254740993n);
  batch.endRow();
  const table = batch.build();
  assert.equal(table.numRows, 2);
  assert.deepEqual(table.getChild("id")!.toArray(), BigInt64Array.of(-4294967297n, 9007199254740993n));
  assert.deepEqual(table.getChild("name")!.toArray(), ["héllo", null]);
  const tsData = table.getChild("ts")!.data[0]!;
  assert.equal((tsData.values as BigInt64Array)[0], 1_700_000_000_123_456n);
  assert.equal(tsData.nullCount, 1);
  assert.equal(table.getChild("loc")!.nullCount, 2);
});

test("a required column left out, or two values in one row, fail the row", () => {
  const batch = new ColumnBatchBuilder(schema);
  assert.throws(() => batch.endRow(), /field id \(id 1\): required field is missing/);
  const id = batch.column(1);
  assert.ok(id.kind === "long");
  id.append(1n);
  id.append(2n);
  assert.throws(() => batch.endRow(), /2 values appended in one row/);
  batch.discardRow();
  assert.throws(() => id.appendNull(), /required field cannot be null/);
  assert.throws(() => id.appendNumber(1.5), /not a valid value/);
  assert.throws(() => id.append(2n ** 63n), /not a valid value/);
  assert.equal(batch.build().numRows, 0);
});

test("appendRow takes a record by field name and keeps nothing of a record that fails", () => {
  const batch = new ColumnBatchBuilder(schema);
  batch.appendRow({
    id: 1,
    name: "a",
    ts: 1_700_000_000_000_000,
    local: 5n,
    day: 19000,
    amount: -12345n,
    u: "0192d8f4-1c6e-7b8a-9c3d-1234567890ab",
    tags: ["x", "y"],
    attrs: { k: 7, n: null },
    loc: { lat: 1.5, ok: true },
  });
  // fails in the nested map value, after id, name, tags and the map key were appended
  assert.throws(
    () => batch.appendRow({ id: 2, name: "b", tags: ["z"], attrs: { k: "not a long" } }),
    /not a valid value/,
  );
  assert.throws(() => batch.appendRow({ id: 3, tags: [null] }), /required field cannot be null/);
  assert.throws(() => batch.appendRow({ id: 4, u: "not-a-uuid" }), /not a valid value/);
  assert.throws(() => batch.appendRow({ id: 5, amount: 10n ** 10n }), /not a valid value/);
  batch.appendRow({ id: 6, attrs: new Map([["m", 8n]]), loc: null, tags: [] });
  const rows = batch
    .build()
    .toArray()
    .map((row) => row.toJSON());
  assert.equal(rows.length, 2);
  assert.equal(rows[0]!.id, 1n);
  assert.equal(rows[0]!.day, 19000 * 86400000);
  assert.deepEqual(
    [...(rows[0]!.u as Uint8Array)],
    [1, 146, 216, 244, 28, 110, 123, 138, 156, 61, 18, 52, 86, 120, 144, 171],
  );
  assert.deepEqual([...(rows[0]!.tags as arrow.Vector)], ["x", "y"]);
  assert.deepEqual(Object.fromEntries(rows[0]!.attrs as Iterable<[string, unknown]>), { k: 7n, n: null });
  assert.equal(rows[1]!.id, 6n);
  assert.equal(rows[1]!.name, null);
  assert.deepEqual([...(rows[1]!.tags as arrow.Vector)], []);
  assert.deepEqual(Object.fromEntries(rows[1]!.attrs as Iterable<[string, unknown]>), { m: 8n });
  assert.equal(rows[1]!.loc, null);
});

test("a null struct gives its required children a zero slot and its optional children a null", () => {
  const batch = new ColumnBatchBuilder(schema);
  batch.appendRow({ id: 1, loc: null });
  batch.appendRow({ id: 2, loc: { lat: -0 } });
  const loc = batch.build().getChild("loc")!.data[0]!;
  const [lat, ok] = loc.children;
  assert.equal(loc.nullCount, 1);
  assert.equal(lat!.nullCount, 0);
  assert.equal(lat!.length, 2);
  assert.ok(Object.is((lat!.values as Float64Array)[1], -0));
  assert.equal(ok!.nullCount, 2);
});

test("columns grow past their first capacity with values, nulls and offsets intact", () => {
  const batch = new ColumnBatchBuilder(schema);
  const n = 5000;
  for (let i = 0; i < n; i++) {
    batch.appendRow({
      id: i,
      name: i % 3 === 0 ? null : `név-${i}`,
      day: i % 5 === 0 ? null : i,
      u: i % 2 ? null : `00000000-0000-0000-0000-${i.toString(16).padStart(12, "0")}`,
      tags: i % 7 === 0 ? null : [String(i)],
    });
  }
  const table = batch.build();
  assert.equal(table.numRows, n);
  for (const i of [0, 1, 1023, 1024, 1025, 4095, 4999]) {
    const row = table.get(i)!.toJSON();
    assert.equal(row.id, BigInt(i));
    assert.equal(row.name, i % 3 === 0 ? null : `név-${i}`);
    assert.equal(row.day, i % 5 === 0 ? null : i * 86400000);
    assert.equal(row.u === null, i % 2 === 1);
    if (i % 2 === 0) assert.equal((row.u as Uint8Array)[15], i & 0xff);
    assert.deepEqual(row.tags === null ? null : [...(row.tags as arrow.Vector)], i % 7 === 0 ? null : [String(i)]);
  }
  assert.equal(table.getChild("name")!.nullCount, Math.ceil(n / 3));
});

test("a batch builds once; columns are found by top-level field id", () => {
  const batch = new ColumnBatchBuilder(schema);
  assert.throws(() => batch.column(14), /no top-level field with id 14/);
  batch.build();
  assert.throws(() => batch.build(), /already built/);
});
