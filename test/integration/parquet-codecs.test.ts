// Every value of write.parquet.compression-codec that floe accepts gives data files that DuckDB,
// PyIceberg and Spark read back (lz4 is written as LZ4_RAW: Parquet's older LZ4, what Iceberg
// Java writes for lz4, is refused by DuckDB), through the REST fixture catalog.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { parquetMetadata } from "hyparquet";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { errorKind } from "#src/iceberg/errors.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { arrowRows, createRestTable } from "../helpers/tables.ts";

const run = `codecs_${process.pid}_${Date.now()}`;
let readers: Readers;

before(async () => {
  readers = await startReaders();
});
after(() => readers?.close());

const rows = Array.from({ length: 3000 }, (_, i) => ({ id: BigInt(i), name: `customer ${i % 97}`, amount: i / 8 }));

const written = {
  zstd: "ZSTD",
  snappy: "SNAPPY",
  gzip: "GZIP",
  lz4: "LZ4_RAW",
  lz4_raw: "LZ4_RAW",
  uncompressed: "UNCOMPRESSED",
};

for (const [value, codec] of Object.entries(written)) {
  test(`write.parquet.compression-codec ${value}: ${codec} files, read by all three engines`, async () => {
    const namespace = `${run}_${value}`;
    const { catalog, table } = await createRestTable(namespace, "orders");
    try {
      await table.setProperties({ "write.parquet.compression-codec": value });
      const files = await writeDataFiles(table, arrowRows(table, rows));
      for (const file of files) {
        const bytes = await table.io.read(file.filePath);
        const footer = parquetMetadata(
          bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
        );
        for (const group of footer.row_groups) {
          for (const chunk of group.columns) assert.equal(chunk.meta_data!.codec, codec, file.filePath);
        }
      }
      await table
        .newFastAppend()
        .appendFile(...files)
        .commit();
      await readers.assertRows(restTable(namespace, "orders"), rows);
    } finally {
      await catalog.close();
    }
  });
}

test("write.parquet.compression-codec brotli is refused before a file is written: Spark could not read it", async () => {
  const namespace = `${run}_brotli`;
  const { catalog, table } = await createRestTable(namespace, "orders");
  try {
    await table.setProperties({ "write.parquet.compression-codec": "brotli" });
    await assert.rejects(writeDataFiles(table, arrowRows(table, rows)), (error: unknown) => {
      assert.equal(errorKind(error), "unsupported", String(error));
      assert.match((error as Error).message, /brotli: Spark cannot read Brotli-compressed Parquet/);
      return true;
    });
  } finally {
    await catalog.close();
  }
});
