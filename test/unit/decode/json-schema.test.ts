// JSON Schema-framed values: the registry schema's top-level property types as declared columns,
// and a json_schema binding's batch stripping the frame, typing columns by schema and rejecting
// what is not framed, an unknown schema id and a schema that is not JSON Schema, and the sample
// floe check / discover take through that batch. No registry: the client is a stub.
import assert from "node:assert/strict";
import { test } from "node:test";
import { encodeConfluentFrame } from "#src/decode/confluent-frame.ts";
import { jsonSchemaColumns } from "#src/decode/json-schema-columns.ts";
import { UnsupportedSchemaError } from "#src/decode/typed-record.ts";
import { typeToString } from "#src/iceberg/spec/types.ts";
import { RegistrySample } from "#src/inspect/registry-sample.ts";
import { parseJob } from "#src/job/load-job.ts";
import type { KafkaMessage } from "#src/kafka/read.ts";
import { BindingBatch } from "#src/pipeline/binding-batch.ts";
import { RegistryDecoders } from "#src/pipeline/registry-decoders.ts";
import { type RegisteredSchema, RegistryError, type SchemaRegistryClient } from "#src/registry/client.ts";

test("JSON Schema properties: integer long, number double, date-time timestamptz; the rest is inference's", () => {
  const columns = jsonSchemaColumns(
    JSON.stringify({
      type: "object",
      properties: {
        id: { type: "integer" },
        price: { type: "number" },
        ok: { type: "boolean" },
        at: { type: "string", format: "date-time" },
        day: { type: "string", format: "date" },
        name: { type: ["string", "null"] },
        either: { type: ["string", "integer"] },
        tags: { type: "array", items: { type: "string" } },
        address: { type: "object", properties: { city: { type: "string" } } },
        ref: { $ref: "#/definitions/x" },
      },
      required: ["id"],
    }),
  );
  assert.deepEqual(
    [...columns],
    [
      ["id", "long"],
      ["price", "double"],
      ["ok", "boolean"],
      ["at", "timestamptz"],
      ["day", "string"],
      ["name", "string"],
    ],
  );
  assert.deepEqual([...jsonSchemaColumns("true")], []);
  assert.deepEqual([...jsonSchemaColumns('{"type":"object"}')], []);
  assert.throws(() => jsonSchemaColumns("{not json"), UnsupportedSchemaError);
  assert.throws(() => jsonSchemaColumns("[1]"), UnsupportedSchemaError);
});

const SCHEMAS = new Map<number, RegisteredSchema>([
  [
    1,
    {
      schemaType: "JSON",
      schema: JSON.stringify({ type: "object", properties: { id: { type: "integer" }, price: { type: "number" } } }),
      references: [],
    },
  ],
  [2, { schemaType: "AVRO", schema: '"string"', references: [] }],
]);

const client = {
  schemaById: async (id: number) => {
    const schema = SCHEMAS.get(id);
    if (schema === undefined) throw new RegistryError("not-found", `schema id ${id} not found`);
    return schema;
  },
} as unknown as SchemaRegistryClient;

function binding(stream = "mode: append\n    format: json_schema") {
  const job = parseJob(
    `
name: j
source:
  kafka:
    bootstrap_servers: [k:9092]
    schema_registry:
      url: http://127.0.0.1:1
streams:
  t:
    ${stream}
`,
    "/jobs/job.yaml",
  );
  return job.bindings.get("t")!;
}

function message(offset: number, value: Uint8Array, key: Uint8Array | null = null): KafkaMessage {
  return { topic: "t", partition: 0, offset: BigInt(offset), timestamp: 0n, key, value, headers: [] };
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

test("a json_schema batch strips the frame, types columns by the schema and rejects the rest", async () => {
  const batch = new BindingBatch(binding(), undefined, new Map(), new RegistryDecoders(client));
  const messages = [
    message(0, encodeConfluentFrame(1, json({ id: 7, price: 3, note: "x" }))),
    message(1, json({ id: 8 })),
    message(2, encodeConfluentFrame(99, json({ id: 9 }))),
    message(3, encodeConfluentFrame(2, json({ id: 10 }))),
    message(4, encodeConfluentFrame(1, json({ id: "eleven" }))),
  ];
  await batch.prepare(messages);
  for (const m of messages) batch.add(m);
  assert.equal(batch.rows.count, 1);
  assert.deepEqual(batch.rows.records[0], { id: 7, price: 3, note: "x" });
  batch.inference.settle();
  const types = Object.fromEntries(batch.inference.schema.fields.map((f) => [f.name, typeToString(f.type)]));
  // price's first value is whole: inference alone would make it a long column.
  assert.equal(types.price, "double");
  assert.equal(types.id, "long");
  assert.equal(types.note, "string");
  assert.deepEqual(
    batch.rejected.map((r) => [r.offset, r.reason]),
    [
      [1n, "not-framed"],
      [2n, "schema-not-found"],
      [3n, "unsupported-schema"],
      [4n, "type-mismatch"],
    ],
  );
  assert.match(batch.rejected[0]!.detail, /format is json_schema/);
  assert.match(batch.rejected[2]!.detail, /AVRO schema/);
});

test("floe check / discover sample a json_schema stream through its batch: the schema's types, the bad messages by reason", async () => {
  const sample = new RegistrySample(binding(), undefined, new RegistryDecoders(client));
  await sample.add([
    message(0, encodeConfluentFrame(1, json({ id: 7, price: 3, tags: ["a"] }))),
    message(1, json({ id: 8 })),
  ]);
  const result = sample.result();
  assert.equal(result.messages, 2);
  assert.deepEqual(result.bad, { "not-framed": 1 });
  assert.deepEqual(
    result.columns.map((c) => [c.name, c.type, c.example]),
    [
      ["id", "long", "7"],
      ["price", "double", "3"],
      ["tags", "list<string>", '["a"]'],
    ],
  );
});

test("key_format json_schema: a framed JSON key's fields are dedup keys; an unframed or fieldless key is a dead letter", async () => {
  const stream = "mode: upsert\n    format: json_schema\n    key_format: json_schema\n    dedup_keys: [_kafka_key.id]";
  const batch = new BindingBatch(binding(stream), undefined, new Map(), new RegistryDecoders(client));
  const value = encodeConfluentFrame(1, json({ price: 1.5 }));
  const messages = [
    message(0, value, encodeConfluentFrame(1, json({ id: 7 }))),
    message(1, value, json({ id: 8 })),
    message(2, value, encodeConfluentFrame(1, json({ other: 1 }))),
    message(3, value, encodeConfluentFrame(99, json({ id: 9 }))),
    message(4, value, encodeConfluentFrame(1, new TextEncoder().encode("{nope"))),
  ];
  await batch.prepare(messages);
  for (const m of messages) batch.add(m);
  assert.equal(batch.rows.count, 1);
  assert.deepEqual(batch.rows.keyRecords[0], { id: 7 });
  assert.deepEqual(
    batch.rejected.map((r) => [r.offset, r.reason]),
    [
      [1n, "not-framed"],
      [2n, "missing-dedup-key"],
      [3n, "schema-not-found"],
      [4n, "not-json"],
    ],
  );
  assert.match(batch.rejected[0]!.detail, /^key: the key is not in the Confluent wire format/);
});
