// JSON Schema-framed values (Confluent's JSON Schema serializer) through the real schema registry
// and the real broker: the frame stripped, the schema fetched by id, its top-level property types
// giving the columns (a number whose first values are whole is still a double), nested values
// inferred as structs and lists; a second schema version adds fields in the next sync; unframed
// values, unknown schema ids and an Avro schema id are dead letters. Read back through DuckDB,
// PyIceberg and Spark and compared with a model.
import assert from "node:assert/strict";
import { test } from "node:test";
import { typeToString } from "#src/iceberg/spec/types.ts";
import { produce } from "../../dev/kafka.ts";
import { restTable } from "../../dev/readers.ts";
import { jsonSchemaValue, registerSchema } from "../../dev/registry.ts";
import { registrySuite, report, tableSchema } from "../helpers/registry-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const suite = registrySuite();
const { run, topics, stateDir, jobFor } = suite;

const v1 = {
  $schema: "http://json-schema.org/draft-07/schema#",
  title: "Order",
  type: "object",
  properties: {
    id: { type: "integer" },
    price: { type: "number" },
    at: { type: "string", format: "date-time" },
    paid: { type: "boolean" },
    name: { type: ["string", "null"] },
    tags: { type: "array", items: { type: "string" } },
  },
  required: ["id"],
};
const v2 = { ...v1, properties: { ...v1.properties, qty: { type: "integer" }, note: { type: "string" } } };

test("JSON Schema: framed JSON lands typed by its schema, a second version adds columns, bad messages are dead letters; DuckDB, PyIceberg and Spark read the rows", async () => {
  const topic = await topics.create("orders");
  const subject = `${topic}-value`;
  const id1 = await registerSchema(subject, v1, { schemaType: "JSON" });
  const avroId = await registerSchema(`${topic}-other-value`, { type: "record", name: "R", fields: [] });
  const at = "2025-10-29T15:22:04.123Z";
  await produce(topic, [
    { key: "1", value: jsonSchemaValue(id1, { id: 1, price: 10, at, paid: true, name: "Ada", tags: ["a", "b"] }) },
    { key: "2", value: jsonSchemaValue(id1, { id: 2, price: 3, at, paid: false, name: null, tags: [] }) },
    { key: "plain", value: '{"id": 9}' },
    { key: "unknown", value: jsonSchemaValue(id1 + 1000, { id: 10 }) },
    { key: "avro", value: jsonSchemaValue(avroId, { id: 11 }) },
  ]);

  const name = `${run}_orders`;
  const namespace = `${name}_topics`;
  const job = jobFor(name, { [topic]: { mode: "append", format: "json_schema", table: "orders" } });
  const first = await syncJob(job, { stateDir });
  assert.equal(first.status, "complete");
  assert.equal(report(first, "orders").recordsAdded, 2);
  assert.equal(report(first, "orders").deadLetters, 3);
  const types = async () =>
    Object.fromEntries(
      (await tableSchema(namespace, "orders")).fields
        .filter((f) => !f.name.startsWith("_"))
        .map((f) => [f.name, typeToString(f.type)]),
    );
  assert.deepEqual(await types(), {
    id: "long",
    // Inference alone makes whole numbers a long column, which 1.25 in the next sync would not fit.
    price: "double",
    at: "timestamptz",
    paid: "boolean",
    name: "string",
    tags: "list<string>",
  });

  const id2 = await registerSchema(subject, v2, { schemaType: "JSON" });
  assert.notEqual(id2, id1);
  await produce(topic, [
    { key: "3", value: jsonSchemaValue(id2, { id: 3, price: 7, at, paid: true, tags: ["c"], qty: 4, note: "v2" }) },
    { key: "4", value: jsonSchemaValue(id1, { id: 4, price: 1.25, at, paid: true, name: "Bo", tags: [] }) },
  ]);
  const second = await syncJob(job, { stateDir });
  assert.equal(second.status, "complete");
  assert.equal(report(second, "orders").recordsAdded, 2);
  assert.deepEqual(await types(), {
    id: "long",
    price: "double",
    at: "timestamptz",
    paid: "boolean",
    name: "string",
    tags: "list<string>",
    qty: "long",
    note: "string",
  });

  const ts = "2025-10-29T15:22:04.123000Z";
  const row = { at: ts, qty: null, note: null };
  const model = [
    { ...row, id: 1n, price: 10, paid: true, name: "Ada", tags: ["a", "b"] },
    { ...row, id: 2n, price: 3, paid: false, name: null, tags: [] },
    { ...row, id: 3n, price: 7, paid: true, name: null, tags: ["c"], qty: 4n, note: "v2" },
    { ...row, id: 4n, price: 1.25, paid: true, name: "Bo", tags: [] },
  ];
  await suite.readers.assertRows(restTable(namespace, "orders"), model, {
    columns: Object.keys(model[2]!),
    orderBy: ["id"],
  });
  const dead = await suite.readers.rows("duckdb", restTable(namespace, "orders__dlq"), {
    columns: ["_kafka_offset", "_error_kind", "_error"],
    orderBy: ["_kafka_offset"],
  });
  assert.deepEqual(
    dead.map((r) => r._error_kind),
    ["not-framed", "schema-not-found", "unsupported-schema"],
  );
  assert.match(String(dead[0]!._error), /first byte 0x7b, not the magic byte 0x00; the stream's format is json_schema/);
  assert.match(String(dead[1]!._error), new RegExp(`schema id ${id1 + 1000}`));
  assert.match(String(dead[2]!._error), new RegExp(`schema id ${avroId} is a AVRO schema`));
});

test("JSON Schema keys: key_format json_schema upserts on a field of the framed key, the latest value per key read by every engine", async () => {
  const topic = await topics.create("accounts");
  const keyId = await registerSchema(
    `${topic}-key`,
    { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
    { schemaType: "JSON" },
  );
  const valueId = await registerSchema(
    `${topic}-value`,
    { type: "object", properties: { balance: { type: "number" }, owner: { type: "string" } } },
    { schemaType: "JSON" },
  );
  const key = (id: number) => jsonSchemaValue(keyId, { id });
  await produce(topic, [
    { key: key(1), value: jsonSchemaValue(valueId, { balance: 10, owner: "Ada" }) },
    { key: key(2), value: jsonSchemaValue(valueId, { balance: 5, owner: "Bo" }) },
    { key: key(1), value: jsonSchemaValue(valueId, { balance: 12.5, owner: "Ada" }) },
    { key: '{"id": 3}', value: jsonSchemaValue(valueId, { balance: 1, owner: "Cy" }) },
  ]);
  const name = `${run}_accounts`;
  const namespace = `${name}_topics`;
  const job = jobFor(name, {
    [topic]: {
      mode: "upsert",
      format: "json_schema",
      key_format: "json_schema",
      dedup_keys: ["_kafka_key.id"],
      table: "accounts",
    },
  });
  const result = await syncJob(job, { stateDir });
  assert.equal(result.status, "complete");
  assert.equal(report(result, "accounts").deadLetters, 1);
  await suite.readers.assertRows(
    restTable(namespace, "accounts"),
    [
      { owner: "Ada", balance: 12.5 },
      { owner: "Bo", balance: 5 },
    ],
    { columns: ["owner", "balance"], orderBy: ["owner"] },
  );
});
