// Parquet data files: field ids on every schema node, Iceberg's Parquet types, exact column
// metrics, splitting by target size, codecs. The footer is read back with hyparquet.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type FileMetaData, parquetMetadata, parquetReadObjects, type SchemaElement } from "hyparquet";
import { compressors } from "hyparquet-compressors";
import { ColumnBatchBuilder } from "#src/iceberg/parquet/column-batch.ts";
import type { ParquetCodec } from "#src/iceberg/parquet/compression-codec.ts";
import { writeDataFiles } from "#src/iceberg/parquet/data-file-writer.ts";
import type { Schema } from "#src/iceberg/spec/schema.ts";
import { fieldById } from "#src/iceberg/spec/schema.ts";
import { decodeSingleValue, type SingleValue } from "#src/iceberg/spec/single-value.ts";
import { decimal, fixed, type PrimitiveType } from "#src/iceberg/spec/types.ts";
import { everyTypeRows } from "../../../fixtures/every-type-rows.ts";

const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: "id", required: true, type: "long" },
    { id: 2, name: "name", required: false, type: "string" },
    { id: 3, name: "n", required: false, type: "int" },
    { id: 4, name: "f", required: false, type: "float" },
    { id: 5, name: "d", required: false, type: "double" },
    { id: 6, name: "b", required: false, type: "boolean" },
    { id: 7, name: "day", required: false, type: "date" },
    { id: 8, name: "t", required: false, type: "time" },
    { id: 9, name: "ts", required: false, type: "timestamp" },
    { id: 10, name: "tstz", required: false, type: "timestamptz" },
    { id: 11, name: "tsns", required: false, type: "timestamptz_ns" },
    { id: 12, name: "u", required: false, type: "uuid" },
    { id: 13, name: "dec9", required: false, type: decimal(9, 2) },
    { id: 14, name: "dec18", required: false, type: decimal(18, 3) },
    { id: 15, name: "dec38", required: false, type: decimal(38, 10) },
    { id: 16, name: "bin", required: false, type: "binary" },
    { id: 17, name: "fx", required: false, type: fixed(4) },
    {
      id: 18,
      name: "tags",
      required: false,
      type: { kind: "list", elementId: 19, element: "string", elementRequired: false },
    },
    {
      id: 20,
      name: "attrs",
      required: false,
      type: { kind: "map", keyId: 21, key: "string", valueId: 22, value: "long", valueRequired: false },
    },
    {
      id: 23,
      name: "loc",
      required: false,
      type: {
        kind: "struct",
        fields: [
          { id: 24, name: "lat", required: true, type: "double" },
          { id: 25, name: "label", required: false, type: "string" },
        ],
      },
    },
  ],
};

const rows = everyTypeRows;

function build(records: Record<string, unknown>[], s: Schema = schema) {
  const batch = new ColumnBatchBuilder(s);
  for (const record of records) batch.appendRow(record);
  return batch.build();
}

function footer(bytes: Uint8Array): FileMetaData {
  return parquetMetadata(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}

function element(meta: FileMetaData, name: string): SchemaElement {
  const found = meta.schema.find((e) => e.name === name);
  assert.ok(found, `no schema element ${name}`);
  return found;
}

function decoded(bounds: ReadonlyMap<number, Uint8Array> | undefined): Record<number, SingleValue> {
  return Object.fromEntries(
    [...(bounds ?? [])].map(([id, bytes]) => [
      id,
      decodeSingleValue(fieldById(schema, id)!.type as PrimitiveType, bytes),
    ]),
  );
}

const counts = (map: ReadonlyMap<number, bigint> | undefined) =>
  Object.fromEntries([...(map ?? [])].map(([id, n]) => [id, Number(n)]));

test("every schema node of an Iceberg field carries its field id, nested ones included", () => {
  const [file] = writeDataFiles(build(rows), schema);
  const meta = footer(file!.bytes);
  const [root, ...nodes] = meta.schema;
  assert.equal(root!.field_id, undefined);
  // the only nodes without an id are the repeated groups of the 3-level list and map layouts
  const withoutId = nodes.filter((e) => e.field_id === undefined);
  assert.deepEqual(
    withoutId.map((e) => [e.name, e.repetition_type]),
    [
      ["list", "REPEATED"],
      ["key_value", "REPEATED"],
    ],
  );
  const ids = nodes.flatMap((e) => (e.field_id === undefined ? [] : [e.field_id])).sort((a, b) => a - b);
  assert.deepEqual(
    ids,
    Array.from({ length: 25 }, (_, i) => i + 1),
  );
  assert.equal(element(meta, "element").field_id, 19);
  assert.equal(element(meta, "key").field_id, 21);
  assert.equal(element(meta, "value").field_id, 22);
  assert.equal(element(meta, "lat").field_id, 24);
});

test("columns have Iceberg's Parquet types (spec Appendix A)", () => {
  const [file] = writeDataFiles(build(rows), schema);
  const meta = footer(file!.bytes);
  const type = (name: string) => {
    const { type, type_length, repetition_type, logical_type } = element(meta, name);
    return { type, type_length, repetition_type, logical_type };
  };
  assert.deepEqual(type("id"), {
    type: "INT64",
    type_length: undefined,
    repetition_type: "REQUIRED",
    logical_type: undefined,
  });
  assert.equal(type("name").logical_type?.type, "STRING");
  assert.deepEqual(type("tstz").logical_type, { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MICROS" });
  assert.deepEqual(type("ts").logical_type, { type: "TIMESTAMP", isAdjustedToUTC: false, unit: "MICROS" });
  assert.deepEqual(type("tsns").logical_type, { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "NANOS" });
  assert.deepEqual(type("t").logical_type, { type: "TIME", isAdjustedToUTC: false, unit: "MICROS" });
  assert.deepEqual(type("day"), {
    type: "INT32",
    type_length: undefined,
    repetition_type: "OPTIONAL",
    logical_type: { type: "DATE" },
  });
  // decimal: int32 up to precision 9, int64 up to 18, else the fewest fixed bytes for P
  assert.deepEqual(
    [type("dec9").type, type("dec18").type, type("dec38").type, type("dec38").type_length],
    ["INT32", "INT64", "FIXED_LEN_BYTE_ARRAY", 16],
  );
  assert.deepEqual(type("dec18").logical_type, { type: "DECIMAL", precision: 18, scale: 3 });
  // uuid: fixed[16]; parquet-wasm cannot annotate it as UUID (see data-file-writer.ts)
  assert.deepEqual([type("u").type, type("u").type_length], ["FIXED_LEN_BYTE_ARRAY", 16]);
  assert.deepEqual([type("fx").type, type("fx").type_length], ["FIXED_LEN_BYTE_ARRAY", 4]);
  assert.equal(type("bin").type, "BYTE_ARRAY");
  assert.equal(type("bin").logical_type, undefined);
  assert.deepEqual(type("tags").logical_type, { type: "LIST" });
  assert.deepEqual(type("attrs").logical_type, { type: "MAP" });
  assert.equal(type("lat").repetition_type, "REQUIRED");
});

test("the rows read back as written", async () => {
  const [file] = writeDataFiles(build(rows), schema);
  const buffer = file!.bytes.buffer.slice(0) as ArrayBuffer;
  const read = await parquetReadObjects({
    file: buffer,
    compressors,
    columns: ["id", "name", "tstz", "tags", "attrs", "loc"],
  });
  assert.deepEqual(
    read.map((r) => r.id),
    [1n, -5n, 3n],
  );
  assert.deepEqual(
    read.map((r) => r.name),
    ["héllo wörld, this is long", null, "abc\u{1f600}"],
  );
  assert.deepEqual(read[0]!.tags, ["a", null, "c"]);
  assert.deepEqual(read[2]!.attrs, { k: 7n });
  assert.deepEqual(read[0]!.loc, { lat: 1.5, label: "zz" });
});

test("metrics are exact: counts with nulls and NaNs, bounds without them, truncated strings", () => {
  const [file] = writeDataFiles(build(rows), schema);
  const { stats, recordCount } = file!;
  assert.equal(recordCount, 3n);
  // list and map contents get no counts or bounds (Java drops repeated fields); struct fields do
  const counted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 24, 25];
  assert.deepEqual(counts(stats.valueCounts), Object.fromEntries(counted.map((id) => [id, 3])));
  assert.deepEqual(counts(stats.nullValueCounts), {
    1: 0,
    2: 1,
    3: 1,
    4: 0,
    5: 0,
    6: 1,
    7: 2,
    8: 2,
    9: 2,
    10: 1,
    11: 2,
    12: 1,
    13: 2,
    14: 2,
    15: 1,
    16: 2,
    17: 2,
    // a null struct makes its fields null, the required one too
    24: 1,
    25: 2,
  });
  assert.deepEqual(counts(stats.nanValueCounts), { 4: 1, 5: 1, 24: 0 });
  assert.deepEqual(decoded(stats.lowerBounds), {
    1: -5n,
    2: "abc\u{1f600}",
    3: -7,
    4: -0,
    5: -2.5,
    6: false,
    7: 19000,
    8: 3_600_000_000n,
    9: 1_700_000_000_123_456n,
    10: -1n,
    11: 1_700_000_000_123_456_789n,
    12: "0192d8f4-0000-7b8a-9c3d-1234567890ab",
    13: -12345n,
    14: 123456789012345n,
    15: -(10n ** 30n) + 7n,
    16: Uint8Array.of(0, 255, 3),
    17: Uint8Array.of(1, 2, 3, 4),
    24: -0,
    25: "zz",
  });
  assert.deepEqual(decoded(stats.upperBounds), {
    1: 3n,
    // 16 code points, the last one incremented
    2: "héllo wörld, thj",
    3: 2147483647,
    4: 1.5,
    5: 0,
    6: true,
    7: 19000,
    8: 3_600_000_000n,
    9: 1_700_000_000_123_456n,
    10: 1_700_000_000_123_456n,
    11: 1_700_000_000_123_456_789n,
    12: "0192d8f4-1c6e-7b8a-9c3d-1234567890ab",
    13: -12345n,
    14: 123456789012345n,
    15: 10n ** 37n,
    16: Uint8Array.of(0, 255, 3),
    17: Uint8Array.of(1, 2, 3, 4),
    24: 1.5,
    25: "zz",
  });
});

test("column sizes are the footer's compressed chunk sizes, nested columns included", () => {
  const [file] = writeDataFiles(build(rows), schema);
  const meta = footer(file!.bytes);
  const byPath = new Map(meta.row_groups[0]!.columns.map((c) => [c.meta_data!.path_in_schema.join("."), c.meta_data!]));
  const sizes = file!.stats.columnSizes!;
  assert.equal(sizes.size, 22);
  assert.equal(sizes.get(1), byPath.get("id")!.total_compressed_size);
  assert.equal(sizes.get(19), byPath.get("tags.list.element")!.total_compressed_size);
  assert.equal(sizes.get(22), byPath.get("attrs.key_value.value")!.total_compressed_size);
  assert.equal(sizes.get(25), byPath.get("loc.label")!.total_compressed_size);
  assert.deepEqual(file!.splitOffsets, [4n]);
});

test("uuid bounds are kept only where Java's signed order agrees with byte order", () => {
  const uuidSchema: Schema = { schemaId: 0, fields: [{ id: 1, name: "u", required: true, type: "uuid" }] };
  const write = (uuids: string[]) => {
    const [file] = writeDataFiles(
      build(
        uuids.map((u) => ({ u })),
        uuidSchema,
      ),
      uuidSchema,
    );
    return [file!.stats.lowerBounds!.get(1), file!.stats.upperBounds!.get(1)].map((b) =>
      b === undefined ? undefined : decodeSingleValue("uuid", b),
    );
  };
  // time-ordered v7 keys share their leading bits: both orders agree
  assert.deepEqual(write(["0192d8f4-1c6e-7b8a-9c3d-1234567890ab", "0192d8f5-0000-7000-8000-000000000000"]), [
    "0192d8f4-1c6e-7b8a-9c3d-1234567890ab",
    "0192d8f5-0000-7000-8000-000000000000",
  ]);
  // 0x7f... < 0x80... as bytes, but not as Java's signed longs
  assert.deepEqual(write(["7fffffff-ffff-4fff-bfff-ffffffffffff", "80000000-0000-4000-8000-000000000000"]), [
    undefined,
    undefined,
  ]);
});

test("metrics modes: counts drops bounds, none drops the column, full keeps whole strings", () => {
  const long = "x".repeat(40);
  const small: Schema = {
    schemaId: 0,
    fields: [
      { id: 1, name: "a", required: false, type: "string" },
      { id: 2, name: "b", required: false, type: "string" },
      { id: 3, name: "c", required: false, type: "binary" },
    ],
  };
  const table = build([{ a: long, b: long, c: new Uint8Array(20).fill(0xff) }], small);
  const [file] = writeDataFiles(table, small, {
    properties: {
      "write.metadata.metrics.default": "full",
      "write.metadata.metrics.column.b": "counts",
      "write.metadata.metrics.column.c": "truncate(8)",
    },
  });
  const { stats } = file!;
  assert.equal(new TextDecoder().decode(stats.upperBounds!.get(1)), long);
  assert.equal(stats.lowerBounds!.has(2), false);
  assert.equal(stats.valueCounts!.get(2), 1n);
  // all-0xff bytes have no truncated upper bound
  assert.deepEqual(stats.lowerBounds!.get(3), new Uint8Array(8).fill(0xff));
  assert.equal(stats.upperBounds!.has(3), false);
  const [none] = writeDataFiles(table, small, { properties: { "write.metadata.metrics.column.a": "none" } });
  assert.equal(none!.stats.valueCounts!.has(1), false);
  assert.equal(none!.stats.columnSizes!.has(1), false);
  assert.equal(none!.stats.columnSizes!.has(2), true);
});

test("a table over the target size is split into files that hold every row once", async () => {
  const wide: Schema = {
    schemaId: 0,
    fields: [
      { id: 1, name: "id", required: true, type: "long" },
      { id: 2, name: "payload", required: false, type: "string" },
    ],
  };
  const batch = new ColumnBatchBuilder(wide);
  const id = batch.column(1);
  const payload = batch.column(2);
  assert.ok(id.kind === "long" && payload.kind === "bytes");
  const n = 40_000;
  let seed = 7;
  for (let i = 0; i < n; i++) {
    id.appendNumber(i);
    // incompressible enough that the files are not tiny
    seed = (seed * 1103515245 + 12345) >>> 0;
    if (i % 10 === 0) payload.appendNull();
    else payload.append(seed.toString(36).repeat(3));
    batch.endRow();
  }
  const target = 32 * 1024;
  const files = writeDataFiles(batch.build(), wide, { targetFileSizeBytes: target });
  assert.ok(files.length >= 4, `${files.length} files`);
  assert.equal(
    files.reduce((sum, f) => sum + f.recordCount, 0n),
    BigInt(n),
  );
  for (const file of files) assert.ok(file.bytes.length <= target * 1.5, `${file.bytes.length} bytes`);
  let next = 0;
  for (const file of files) {
    const ids = (
      await parquetReadObjects({ file: file.bytes.buffer.slice(0) as ArrayBuffer, columns: ["id"], compressors })
    ).map((r) => r.id);
    assert.equal(ids[0], BigInt(next));
    assert.equal(ids.length, Number(file.recordCount));
    // each file's metrics describe its own rows
    assert.equal(file.stats.valueCounts!.get(1), file.recordCount);
    assert.deepEqual(decodeSingleValue("long", file.stats.lowerBounds!.get(1)!), BigInt(next));
    assert.deepEqual(decodeSingleValue("long", file.stats.upperBounds!.get(1)!), BigInt(next + ids.length - 1));
    assert.equal(
      file.stats.nullValueCounts!.get(2),
      BigInt(Math.ceil((next + ids.length) / 10) - Math.ceil(next / 10)),
    );
    next += ids.length;
  }
  assert.equal(next, n);
});

test("each codec writes a file whose chunks name it; an empty table writes no file", () => {
  const table = build(rows);
  const expected: Record<ParquetCodec, string> = {
    zstd: "ZSTD",
    snappy: "SNAPPY",
    gzip: "GZIP",
    lz4: "LZ4_RAW",
    uncompressed: "UNCOMPRESSED",
  };
  for (const [codec, name] of Object.entries(expected)) {
    const [file] = writeDataFiles(table, schema, { codec: codec as ParquetCodec });
    const chunks = footer(file!.bytes).row_groups[0]!.columns;
    assert.ok(
      chunks.every((c) => c.meta_data!.codec === name),
      codec,
    );
  }
  assert.deepEqual(writeDataFiles(build([]), schema), []);
});
