// JSON values converted to the representation each column type stores.
import assert from "node:assert/strict";
import { test } from "node:test";
import { columnConverter } from "#src/decode/column-value.ts";

test("long and timestamptz values are numbers while safe, bigints beyond", () => {
  const long = columnConverter("long");
  assert.equal(long(42), 42);
  assert.equal(long(9007199254740993n), 9007199254740993n);
  const ts = columnConverter("timestamptz");
  assert.equal(ts("2026-10-29T15:22:04+05:30"), Date.parse("2026-10-29T09:52:04Z") * 1000);
  assert.equal(ts("9999-12-31T00:00:00Z"), 253402214400000000n);
  assert.throws(() => ts("not a time"), TypeError);
});

test("doubles are numbers; nested values become JSON text, exact for big integers", () => {
  assert.equal(columnConverter("double")(99.19), 99.19);
  assert.equal(columnConverter("double")(2n ** 64n), 2 ** 64);
  const text = columnConverter("string");
  assert.equal(text("plain"), "plain");
  assert.equal(text({ a: [1, "b"] }), '{"a":[1,"b"]}');
  assert.equal(text({ id: 9007199254740993n }), '{"id":9007199254740993}');
  assert.equal(columnConverter("boolean")(true), true);
});

test("types floe does not write from JSON are refused when the converter is built", () => {
  assert.throws(() => columnConverter({ kind: "decimal", precision: 10, scale: 2 }), /decimal\(10, 2\)/);
  assert.throws(() => columnConverter("uuid"), /uuid/);
});

test("a string column holds any other value as its JSON text", () => {
  const text = columnConverter("string");
  assert.equal(text(1), "1");
  assert.equal(text(99.19), "99.19");
  assert.equal(text(18446744073709551615n), "18446744073709551615");
  assert.equal(text(true), "true");
});
