// Key columns read back by field id, in row order, in the single-value JS form.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ColumnBatchBuilder } from "#src/iceberg/parquet/column-batch.ts";
import { writeDataFiles } from "#src/iceberg/parquet/data-file-writer.ts";
import { readKeyColumns } from "#src/iceberg/parquet/key-column-reader.ts";
import type { Schema } from "#src/iceberg/spec/schema.ts";
import { decimal, fixed } from "#src/iceberg/spec/types.ts";

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: "id", required: true, type: "long" },
    { id: 2, name: "name", required: false, type: "string" },
    { id: 3, name: "n", required: false, type: "int" },
    { id: 4, name: "ts", required: false, type: "timestamptz" },
    { id: 5, name: "day", required: false, type: "date" },
    { id: 6, name: "u", required: false, type: "uuid" },
    { id: 7, name: "small", required: false, type: decimal(9, 2) },
    { id: 8, name: "big", required: false, type: decimal(30, 4) },
    { id: 9, name: "fx", required: false, type: fixed(2) },
    { id: 10, name: "ok", required: false, type: "boolean" },
    {
      id: 11,
      name: "nested",
      required: false,
      type: { kind: "struct", fields: [{ id: 12, name: "inner", required: true, type: "long" }] },
    },
    {
      id: 13,
      name: "tags",
      required: false,
      type: { kind: "list", elementId: 14, element: "long", elementRequired: true },
    },
  ],
};

function file(records: Record<string, unknown>[], s: Schema = schema): Uint8Array {
  const batch = new ColumnBatchBuilder(s);
  for (const record of records) batch.appendRow(record);
  const [written] = writeDataFiles(batch.build(), s);
  return written!.bytes;
}

test("key columns come back in row order, exact, nulls included", async () => {
  const bytes = file([
    {
      id: 1,
      name: "é",
      n: -3,
      ts: 1_700_000_000_123_456n,
      day: 19000,
      u: "0192d8f4-1c6e-7b8a-9c3d-1234567890ab",
      small: -12345n,
      big: 10n ** 29n + 1n,
      fx: Uint8Array.of(1, 2),
      ok: true,
      nested: { inner: 10n },
    },
    { id: -(2n ** 63n), nested: null },
    { id: 2n ** 63n - 1n, name: "", big: -(10n ** 29n) - 1n, nested: { inner: -1 } },
  ]);
  const { rowCount, columns } = await readKeyColumns(bytes, schema, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
  assert.equal(rowCount, 3);
  assert.deepEqual(Object.fromEntries(columns), {
    1: [1n, -(2n ** 63n), 2n ** 63n - 1n],
    2: ["é", null, ""],
    3: [-3, null, null],
    4: [1_700_000_000_123_456n, null, null],
    5: [19000, null, null],
    6: ["0192d8f4-1c6e-7b8a-9c3d-1234567890ab", null, null],
    7: [-12345n, null, null],
    8: [10n ** 29n + 1n, null, -(10n ** 29n) - 1n],
    9: [Uint8Array.of(1, 2), null, null],
    10: [true, null, null],
    12: [10n, null, -1n],
  });
});

test("columns are found by field id: a renamed column reads, a column the file lacks is null", async () => {
  const bytes = file([{ id: 5, name: "a" }, { id: 6 }]);
  const renamed: Schema = {
    schemaId: 1,
    fields: [
      { id: 2, name: "label", required: false, type: "string" },
      { id: 1, name: "key", required: true, type: "long" },
      { id: 99, name: "added", required: false, type: "long" },
    ],
  };
  const { columns } = await readKeyColumns(bytes, renamed, [1, 2, 99]);
  assert.deepEqual(columns.get(1), [5n, 6n]);
  assert.deepEqual(columns.get(2), ["a", null]);
  assert.deepEqual(columns.get(99), [null, null]);
});

test("an int column promoted to long reads as bigint", async () => {
  const narrow: Schema = { schemaId: 0, fields: [{ id: 1, name: "k", required: true, type: "int" }] };
  const bytes = file([{ k: 7 }, { k: -1 }], narrow);
  const widened: Schema = { schemaId: 1, fields: [{ id: 1, name: "k", required: true, type: "long" }] };
  assert.deepEqual((await readKeyColumns(bytes, widened, [1])).columns.get(1), [7n, -1n]);
});

test("fields inside lists, nested types and unknown ids are refused", async () => {
  const bytes = file([{ id: 1, tags: [1n] }]);
  await assert.rejects(readKeyColumns(bytes, schema, [14]), /inside a list or map/);
  await assert.rejects(readKeyColumns(bytes, schema, [11]), /not a primitive field/);
  await assert.rejects(readKeyColumns(bytes, schema, [404]), /not a primitive field/);
});

test("a million rows read back", async () => {
  const keys: Schema = { schemaId: 0, fields: [{ id: 1, name: "id", required: true, type: "long" }] };
  const batch = new ColumnBatchBuilder(keys);
  const id = batch.column(1);
  assert.ok(id.kind === "long");
  const n = 1_000_000;
  for (let i = 0; i < n; i++) {
    id.appendNumber((i * 7919) % n);
    batch.endRow();
  }
  const [written] = writeDataFiles(batch.build(), keys);
  const values = (await readKeyColumns(written!.bytes, keys, [1])).columns.get(1)!;
  assert.equal(values.length, n);
  for (const i of [0, 1, 4242, n - 1]) assert.equal(values[i], BigInt((i * 7919) % n));
});

test("a file without field ids is refused rather than read as nulls", async () => {
  const keys: Schema = { schemaId: 0, fields: [{ id: 1, name: "id", required: true, type: "long" }] };
  const batch = new ColumnBatchBuilder(keys);
  batch.appendRow({ id: 1 });
  const table = batch.build();
  for (const field of table.schema.fields) field.metadata.clear();
  const [written] = writeDataFiles(table, { schemaId: 0, fields: [] });
  await assert.rejects(readKeyColumns(written!.bytes, keys, [1]), /no field ids/);
});

test("read by ranges (an AsyncBuffer), a large file gives the same keys and fetches little more than the key column", async () => {
  const wide: Schema = {
    schemaId: 0,
    fields: [
      { id: 1, name: "id", required: true, type: "long" },
      { id: 2, name: "payload", required: false, type: "string" },
    ],
  };
  // Random payloads, so the string column does not compress away and dwarfs the key column.
  const records = Array.from({ length: 2_000 }, (_, i) => ({
    id: BigInt(i),
    payload: Array.from({ length: 40 }, () => Math.random().toString(36).slice(2)).join(""),
  }));
  const bytes = file(records, wide);
  let fetched = 0;
  const ranged = {
    byteLength: bytes.byteLength,
    slice(start: number, end = bytes.byteLength) {
      fetched += end - start;
      return bytes.slice(start, end).buffer;
    },
  };
  const whole = await readKeyColumns(bytes, wide, [1]);
  const byRanges = await readKeyColumns(ranged, wide, [1]);
  assert.deepEqual(byRanges, whole);
  assert.equal(byRanges.columns.get(1)?.[1_999], 1_999n);
  assert.ok(fetched < bytes.byteLength / 4, `fetched ${fetched} of ${bytes.byteLength} bytes`);
});
