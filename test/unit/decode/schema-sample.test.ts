// A sample's columns, value types, refused values and proposed declarations.
import assert from "node:assert/strict";
import { test } from "node:test";
import { DEBEZIUM_ENVELOPE } from "#src/decode/cdc-envelope.ts";
import type { DeclarableType } from "#src/decode/declared-columns.ts";
import { SchemaInference, type TableSchema } from "#src/decode/infer-schema.ts";
import { EXAMPLE_MAX_CHARS, exampleOf, proposedType, SchemaSample } from "#src/decode/schema-sample.ts";
import { SYSTEM_COLUMNS } from "#src/decode/system-columns.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);

function sampleOf(texts: (string | null)[], table?: TableSchema, declared = new Map<string, DeclarableType>()) {
  const sample = new SchemaSample(new SchemaInference(table, declared), table, declared);
  for (const text of texts) sample.add(text === null ? null : utf8(text));
  return sample.result();
}

test("a new table: each field's inferred column, its value types, and a proposal where they mix", () => {
  const result = sampleOf([
    '{"id":1,"amount":100,"at":"2026-10-29T15:22:04Z","tags":[1]}',
    '{"id":2,"amount":99.19,"at":"2026-10-29","tags":[2]}',
    '{"id":3,"amount":null,"code":"7"}',
    '{"id":4,"code":7,"big":18446744073709551616}',
    '{"id":5,"tags":{"a":1}}',
    "not json",
    null,
  ]);
  assert.deepEqual([result.messages, result.tombstones, result.bad], [7, 1, { "not-json": 1 }]);
  assert.deepEqual(
    result.columns.map((c) => [c.name, c.type, c.source, c.values, c.misfits]),
    [
      ["id", "long", "inferred", { long: 5 }, 0],
      ["amount", "double", "inferred", { long: 1, double: 1, null: 1 }, 0],
      ["at", "string", "inferred", { timestamptz: 1, string: 1 }, 0],
      ["tags", "list<long>", "inferred", { array: 2, object: 1 }, 1],
      ["code", "string", "inferred", { string: 1, long: 1 }, 0],
      ["big", undefined, "inferred", { huge: 1 }, 1],
    ],
  );
  assert.deepEqual(
    [...result.proposed],
    [
      ["amount", "double"],
      ["at", "string"],
      ["tags", "json"],
      ["code", "string"],
      ["big", "string"],
    ],
  );
});

test("an existing table's columns and declared ones keep their type, count what they refuse, and get no proposal", () => {
  const table: TableSchema = {
    schema: { schemaId: 1, fields: [...SYSTEM_COLUMNS, { id: 9, name: "amount", required: false, type: "long" }] },
    lastColumnId: 9,
  };
  const result = sampleOf(
    ['{"amount":1,"id":1}', '{"amount":2.5,"id":"2"}', '{"amount":3,"id":"x"}'],
    table,
    new Map([
      ["id", "string"],
      ["unseen", "timestamptz"],
    ]),
  );
  assert.deepEqual(
    result.columns.map((c) => [c.name, c.type, c.source, c.misfits]),
    [
      ["id", "string", "declared", 0],
      ["unseen", "timestamptz", "declared", 0],
      ["amount", "long", "table", 1],
    ],
  );
  assert.equal(result.proposed.size, 0);
});

test("proposals: double for ints and decimals, json for a mix with objects or arrays, string for any other mix, none for one type", () => {
  assert.equal(proposedType({ long: 3 }), undefined);
  assert.equal(proposedType({ long: 3, null: 2 }), undefined);
  assert.equal(proposedType({ object: 2, null: 1 }), undefined);
  assert.equal(proposedType({ object: 1, array: 1 }), "json");
  assert.equal(proposedType({ object: 1, string: 1 }), "json");
  assert.equal(proposedType({ long: 3, double: 1 }), "double");
  assert.equal(proposedType({ timestamptz: 3, string: 1 }), "string");
  assert.equal(proposedType({ boolean: 1, long: 1 }), "string");
  assert.equal(proposedType({ long: 1, double: 1, string: 1 }), "string");
  assert.equal(proposedType({ huge: 1 }), "string");
  assert.equal(proposedType({ double: 1, huge: 1 }), "string");
});

test("examples: the first non-null value's JSON text (int64s exact, long ones cut), and whether the table requires the column", () => {
  const table: TableSchema = {
    schema: { schemaId: 1, fields: [...SYSTEM_COLUMNS, { id: 9, name: "id", required: true, type: "long" }] },
    lastColumnId: 9,
  };
  const result = sampleOf(
    [
      `{"id":9223372036854775807,"note":null,"tags":{"a":[1,2]},"text":"${"é".repeat(100)}"}`,
      '{"id":1,"note":"later","tags":null}',
    ],
    table,
  );
  assert.deepEqual(
    result.columns.map((c) => [c.name, c.required, c.example]),
    [
      ["id", true, "9223372036854775807"],
      ["note", false, '"later"'],
      ["tags", false, '{"a":[1,2]}'],
      ["text", false, `"${"é".repeat(EXAMPLE_MAX_CHARS - 1)}…`],
    ],
  );
  assert.equal(exampleOf("😀".repeat(60)).endsWith("…"), true);
  assert.equal(
    /[\uD800-\uDBFF]…$/.test(exampleOf(`x${"😀".repeat(60)}`)),
    false,
    "no half surrogate pair before the cut",
  );
});

test("a change stream's sample: the columns of the after images, Debezium's logical types applied; deletes make none", () => {
  const sample = new SchemaSample(new SchemaInference(), undefined, new Map(), DEBEZIUM_ENVELOPE);
  const schema = {
    type: "struct",
    fields: [
      { field: "after", type: "struct", fields: [{ field: "born", type: "int32", name: "io.debezium.time.Date" }] },
    ],
  };
  sample.add(utf8(JSON.stringify({ schema, payload: { op: "r", after: { id: 1, born: 0 }, source: { lsn: 1 } } })));
  sample.add(utf8('{"op":"d","before":{"id":1,"gone":true},"after":null}'));
  const result = sample.result();
  assert.deepEqual(
    result.columns.map((c) => [c.name, c.type]),
    [
      ["id", "long"],
      ["born", "string"],
      ["_cdc_position", "string"],
    ],
  );
});
