import assert from "node:assert/strict";
import { test } from "node:test";
import { applyLogicalTypes, decimalText, logicalValue } from "#src/decode/connect-logical-types.ts";
import { timestampMicros } from "#src/decode/timestamp.ts";
import { decimalBytes } from "../../helpers/debezium-events.ts";

test("Debezium's time types: days to a date text, epoch ms/µs/ns to timestamps that timestamp.ts reads, times of day", () => {
  assert.equal(logicalValue("io.debezium.time.Date", 19723), "2024-01-01");
  assert.equal(logicalValue("io.debezium.time.Date", -1), "1969-12-31");
  assert.equal(logicalValue("org.apache.kafka.connect.data.Date", 0), "1970-01-01");
  const ts = logicalValue("io.debezium.time.Timestamp", 1704067200123) as string;
  assert.equal(ts, "2024-01-01T00:00:00.123000Z");
  assert.equal(timestampMicros(ts), 1704067200123000);
  assert.equal(logicalValue("io.debezium.time.MicroTimestamp", 1704067200123456), "2024-01-01T00:00:00.123456Z");
  assert.equal(logicalValue("io.debezium.time.NanoTimestamp", 1704067200123456789n), "2024-01-01T00:00:00.123456Z");
  assert.equal(logicalValue("io.debezium.time.MicroTimestamp", -1), "1969-12-31T23:59:59.999999Z");
  assert.equal(logicalValue("io.debezium.time.MicroTime", 3_723_000_004), "01:02:03.000004");
  assert.equal(logicalValue("io.debezium.time.Time", 3_723_005), "01:02:03.005000");
  // ZonedTimestamp is RFC 3339 already: kept, and a timestamptz to inference.
  assert.equal(logicalValue("io.debezium.time.ZonedTimestamp", "2024-01-01T00:00:00.5Z"), undefined);
});

test("Connect's Decimal (base64 two's complement and a scale) and Debezium's VariableScaleDecimal to exact decimal text", () => {
  for (const text of ["0.00", "12.50", "-12.50", "1.28", "-1.28", "-0.01", "99999999.99", "-99999999.99"]) {
    assert.equal(decimalText(decimalBytes(text), 2), text, text);
  }
  assert.equal(decimalText("AQ==", 0), "1");
  assert.equal(decimalText("AQ==", -2), "100");
  assert.equal(logicalValue("org.apache.kafka.connect.data.Decimal", decimalBytes("-7.25"), { scale: "2" }), "-7.25");
  assert.equal(logicalValue("io.debezium.data.VariableScaleDecimal", { scale: 3, value: "MDk=" }), "12.345");
});

test("applyLogicalTypes rewrites the fields its struct schema names, and leaves values of another form alone", () => {
  const record = { id: 1, born: 0, at: "not a number", balance: decimalBytes("3.10"), note: null, u: "A-B" };
  applyLogicalTypes(record, {
    type: "struct",
    fields: [
      { field: "id", type: "int32" },
      { field: "born", type: "int32", name: "io.debezium.time.Date" },
      { field: "at", type: "int64", name: "io.debezium.time.MicroTimestamp" },
      { field: "balance", type: "bytes", name: "org.apache.kafka.connect.data.Decimal", parameters: { scale: "2" } },
      { field: "note", type: "string", name: "io.debezium.data.Json" },
      { field: "u", type: "string", name: "io.debezium.data.Uuid" },
    ],
  });
  assert.deepEqual(record, { id: 1, born: "1970-01-01", at: "not a number", balance: "3.10", note: null, u: "A-B" });
});
