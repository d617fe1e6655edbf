// write.parquet.compression-codec: every value floe accepts is written as that codec (lz4 as
// LZ4_RAW, the LZ4 that DuckDB, PyIceberg and Spark all read) and read back by floe's own key
// column reader; a value floe does not write is refused before any file is written.
import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { parquetMetadata } from "hyparquet";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { errorKind } from "#src/iceberg/errors.ts";
import { compressionCodec } from "#src/iceberg/parquet/compression-codec.ts";
import { readKeyColumns } from "#src/iceberg/parquet/key-column-reader.ts";
import { currentSchema } from "#src/iceberg/spec/table-metadata.ts";
import { scratchCatalog } from "../../../helpers/scratch-catalog.ts";
import { arrowRows } from "../../../helpers/tables.ts";

const PROPERTY = "write.parquet.compression-codec";
const scratch = scratchCatalog("codec");

const tableWith = (properties: Record<string, string>) => scratch.newTable({ properties });

test("the property's values map to the codecs floe writes, case-insensitively as Java reads them", () => {
  const codec = (value?: string) => compressionCodec(value === undefined ? {} : { [PROPERTY]: value }, "ns.t");
  assert.equal(codec(), "zstd");
  for (const value of ["zstd", "snappy", "gzip", "lz4", "uncompressed"]) assert.equal(codec(value), value);
  assert.equal(codec("ZSTD"), "zstd");
  assert.equal(codec("lz4_raw"), "lz4");
  assert.equal(codec("LZ4_RAW"), "lz4");
});

test("brotli and lzo are unsupported, anything else is not a codec: refused naming table and value", () => {
  const refusal = (value: string) => {
    try {
      compressionCodec({ [PROPERTY]: value }, "ns.t");
    } catch (error) {
      return [errorKind(error), (error as Error).message];
    }
    return undefined;
  };
  const accepted = "use zstd, snappy, gzip, lz4, uncompressed";
  assert.deepEqual(refusal("brotli"), [
    "unsupported",
    `ns.t: ${PROPERTY} brotli: Spark cannot read Brotli-compressed Parquet (its Parquet library has no Brotli codec); ${accepted}`,
  ]);
  assert.deepEqual(refusal("lzo"), [
    "unsupported",
    `ns.t: ${PROPERTY} lzo: floe cannot write LZO-compressed Parquet; ${accepted}`,
  ]);
  assert.deepEqual(refusal("zip"), ["validation", `ns.t: ${PROPERTY} "zip" is not a Parquet codec; ${accepted}`]);
  assert.deepEqual(refusal(""), ["validation", `ns.t: ${PROPERTY} "" is not a Parquet codec; ${accepted}`]);
});

test("a table's codec is honoured, lz4 too (it used to come out uncompressed), and read back", async () => {
  const expected = {
    zstd: "ZSTD",
    snappy: "SNAPPY",
    gzip: "GZIP",
    lz4: "LZ4_RAW",
    lz4_raw: "LZ4_RAW",
    uncompressed: "UNCOMPRESSED",
  };
  const rows = Array.from({ length: 500 }, (_, i) => ({ id: BigInt(i), name: `n${i % 7}`, amount: i / 2 }));
  for (const [value, codec] of Object.entries(expected)) {
    const table = await tableWith({ [PROPERTY]: value });
    const [file] = await writeDataFiles(table, arrowRows(table, rows));
    const bytes = await table.io.read(file!.filePath);
    const footer = parquetMetadata(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    );
    const codecs = new Set(footer.row_groups.flatMap((g) => g.columns.map((c) => c.meta_data!.codec)));
    assert.deepEqual([...codecs], [codec], value);
    const keys = await readKeyColumns(bytes, currentSchema(table.metadata), [1, 2], file!.filePath);
    assert.deepEqual(
      keys.columns.get(1),
      rows.map((r) => r.id),
      value,
    );
    assert.deepEqual(
      keys.columns.get(2),
      rows.map((r) => r.name),
      value,
    );
  }
});

test("a codec floe does not write fails the write before any file is written", async () => {
  const table = await tableWith({ [PROPERTY]: "brotli" });
  await assert.rejects(
    writeDataFiles(table, arrowRows(table, [{ id: 1n, name: "a", amount: 1 }])),
    (error: unknown) => {
      assert.equal(errorKind(error), "unsupported");
      assert.match((error as Error).message, new RegExp(`^ns\\.${table.identifier.name}: ${PROPERTY} brotli: `));
      return true;
    },
  );
  const dataDir = join(table.metadata.location, "data");
  assert.deepEqual(await readdir(dataDir).catch(() => []), []);
});
