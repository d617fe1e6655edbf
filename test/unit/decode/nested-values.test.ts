// JSON objects and arrays as Iceberg structs and lists: inference, field ids, evolution inside
// a struct, the values that are refused, and the Parquet file the rows make.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { columnConverter } from "#src/decode/column-value.ts";
import { SchemaInference, type TableSchema } from "#src/decode/infer-schema.ts";
import { type DecodedRecord, decodeJsonMessage } from "#src/decode/json-message.ts";
import { SYSTEM_COLUMNS } from "#src/decode/system-columns.ts";
import { SchemaChange } from "#src/iceberg/commit/update-schema.ts";
import { ColumnBatchBuilder } from "#src/iceberg/parquet/column-batch.ts";
import { writeDataFiles } from "#src/iceberg/parquet/data-file-writer.ts";
import { allFieldIds, asStruct, type Schema } from "#src/iceberg/spec/schema.ts";
import { type StructType, typeToString } from "#src/iceberg/spec/types.ts";

function json(text: string): DecodedRecord {
  const decoded = decodeJsonMessage(new TextEncoder().encode(text));
  assert.equal(decoded.kind, "record");
  return decoded as DecodedRecord;
}

function fit(inference: SchemaInference, text: string): void {
  const mismatch = inference.observe(json(text));
  assert.equal(mismatch, undefined, mismatch?.detail);
}

const user = (schema: Schema) => schema.fields.filter((f) => !f.name.startsWith("_"));

const ORDER =
  '{"id":1,"customer":{"name":"Ada","address":{"city":"Paris","zip":"75001"}},' +
  '"items":[{"sku":"A1","qty":2},{"sku":"B2","price":9.5}],"tags":["new","gift"]}';

test("objects become structs and arrays lists, every field and element with its own id, depth first", () => {
  const inference = new SchemaInference();
  fit(inference, ORDER);
  const fields = user(inference.schema);
  assert.deepEqual(
    fields.map((f) => [f.id, f.name, typeToString(f.type)]),
    [
      [9, "id", "long"],
      [10, "customer", "struct<name: string, address: struct<city: string, zip: string>>"],
      [15, "items", "list<struct<sku: string, qty: long, price: double>>"],
      [20, "tags", "list<string>"],
    ],
  );
  // The ids are the ones a catalog assigns to the new columns (Java's TypeUtil order), unique.
  const customer = fields[1]!.type as StructType;
  assert.deepEqual(
    customer.fields.map((f) => [f.id, f.name]),
    [
      [11, "name"],
      [12, "address"],
    ],
  );
  const ids = [...allFieldIds(asStruct(inference.schema))].sort((a, b) => a - b);
  assert.deepEqual(
    ids,
    Array.from({ length: 21 }, (_, i) => i + 1),
  );
  assert.equal(inference.lastColumnId, 21);
});

function tableOf(text: string): TableSchema {
  const inference = new SchemaInference();
  fit(inference, text);
  return { schema: inference.schema, lastColumnId: inference.lastColumnId };
}

test("a field new inside a table's struct is an add-column with the struct as parent, ids after last-column-id", () => {
  const table = tableOf(ORDER);
  const inference = new SchemaInference(table);
  fit(inference, ORDER);
  assert.deepEqual(inference.changes(), []);
  fit(inference, '{"customer":{"address":{"city":"Lyon","country":"FR"}},"items":[{"sku":"C3","gift":true}]}');
  const changes = inference.changes();
  assert.deepEqual(
    changes.map((c) => (c.kind === "add-column" ? [c.parent, c.field.id, c.field.name, c.field.type] : c)),
    [
      [["customer", "address"], 22, "country", "string"],
      [["items"], 23, "gift", "boolean"],
    ],
  );
  // The commit, applying those changes to the table's schema, gives the same schema.
  const change = new SchemaChange();
  for (const c of changes)
    if (c.kind === "add-column") change.addColumn(c.field.name, c.field.type, undefined, c.parent);
  const applied = change.applyTo(table.schema, table.lastColumnId)!;
  assert.deepEqual(applied.fields, inference.schema.fields);
  // A retry of the same changes over the evolved schema changes nothing.
  assert.equal(change.applyTo(applied, 23), undefined);
});

test("an object where a scalar was, or a scalar where an object was, refuses the record and changes nothing", () => {
  const inference = new SchemaInference(tableOf(ORDER));
  const before = JSON.stringify(inference.schema);
  const inner = inference.observe(json('{"customer":{"address":"Paris"}}'));
  assert.equal(inner?.reason, "type-mismatch");
  assert.equal(inner?.field, "customer.address");
  const outer = inference.observe(json('{"customer":"Ada"}'));
  assert.equal(outer?.field, "customer");
  assert.match(outer!.detail, /value type string/);
  const element = inference.observe(json('{"items":[5]}'));
  assert.equal(element?.field, "items");
  // A string field takes any value, as a top-level string column does: an object as its JSON text.
  assert.equal(inference.observe(json('{"tags":[{"a":1}]}')), undefined);
  assert.equal(JSON.stringify(inference.schema), before);
  // Within one new column too: the first value's shape holds.
  const fresh = new SchemaInference();
  fit(fresh, '{"p":{"x":1}}');
  assert.equal(fresh.observe(json('{"p":{"x":{"y":1}}}'))?.field, "p.x");
  assert.equal(fresh.observe(json('{"q":[1,"a"]}'))?.field, "q");
});

test("an empty object or array, or one of nulls only, gets no column until a value shows its type", () => {
  const inference = new SchemaInference();
  fit(inference, '{"id":1,"e":[],"n":[null],"o":{},"p":{"z":null}}');
  assert.deepEqual(
    user(inference.schema).map((f) => f.name),
    ["id"],
  );
  fit(inference, '{"e":[3],"o":{"k":"v"}}');
  assert.deepEqual(
    user(inference.schema).map((f) => [f.name, typeToString(f.type)]),
    [
      ["id", "long"],
      ["e", "list<long>"],
      ["o", "struct<k: string>"],
    ],
  );
  // Once the list has its type, an empty one fits.
  fit(inference, '{"e":[],"o":{}}');
  // Within the batch that creates it, a list's elements generalize as a column's values do.
  fit(inference, '{"e":[1.5]}');
  assert.equal(typeToString(inference.columnType("e")!), "list<double>");
});

test("a table's string column, and a column declared json, keep taking objects and arrays as JSON text", () => {
  const table: TableSchema = {
    schema: { schemaId: 1, fields: [...SYSTEM_COLUMNS, { id: 9, name: "payload", required: false, type: "string" }] },
    lastColumnId: 9,
  };
  const inference = new SchemaInference(table, new Map([["raw", "json"]]));
  fit(inference, '{"payload":{"a":[1,2]},"raw":[{"b":1}]}');
  fit(inference, '{"payload":"plain","raw":7}');
  assert.deepEqual(
    user(inference.schema).map((f) => [f.id, f.name, f.type]),
    [
      [9, "payload", "string"],
      [10, "raw", "string"],
    ],
  );
  assert.equal(columnConverter("string")({ a: [1, 2] }), '{"a":[1,2]}');
});

test("the rows write a Parquet file whose every node has its field id, read back as structs and lists", async () => {
  const inference = new SchemaInference();
  const texts = [ORDER, '{"id":2,"customer":{"name":"Bo","since":"2026-01-02T03:04:05Z"},"tags":[]}', '{"id":3}'];
  for (const text of texts) fit(inference, text);
  inference.settle();
  const schema = inference.schema;
  const batch = new ColumnBatchBuilder({ ...schema, fields: user(schema) });
  const converters = user(schema).map((f) => [f.name, columnConverter(f.type)] as const);
  for (const text of texts) {
    const record = json(text).record;
    const row: Record<string, unknown> = {};
    for (const [name, convert] of converters) row[name] = record[name] == null ? null : convert(record[name]!);
    batch.appendRow(row);
  }
  const [file] = writeDataFiles(batch.build(), { ...schema, fields: user(schema) });
  const meta = parquetMetadata(file!.bytes.buffer.slice(0) as ArrayBuffer);
  const [, ...nodes] = meta.schema;
  // Only the repeated groups of the 3-level list layout have no id.
  assert.deepEqual(
    nodes.filter((e) => e.field_id === undefined).map((e) => e.name),
    ["list", "list"],
  );
  const ids = nodes.flatMap((e) => (e.field_id === undefined ? [] : [e.field_id])).sort((a, b) => a - b);
  assert.deepEqual(
    ids,
    [...allFieldIds(asStruct({ ...schema, fields: user(schema) }))].sort((a, b) => a - b),
  );
  const read = await parquetReadObjects({ file: file!.bytes.buffer.slice(0) as ArrayBuffer, compressors });
  assert.deepEqual(read[0]!.customer.address, { city: "Paris", zip: "75001" });
  assert.deepEqual(
    read[0]!.items.map((i: { sku: string }) => i.sku),
    ["A1", "B2"],
  );
  assert.deepEqual(read[1]!.tags, []);
  assert.equal(read[2]!.customer, undefined);
  // Struct leaves get counts and bounds; list contents get none (repeated values).
  const city = 13;
  const sku = 16;
  assert.equal(file!.stats.valueCounts?.get(city), 3n);
  assert.equal(file!.stats.nullValueCounts?.get(city), 2n);
  assert.equal(new TextDecoder().decode(file!.stats.lowerBounds?.get(city)), "Paris");
  assert.equal(file!.stats.valueCounts?.get(sku), undefined);
  assert.equal(file!.stats.lowerBounds?.get(sku), undefined);
});

test("struct fields named like Object.prototype's members are fields like any other", () => {
  const inference = new SchemaInference();
  fit(inference, '{"o":{"__proto__":{"x":1},"constructor":"c","toString":2}}');
  const type = inference.columnType("o")!;
  assert.equal(typeToString(type), "struct<__proto__: struct<x: long>, constructor: string, toString: long>");
  const value = columnConverter(type)(json('{"o":{"__proto__":{"x":1},"toString":2}}').record.o!) as Record<
    string,
    unknown
  >;
  assert.deepEqual(Object.entries(value), [
    ["__proto__", Object.assign(Object.create(null), { x: 1 })],
    ["constructor", null],
    ["toString", 2],
  ]);
});

test("a column declared map is map<string, V>: keys are entries, values merge as a list's elements do", () => {
  const inference = new SchemaInference(undefined, new Map([["attrs", "map"]]));
  assert.equal(
    inference.schema.fields.some((f) => f.name === "attrs"),
    false,
    "no column before a value shows its type",
  );
  fit(inference, '{"id":1,"attrs":{"u1":{"n":1},"u2":null}}');
  fit(inference, '{"id":2,"attrs":{"u3":{"n":2,"tag":"x"}}}');
  inference.settle();
  const attrs = inference.schema.fields.find((f) => f.name === "attrs")!;
  assert.equal(typeToString(attrs.type), "map<string, struct<n: long, tag: string>>");
  assert.ok(typeof attrs.type === "object" && attrs.type.kind === "map");
  assert.deepEqual(
    [attrs.id, attrs.type.keyId, attrs.type.valueId],
    [attrs.id, attrs.id + 1, attrs.id + 2],
    "the key and value ids follow the column's",
  );
  const scalar = inference.observe(json('{"attrs":5}'));
  assert.equal(scalar?.field, "attrs");
  const nested = inference.observe(json('{"attrs":{"u9":{"n":"text"}}}'));
  assert.equal(nested?.reason, "type-mismatch");

  // A table's map column takes objects; a struct field new in its values is added through the map.
  const table: TableSchema = { schema: inference.schema, lastColumnId: inference.lastColumnId };
  const next = new SchemaInference(table, new Map([["attrs", "map"]]));
  fit(next, '{"attrs":{"u4":{"n":3,"since":"2026-01-02T03:04:05Z"}}}');
  const changes = next.changes();
  assert.deepEqual(
    changes.map((c) => (c.kind === "add-column" ? [c.parent, c.field.name, typeToString(c.field.type)] : c)),
    [[["attrs"], "since", "timestamptz"]],
  );
  const change = new SchemaChange();
  for (const c of changes)
    if (c.kind === "add-column") change.addColumn(c.field.name, c.field.type, c.field.doc, c.parent);
  assert.equal(
    typeToString(change.applyTo(table.schema, table.lastColumnId)!.fields.find((f) => f.name === "attrs")!.type),
    "map<string, struct<n: long, tag: string, since: timestamptz>>",
  );

  // Converted as a Map of its members: a key named __proto__ is a key.
  const convert = columnConverter(attrs.type);
  assert.deepEqual(
    convert(json('{"m":{"__proto__":{"n":1},"b":null}}').record.m!),
    new Map<string, unknown>([
      ["__proto__", Object.assign(Object.create(null), { n: 1, tag: null })],
      ["b", null],
    ]),
  );
});

test("a map declared for a column the table has as another type is refused when the job starts", () => {
  const inference = new SchemaInference();
  fit(inference, '{"attrs":{"a":1}}');
  assert.throws(
    () =>
      new SchemaInference(
        { schema: inference.schema, lastColumnId: inference.lastColumnId },
        new Map([["attrs", "map"]]),
      ),
    /declared under columns: the table has it as struct<a: long>/,
  );
});

test("a map column's rows write a Parquet file that reads back as key/value entries", async () => {
  const inference = new SchemaInference(undefined, new Map([["attrs", "map"]]));
  const texts = ['{"attrs":{"a":1,"b":2}}', '{"attrs":{}}', '{"id":3}'];
  for (const text of texts) fit(inference, text);
  inference.settle();
  const fields = user(inference.schema);
  const batch = new ColumnBatchBuilder({ ...inference.schema, fields });
  const convert = columnConverter(fields.find((f) => f.name === "attrs")!.type);
  for (const text of texts) {
    const value = json(text).record.attrs;
    batch.appendRow({ attrs: value == null ? null : convert(value) });
  }
  const [file] = writeDataFiles(batch.build(), { ...inference.schema, fields });
  const read = await parquetReadObjects({ file: file!.bytes.buffer.slice(0) as ArrayBuffer, compressors });
  assert.deepEqual(read[0]!.attrs, { a: 1n, b: 2n });
  assert.deepEqual(read[1]!.attrs, {});
});
