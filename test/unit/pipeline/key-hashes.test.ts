// A row's key hash computed from a message (while a sync writes it) and from the row's stored dedup
// columns (when the key index is rebuilt, for rows of any writer) must be the same: messages are
// written into a real Parquet file by the sync's own row writer, the key columns read back, and
// both hashes compared, with `_floe_id` too, for each column type a dedup key can have.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FLOE_ID, KAFKA_KEY, kafkaKeyText, SYSTEM_COLUMNS } from "#src/decode/system-columns.ts";
import { writeDataFiles } from "#src/iceberg/parquet/data-file-writer.ts";
import { readKeyColumns } from "#src/iceberg/parquet/key-column-reader.ts";
import type { Schema } from "#src/iceberg/spec/schema.ts";
import { decimal, type NestedField } from "#src/iceberg/spec/types.ts";
import { parseDedupKey } from "#src/job/dedup-key.ts";
import type { RowMessages } from "#src/pipeline/binding-batch.ts";
import { dedupKeyColumns, hashRowKeys, hashStoredKeys } from "#src/pipeline/key-hashes.ts";
import { RowBatch } from "#src/pipeline/row-batch.ts";
import { formatKeyHash, KEY_HASH_WORDS } from "#src/upsert/key-hash.ts";

const payload: NestedField[] = [
  { id: 9, name: "id", required: false, type: "long" },
  { id: 10, name: "n", required: false, type: "int" },
  { id: 11, name: "s", required: false, type: "string" },
  { id: 12, name: "d", required: false, type: "double" },
  { id: 13, name: "f", required: false, type: "float" },
  { id: 14, name: "ts", required: false, type: "timestamptz" },
  { id: 15, name: "ok", required: false, type: "boolean" },
];
const schema: Schema = { schemaId: 0, fields: [...SYSTEM_COLUMNS, ...payload] };

function messages(records: Record<string, unknown>[], typed = false): RowMessages {
  return {
    count: records.length,
    partitions: records.map(() => 0),
    offsets: records.map((_, i) => BigInt(i)),
    timestamps: records.map(() => 1_700_000_000_000n),
    keys: records.map((_, i) => kafkaKeyText(Buffer.from(`key-${i}`))),
    keyRecords: records.map(() => null),
    records: records as RowMessages["records"],
    typed,
  };
}

/** Writes the messages as floe writes rows, reads the dedup columns back, and compares the hashes. */
async function assertAgree(rows: RowMessages, dedupKeys: string[], s: Schema = schema) {
  const fromMessages = hashRowKeys(rows, dedupKeys.map(parseDedupKey), s);
  const batch = new RowBatch(s, rows.count, rows.typed);
  for (let i = 0; i < rows.count; i++) batch.append(rows, i, "c", fromMessages);
  const [file] = writeDataFiles(batch.builder.build(), s);
  const fields = dedupKeyColumns(dedupKeys.map(parseDedupKey), s)!;
  const floeId = s.fields.find((f) => f.name === FLOE_ID)!;
  const read = await readKeyColumns(file!.bytes, s, [...fields.map((f) => f.id), floeId.id]);
  const stored = hashStoredKeys(
    read.rowCount,
    fields.map((f) => read.columns.get(f.id)!),
    fields,
  );
  assert.deepEqual(stored.unkeyed, []);
  assert.deepEqual(stored.hashes, fromMessages, `${dedupKeys}: stored columns and messages hash alike`);
  // A fixed[16] _floe_id holds the digest's bytes, whose hex is the text a string _floe_id holds.
  const ids = read.columns.get(floeId.id)!;
  for (let i = 0; i < rows.count; i++) {
    const id = ids[i];
    if (floeId.type === "string") assert.equal(id, formatKeyHash(fromMessages, i));
    else assert.equal(Buffer.from(id as Uint8Array).toString("hex"), formatKeyHash(fromMessages, i));
  }
}

/** The schema of a table floe created with the hex `_floe_id`. */
const hexSchema: Schema = {
  ...schema,
  fields: schema.fields.map((f) => (f.name === FLOE_ID ? { ...f, type: "string" } : f)),
};

describe("key hashes of messages and of stored rows", () => {
  const json = [
    { id: 1, n: -3, s: "é", d: 0.1, f: 0.1, ts: "2024-05-06T07:08:09.123456Z", ok: true },
    { id: 9007199254740993n, n: 2147483647, s: "", d: -0, f: 3.4e38, ts: "1970-01-01T00:00:00Z", ok: false },
    { id: -5, n: 0, s: "12", d: 1e300, f: 1.5, ts: "2262-04-11T23:47:16.854775Z", ok: true },
  ];

  for (const keys of [["id"], ["n"], ["s"], ["d"], ["f"], ["ts"], ["ok"], [KAFKA_KEY], ["s", "id", KAFKA_KEY]]) {
    test(`JSON messages, dedup keys ${keys.join(", ")}`, () => assertAgree(messages(json), keys));
  }

  test("a table created with the hex _floe_id gets hex ids of the same hashes", async () => {
    assert.deepEqual(
      schema.fields.find((f) => f.name === FLOE_ID)?.type,
      { kind: "fixed", length: 16 },
      "a table floe creates now",
    );
    for (const keys of [["id"], ["s", "id", KAFKA_KEY]]) await assertAgree(messages(json), keys, hexSchema);
  });

  test("a number in a string column hashes as the text the column stores", () =>
    assertAgree(messages([{ id: 1, s: 12 }]), ["s"]));

  test("registry-typed records: a float keeps float32 precision, a uuid is stored in lowercase", async () => {
    const typedSchema: Schema = {
      schemaId: 0,
      fields: [
        ...SYSTEM_COLUMNS,
        { id: 9, name: "f", required: false, type: "float" },
        { id: 10, name: "u", required: false, type: "uuid" },
        { id: 11, name: "amount", required: false, type: decimal(10, 2) },
        { id: 12, name: "day", required: false, type: "date" },
      ],
    };
    const typed = messages(
      [
        { f: Math.fround(0.1), u: "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", amount: 1234n, day: 19_000 },
        { f: 2.5, u: "00000000-0000-0000-0000-000000000001", amount: -1n, day: -1 },
      ],
      true,
    );
    for (const keys of [["f"], ["u"], ["amount"], ["day"], ["u", "amount"]])
      await assertAgree(typed, keys, typedSchema);
  });

  test("a row with a null dedup value has no key", () => {
    const fields = dedupKeyColumns(["id", "s"].map(parseDedupKey), schema)!;
    const { hashes, unkeyed } = hashStoredKeys(
      3,
      [
        [1n, null, 3n],
        ["a", "b", null],
      ],
      fields,
    );
    assert.deepEqual(unkeyed, [1, 2]);
    assert.deepEqual([...hashes.subarray(KEY_HASH_WORDS, 3 * KEY_HASH_WORDS)], new Array(8).fill(0));
  });

  test("a key field of a decoded Kafka key is no column: only _floe_id holds it", () => {
    assert.equal(dedupKeyColumns([`${KAFKA_KEY}.id`].map(parseDedupKey), schema), undefined);
    assert.equal(dedupKeyColumns(["id", `${KAFKA_KEY}.id`].map(parseDedupKey), schema), undefined);
    assert.deepEqual(
      dedupKeyColumns(["s", KAFKA_KEY].map(parseDedupKey), schema)?.map((f) => f.name),
      ["s", KAFKA_KEY],
    );
  });

  test("a dedup key inside a struct (customer.id) hashes its field as stored, JSON and typed alike; lists and maps are refused", async () => {
    const nested: Schema = {
      schemaId: 0,
      fields: [
        ...SYSTEM_COLUMNS,
        {
          id: 9,
          name: "customer",
          required: false,
          type: {
            kind: "struct",
            fields: [
              { id: 12, name: "id", required: false, type: "long" },
              {
                id: 13,
                name: "address",
                required: false,
                type: { kind: "struct", fields: [{ id: 14, name: "zip", required: false, type: "string" }] },
              },
            ],
          },
        },
        {
          id: 10,
          name: "tags",
          required: false,
          type: { kind: "list", elementId: 15, element: "string", elementRequired: false },
        },
      ],
    };
    const records = [
      { customer: { id: 1, address: { zip: "75001" } } },
      { customer: { id: 9007199254740993n, address: { zip: "" } } },
    ];
    await assertAgree(messages(records), ["customer.id"], nested);
    await assertAgree(messages(records), ["customer.address.zip", "customer.id"], nested);
    await assertAgree(messages(records, true), ["customer.id"], nested);
    assert.deepEqual(
      dedupKeyColumns(["customer.address.zip"].map(parseDedupKey), nested)?.map((f) => f.id),
      [14],
    );
    // The same value hashes alike at the top level and inside a struct: only the value counts.
    const top = hashRowKeys(messages([{ id: 1 }]), [parseDedupKey("id")], schema);
    assert.deepEqual(hashRowKeys(messages([records[0]!]), [parseDedupKey("customer.id")], nested), top);
    assert.throws(
      () => dedupKeyColumns([parseDedupKey("tags.x")], nested),
      /tags is a list; a dedup key may be a field inside structs, not inside a list or a map/,
    );
    assert.throws(
      () => dedupKeyColumns([parseDedupKey("customer.name")], nested),
      /the table has no field customer.name/,
    );
    assert.throws(() => dedupKeyColumns([parseDedupKey("customer.address")], nested), /not a field of primitive type/);
  });
});
