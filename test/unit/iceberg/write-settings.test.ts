// The write settings of a data file write: what the writer asks for wins and is to be recorded
// on the table, else the table's property, else the property's default; the same rule for the
// target file size and the codec.
import assert from "node:assert/strict";
import { test } from "node:test";
import { errorKind, resolveWriteSettings, writeSettingsProperties } from "#src/iceberg/index.ts";

const SIZE = "write.target-file-size-bytes";
const CODEC = "write.parquet.compression-codec";
const MIB = 1024 * 1024;

test("nothing asked, nothing set: the defaults, 128 MiB and zstd, and nothing to record", () => {
  assert.deepEqual(resolveWriteSettings({}, {}), {
    settings: { targetFileSizeBytes: 128 * MIB, compression: "zstd" },
    changes: {},
  });
});

test("nothing asked: the table's properties, for the size and the codec alike", () => {
  assert.deepEqual(resolveWriteSettings({}, { [SIZE]: String(4 * MIB), [CODEC]: "SNAPPY" }), {
    settings: { targetFileSizeBytes: 4 * MIB, compression: "snappy" },
    changes: {},
  });
  // A size that is no positive number reads as the default, as Java's PropertyUtil does.
  assert.equal(resolveWriteSettings({}, { [SIZE]: "-1" }).settings.targetFileSizeBytes, 128 * MIB);
  assert.equal(resolveWriteSettings({}, { [SIZE]: "big" }).settings.targetFileSizeBytes, 128 * MIB);
});

test("asked: wins over the table's property, for the size and the codec alike, and is to be recorded", () => {
  const table = { [SIZE]: String(4 * MIB), [CODEC]: "zstd", other: "kept" };
  assert.deepEqual(resolveWriteSettings({ targetFileSizeBytes: 2 * MIB, compression: "gzip" }, table), {
    settings: { targetFileSizeBytes: 2 * MIB, compression: "gzip" },
    changes: { [SIZE]: String(2 * MIB), [CODEC]: "gzip" },
  });
  // Only what is asked: the other setting stays the table's.
  assert.deepEqual(resolveWriteSettings({ compression: "uncompressed" }, table), {
    settings: { targetFileSizeBytes: 4 * MIB, compression: "uncompressed" },
    changes: { [CODEC]: "uncompressed" },
  });
});

test("asked what the table says already (in another spelling): nothing to record", () => {
  const table = { [SIZE]: "134217728", [CODEC]: "LZ4_RAW" };
  assert.deepEqual(resolveWriteSettings({ targetFileSizeBytes: 128 * MIB, compression: "lz4" }, table).changes, {});
});

test("asked the default on a table that sets nothing: recorded, so other engines use the same", () => {
  assert.deepEqual(resolveWriteSettings({ targetFileSizeBytes: 128 * MIB, compression: "zstd" }, {}).changes, {
    [SIZE]: String(128 * MIB),
    [CODEC]: "zstd",
  });
});

test("a codec the table sets and floe refuses: an error naming table and value, unless the writer asks another", () => {
  assert.throws(
    () => resolveWriteSettings({}, { [CODEC]: "brotli" }, "ns.t"),
    (error: unknown) => {
      assert.equal(errorKind(error), "unsupported");
      assert.match((error as Error).message, /^ns\.t: write\.parquet\.compression-codec brotli: Spark cannot read/);
      return true;
    },
  );
  assert.deepEqual(resolveWriteSettings({ compression: "zstd" }, { [CODEC]: "brotli" }, "ns.t"), {
    settings: { targetFileSizeBytes: 128 * MIB, compression: "zstd" },
    changes: { [CODEC]: "zstd" },
  });
});

test("the properties of a new table record both settings", () => {
  assert.deepEqual(writeSettingsProperties({ targetFileSizeBytes: 2 * MIB, compression: "snappy" }), {
    [SIZE]: String(2 * MIB),
    [CODEC]: "snappy",
  });
});
