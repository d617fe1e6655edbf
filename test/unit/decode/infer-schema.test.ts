// Schema inference from JSON records and its evolution against an existing table; which values
// fit which columns, and the mismatches that make a message a bad one.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { DeclarableType } from "#src/decode/declared-columns.ts";
import {
  type ColumnChange,
  DeclaredColumnError,
  fitsType,
  SchemaInference,
  valueTypeOf,
} from "#src/decode/infer-schema.ts";
import { type DecodedRecord, decodeJsonMessage } from "#src/decode/json-message.ts";
import type { SchemaMismatch } from "#src/decode/schema-mismatch.ts";
import { SYSTEM_COLUMNS } from "#src/decode/system-columns.ts";
import type { Schema } from "#src/iceberg/spec/schema.ts";
import { fixed, type IcebergType } from "#src/iceberg/spec/types.ts";

function json(text: string): DecodedRecord {
  const decoded = decodeJsonMessage(new TextEncoder().encode(text));
  assert.equal(decoded.kind, "record");
  return decoded as DecodedRecord;
}

function userColumns(inference: SchemaInference) {
  return inference.schema.fields.filter((f) => !f.name.startsWith("_")).map((f) => [f.id, f.name, f.type]);
}

/** Observes a record that must fit. */
function fit(inference: SchemaInference, text: string): void {
  const mismatch = inference.observe(json(text));
  assert.equal(mismatch, undefined, mismatch?.detail);
}

/** Observes a record that must be refused, and checks that the refusal changed nothing. */
function refused(inference: SchemaInference, text: string): SchemaMismatch {
  const before = JSON.stringify(inference.schema);
  const mismatch = inference.observe(json(text));
  assert.ok(mismatch, `${text} fits`);
  assert.equal(JSON.stringify(inference.schema), before, "a refused record changes no column");
  return mismatch;
}

const ORDER =
  '{"id":1,"customer_id":2,"product":"Headphones","amount":99.19,"status":"shipped",' +
  '"created_at":"2026-10-29T15:22:04+00:00","updated_at":"2026-10-29T15:22:04+00:00"}';

test("a new table: system columns first (ids 1-8), then the fields in order of first sighting", () => {
  const inference = new SchemaInference();
  fit(inference, ORDER);
  const schema = inference.schema;
  assert.equal(schema.schemaId, 0);
  assert.deepEqual(schema.fields.slice(0, 8), SYSTEM_COLUMNS);
  assert.deepEqual(userColumns(inference), [
    [9, "id", "long"],
    [10, "customer_id", "long"],
    [11, "product", "string"],
    [12, "amount", "double"],
    [13, "status", "string"],
    [14, "created_at", "timestamptz"],
    [15, "updated_at", "timestamptz"],
  ]);
  assert.ok(schema.fields.every((f) => !f.required));
  assert.equal(inference.lastColumnId, 15);
});

test("each JSON type's column type; objects are structs, arrays lists; null gives no column until a value", () => {
  const inference = new SchemaInference();
  fit(inference, '{"b":true,"o":{"x":1},"a":[1,2],"n":null,"d":1e-3,"w":5.0}');
  assert.deepEqual(userColumns(inference), [
    [9, "b", "boolean"],
    [10, "o", { kind: "struct", fields: [{ id: 11, name: "x", required: false, type: "long" }] }],
    [12, "a", { kind: "list", elementId: 13, element: "long", elementRequired: false }],
    [14, "d", "double"],
    [15, "w", "double"],
  ]);
  fit(inference, '{"n":"now a string"}');
  assert.deepEqual(userColumns(inference).at(-1), [16, "n", "string"]);
});

test("within the batch that creates a column, long then double is double, timestamp then other string is string", () => {
  const inference = new SchemaInference();
  fit(inference, '{"amount":1,"at":"2026-10-29T15:22:04Z"}');
  fit(inference, '{"amount":2.5,"at":"yesterday"}');
  fit(inference, '{"amount":3,"at":"2026-10-29T15:22:04Z"}');
  assert.deepEqual(userColumns(inference), [
    [9, "amount", "double"],
    [10, "at", "string"],
  ]);
});

test("a whole number written 1299.0 makes a new column double, and fits a settled long column", () => {
  const inference = new SchemaInference();
  fit(inference, '{"amount":1299,"id":1}');
  fit(inference, '{"amount":1299.0,"id":2}');
  assert.deepEqual(userColumns(inference), [
    [9, "amount", "double"],
    [10, "id", "long"],
  ]);
  inference.settle();
  fit(inference, '{"id":3.0}');
  assert.deepEqual(userColumns(inference)[1], [10, "id", "long"]);
  // Beyond 2^53 a decimal is no exact integer.
  assert.equal(refused(inference, '{"id":1e17}').reason, "type-mismatch");
});

test("once settled, a decimal for a long column is a mismatch naming the field, the column type and the value type", () => {
  const inference = new SchemaInference();
  fit(inference, '{"amount":5}');
  inference.settle();
  const mismatch = refused(inference, '{"amount":5.5}');
  assert.equal(mismatch.reason, "type-mismatch");
  assert.equal(mismatch.field, "amount");
  assert.equal(mismatch.detail, 'field "amount": column type long, value type double');
});

test("a timestamptz column refuses a date and any string that is no timestamp", () => {
  const inference = new SchemaInference(table([{ id: 9, name: "at", required: false, type: "timestamptz" }], 9));
  fit(inference, '{"at":"2026-10-29T15:22:04+02:00"}');
  const mismatch = refused(inference, '{"at":"2026-10-29"}');
  assert.equal(mismatch.reason, "type-mismatch");
  assert.match(mismatch.detail, /^field "at": column type timestamptz, value type string \(a timestamp needs/);
  assert.match(refused(inference, '{"at":{"when":"now"}}').detail, /value type object$/);
});

test("incompatible types within a batch are a mismatch too: the first value's type holds", () => {
  const inference = new SchemaInference();
  fit(inference, '{"id":1}');
  const id = refused(inference, '{"id":"1"}');
  assert.equal(id.reason, "type-mismatch");
  assert.match(id.detail, /^field "id": column type long, value type string \(the column is new in this commit/);
  fit(inference, '{"flag":true}');
  assert.equal(refused(inference, '{"flag":1}').reason, "type-mismatch");
  // A string column takes any value, as its JSON text.
  fit(inference, '{"code":"A1"}');
  fit(inference, '{"code":7}');
  fit(inference, '{"code":{"x":[1]}}');
  fit(inference, '{"code":false}');
  assert.deepEqual(userColumns(inference).at(-1), [11, "code", "string"]);
});

test("a refused record adds no column and widens none, whatever its field order", () => {
  const inference = new SchemaInference();
  fit(inference, '{"id":1,"amount":2}');
  const mismatch = refused(inference, '{"fresh":"x","amount":2.5,"id":"one"}');
  assert.equal(mismatch.field, "id");
  assert.deepEqual(userColumns(inference), [
    [9, "id", "long"],
    [10, "amount", "long"],
  ]);
  // Two new fields equal but for case, in one record.
  assert.equal(refused(inference, '{"Note":"a","note":"b"}').reason, "case-collision");
  fit(inference, '{"fresh":"x","amount":2.5}');
  assert.deepEqual(userColumns(inference).slice(1), [
    [10, "amount", "double"],
    [11, "fresh", "string"],
  ]);
});

const table = (fields: Schema["fields"], lastColumnId: number) => ({
  schema: { schemaId: 3, fields: [...SYSTEM_COLUMNS, ...fields] },
  lastColumnId,
});

test("an existing table: int widens to long, float to double; new columns get ids after last-column-id", () => {
  const inference = new SchemaInference(
    table(
      [
        { id: 9, name: "qty", required: false, type: "int" },
        { id: 10, name: "price", required: false, type: "float" },
      ],
      12,
    ),
  );
  fit(inference, '{"qty":7,"price":1.5}');
  assert.deepEqual(inference.changes(), []);
  assert.equal(inference.schema.schemaId, 3);
  fit(inference, '{"qty":3000000000,"price":0.1,"note":"x"}');
  assert.deepEqual(inference.changes(), [
    { kind: "add-column", field: { id: 13, name: "note", required: false, type: "string" } },
    { kind: "widen", name: "qty", from: "int", to: "long" },
    { kind: "widen", name: "price", from: "float", to: "double" },
  ] satisfies ColumnChange[]);
  assert.equal(inference.schema.schemaId, 4);
  assert.deepEqual(userColumns(inference), [
    [9, "qty", "long"],
    [10, "price", "double"],
    [13, "note", "string"],
  ]);
});

test("a table created by someone else gains the system columns it lacks; its required columns need values", () => {
  const inference = new SchemaInference({
    schema: { schemaId: 0, fields: [{ id: 1, name: "id", required: true, type: "long" }] },
    lastColumnId: 1,
  });
  const added = inference.changes().map((c) => (c.kind === "add-column" ? [c.field.id, c.field.name] : []));
  assert.deepEqual(
    added,
    SYSTEM_COLUMNS.map((f, i) => [i + 2, f.name]),
  );
  assert.equal(refused(inference, '{"id":null}').reason, "null-in-required");
  assert.equal(refused(inference, '{"other":1}').reason, "null-in-required");
});

test("a column of a type floe does not write refuses every value", () => {
  const inference = new SchemaInference(table([{ id: 9, name: "day", required: false, type: "date" }], 9));
  assert.equal(refused(inference, '{"day":"2026-10-29"}').detail, 'field "day": column type date, value type string');
  fit(inference, '{"day":null}');
});

test("a field named like a system column, or like a column but for case, is refused", () => {
  const inference = new SchemaInference();
  assert.equal(refused(inference, '{"_kafka_key":"k"}').reason, "reserved-name");
  fit(inference, '{"id":1}');
  assert.equal(refused(inference, '{"ID":1}').reason, "case-collision");
});

test("integers beyond the long range are refused, except by a double or a string column", () => {
  const inference = new SchemaInference();
  const huge = '{"id":18446744073709551615}';
  const first = refused(inference, huge);
  assert.equal(first.reason, "out-of-range");
  assert.match(first.detail, /^field "id": column type \(new column\), value type integer beyond the long range/);
  fit(inference, '{"id":9223372036854775807}');
  assert.match(refused(inference, huge).detail, /^field "id": column type long, value type integer beyond/);
  fit(inference, '{"x":0.5,"s":"text"}');
  fit(inference, '{"x":18446744073709551615,"s":18446744073709551615}');
  // Beyond a double's range an integer is refused by a double column too; a string column keeps it.
  const enormous = `1${"0".repeat(400)}`;
  assert.match(
    refused(inference, `{"x":${enormous}}`).detail,
    /^field "x": column type double, value type integer beyond the long range \(401 digits; a double holds/,
  );
  fit(inference, `{"s":${enormous}}`);
  assert.deepEqual(userColumns(inference), [
    [9, "id", "long"],
    [10, "x", "double"],
    [11, "s", "string"],
  ]);
});

test("a system column of the wrong type in the table is refused up front", () => {
  const fields = SYSTEM_COLUMNS.map((f) => (f.name === "_kafka_offset" ? { ...f, type: "string" as const } : f));
  assert.throws(() => new SchemaInference({ schema: { schemaId: 0, fields }, lastColumnId: 8 }), /_kafka_offset/);
});

test("_floe_id keeps the form the table was created with: fixed[16], binary or hex string; nothing else", () => {
  const withFloeId = (type: IcebergType) => ({
    schema: { schemaId: 0, fields: SYSTEM_COLUMNS.map((f) => (f.name === "_floe_id" ? { ...f, type } : f)) },
    lastColumnId: 8,
  });
  for (const type of [fixed(16), "binary", "string"] as const) {
    const schema = new SchemaInference(withFloeId(type)).schema;
    assert.deepEqual(schema.fields.find((f) => f.name === "_floe_id")?.type, type);
  }
  for (const type of [fixed(32), "long", "uuid"] as const) {
    assert.throws(() => new SchemaInference(withFloeId(type)), /_floe_id is .*fixed\[16\]/);
  }
});

const declared = (entries: [string, DeclarableType][]) => new Map(entries);

test("declared columns come first in a new table, in the order declared, and keep their type", () => {
  const inference = new SchemaInference(
    undefined,
    declared([
      ["amount", "double"],
      ["id", "string"],
    ]),
  );
  assert.deepEqual(userColumns(inference), [
    [9, "amount", "double"],
    [10, "id", "string"],
  ]);
  fit(inference, '{"id":1,"amount":100,"note":"x"}');
  fit(inference, '{"id":"1","amount":99.19}');
  fit(inference, '{"id":18446744073709551615,"amount":1e3}');
  assert.equal(
    refused(inference, '{"amount":"99.19"}').detail,
    'field "amount": column type double, value type string',
  );
  assert.deepEqual(userColumns(inference), [
    [9, "amount", "double"],
    [10, "id", "string"],
    [11, "note", "string"],
  ]);
});

test("a declared long column never becomes double, not even in the batch that creates it", () => {
  const inference = new SchemaInference(undefined, declared([["n", "long"]]));
  fit(inference, '{"n":1}');
  fit(inference, '{"n":2.0}');
  assert.equal(refused(inference, '{"n":2.5}').reason, "type-mismatch");
  assert.deepEqual(userColumns(inference), [[9, "n", "long"]]);
});

test("declared columns on an existing table: added when missing, widened when Iceberg can, an error when not", () => {
  const existing = table(
    [
      { id: 9, name: "qty", required: false, type: "int" },
      { id: 10, name: "amount", required: false, type: "long" },
    ],
    10,
  );
  const inference = new SchemaInference(
    existing,
    declared([
      ["qty", "long"],
      ["note", "string"],
    ]),
  );
  assert.deepEqual(inference.changes(), [
    { kind: "add-column", field: { id: 11, name: "note", required: false, type: "string" } },
    { kind: "widen", name: "qty", from: "int", to: "long" },
  ] satisfies ColumnChange[]);
  assert.throws(
    () => new SchemaInference(existing, declared([["amount", "double"]])),
    (error: Error) =>
      error instanceof DeclaredColumnError &&
      /"amount".*has it as long.*cannot change long to double/.test(error.message),
  );
  assert.throws(() => new SchemaInference(existing, declared([["AMOUNT", "long"]])), /differs only in case/);
});

test("value types and what each column type takes", () => {
  const cases: [string, string, string[]][] = [
    ["1", "long", ["long", "double", "string", "int", "float"]],
    ["1.5", "double", ["double", "string", "float"]],
    ["5.0", "double", ["long", "double", "string", "int", "float"]],
    ["0.1", "double", ["double", "string"]],
    ["9223372036854775807", "long", ["long", "double", "string"]],
    ["9223372036854775808", "huge", ["double", "string"]],
    ['"2026-10-29T15:22:04Z"', "timestamptz", ["timestamptz", "string"]],
    ['"2026-10-29"', "string", ["string"]],
    ["true", "boolean", ["boolean", "string"]],
    ["[1]", "array", ["string"]],
    ['{"a":1}', "object", ["string"]],
  ];
  const types = ["boolean", "int", "long", "float", "double", "string", "timestamptz", "date"] as const;
  for (const [text, kind, takes] of cases) {
    const decoded = json(`{"v":${text}}`);
    const value = decoded.record.v!;
    assert.equal(valueTypeOf(value, decoded.wholeDecimals?.has("v") === true), kind, text);
    assert.deepEqual(
      types.filter((t) => fitsType(t, value)),
      types.filter((t) => takes.includes(t)),
      text,
    );
  }
});
