// Schema inference from JSON records and its evolution against an existing table.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type ColumnChange, SchemaInference } from "../../../src/decode/infer-schema.ts";
import { type DecodedRecord, decodeJsonMessage } from "../../../src/decode/json-message.ts";
import { SchemaConflictError } from "../../../src/decode/schema-conflict.ts";
import { SYSTEM_COLUMNS } from "../../../src/decode/system-columns.ts";
import type { Schema } from "../../../src/iceberg/spec/schema.ts";

const at = { topic: "orders", partition: 2, offset: 41n };

function json(text: string): DecodedRecord {
  const decoded = decodeJsonMessage(new TextEncoder().encode(text));
  assert.equal(decoded.kind, "record");
  return decoded as DecodedRecord;
}

function userColumns(inference: SchemaInference) {
  return inference.schema.fields.filter((f) => !f.name.startsWith("_")).map((f) => [f.id, f.name, f.type]);
}

function conflict(fn: () => void): SchemaConflictError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SchemaConflictError, String(error));
    return error;
  }
  assert.fail("expected a SchemaConflictError");
}

const ORDER =
  '{"id":1,"customer_id":2,"product":"Headphones","amount":99.19,"status":"shipped",' +
  '"created_at":"2026-10-29T15:22:04+00:00","updated_at":"2026-10-29T15:22:04+00:00"}';

test("a new table: system columns first (ids 1-8), then the fields in order of first sighting", () => {
  const inference = new SchemaInference();
  inference.observe(json(ORDER), at);
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

test("each JSON type's column type; nested values are JSON strings; null gives no column until a value", () => {
  const inference = new SchemaInference();
  inference.observe(json('{"b":true,"o":{"x":1},"a":[1,2],"n":null,"d":1e-3,"w":5.0}'), at);
  assert.deepEqual(userColumns(inference), [
    [9, "b", "boolean"],
    [10, "o", "string"],
    [11, "a", "string"],
    [12, "d", "double"],
    [13, "w", "double"],
  ]);
  inference.observe(json('{"n":"now a string"}'), at);
  assert.deepEqual(userColumns(inference).at(-1), [14, "n", "string"]);
});

test("within a sample, long then double is double, timestamp then other string is string", () => {
  const inference = new SchemaInference();
  inference.observe(json('{"amount":1,"at":"2026-10-29T15:22:04Z"}'), at);
  inference.observe(json('{"amount":2.5,"at":"yesterday"}'), at);
  inference.observe(json('{"amount":3,"at":"2026-10-29T15:22:04Z"}'), at);
  assert.deepEqual(userColumns(inference), [
    [9, "amount", "double"],
    [10, "at", "string"],
  ]);
});

test("a whole number written 1299.0 makes a new column double, and fits a settled long column", () => {
  const inference = new SchemaInference();
  inference.observe(json('{"amount":1299,"id":1}'), at);
  inference.observe(json('{"amount":1299.0,"id":2}'), at);
  assert.deepEqual(userColumns(inference), [
    [9, "amount", "double"],
    [10, "id", "long"],
  ]);
  inference.settle();
  inference.observe(json('{"id":3.0}'), at);
  assert.deepEqual(userColumns(inference)[1], [10, "id", "long"]);
});

test("once settled, a type change is an error naming topic, partition, offset and field", () => {
  const inference = new SchemaInference();
  inference.observe(json('{"amount":5}'), at);
  inference.settle();
  const error = conflict(() => inference.observe(json('{"amount":5.5}'), at));
  assert.equal(error.reason, "type-change");
  assert.equal(error.field, "amount");
  assert.deepEqual(error.position, at);
  assert.match(error.message, /^orders partition 2 offset 41: field "amount": column is long .* a double/);
});

test("incompatible types within a sample are an error too", () => {
  const inference = new SchemaInference();
  inference.observe(json('{"id":1}'), at);
  assert.equal(conflict(() => inference.observe(json('{"id":"one"}'), at)).reason, "type-change");
  inference.observe(json('{"flag":true}'), at);
  assert.equal(conflict(() => inference.observe(json('{"flag":1}'), at)).reason, "type-change");
  inference.observe(json('{"at":"2026-10-29T15:22:04Z"}'), at);
  inference.settle();
  assert.match(conflict(() => inference.observe(json('{"at":"soon"}'), at)).message, /timestamptz/);
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
  inference.observe(json('{"qty":7,"price":1.5}'), at);
  assert.deepEqual(inference.changes(), []);
  assert.equal(inference.schema.schemaId, 3);
  inference.observe(json('{"qty":3000000000,"price":0.1,"note":"x"}'), at);
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

test("a table created by someone else gains the system columns it lacks", () => {
  const inference = new SchemaInference({
    schema: { schemaId: 0, fields: [{ id: 1, name: "id", required: true, type: "long" }] },
    lastColumnId: 1,
  });
  const added = inference.changes().map((c) => (c.kind === "add-column" ? [c.field.id, c.field.name] : []));
  assert.deepEqual(
    added,
    SYSTEM_COLUMNS.map((f, i) => [i + 2, f.name]),
  );
  assert.equal(conflict(() => inference.observe(json('{"id":null}'), at)).reason, "null-in-required");
  assert.equal(conflict(() => inference.observe(json('{"other":1}'), at)).reason, "null-in-required");
});

test("a field named like a system column, or like a column but for case, is refused", () => {
  const inference = new SchemaInference();
  assert.equal(conflict(() => inference.observe(json('{"_kafka_key":"k"}'), at)).reason, "reserved-name");
  inference.observe(json('{"id":1}'), at);
  assert.equal(conflict(() => inference.observe(json('{"ID":1}'), at)).reason, "case-collision");
});

test("integers beyond the long range are an error, except into a double column", () => {
  const inference = new SchemaInference();
  const huge = '{"id":18446744073709551615}';
  assert.equal(conflict(() => inference.observe(json(huge), at)).reason, "out-of-range");
  inference.observe(json('{"id":9223372036854775807}'), at);
  assert.equal(conflict(() => inference.observe(json(huge), at)).reason, "out-of-range");
  inference.observe(json('{"x":0.5}'), at);
  inference.observe(json('{"x":18446744073709551615}'), at);
  assert.deepEqual(userColumns(inference), [
    [9, "id", "long"],
    [10, "x", "double"],
  ]);
});

test("a system column of the wrong type in the table is refused up front", () => {
  const fields = SYSTEM_COLUMNS.map((f) => (f.name === "_kafka_offset" ? { ...f, type: "string" as const } : f));
  assert.throws(() => new SchemaInference({ schema: { schemaId: 0, fields }, lastColumnId: 8 }), /_kafka_offset/);
});
