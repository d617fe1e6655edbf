import assert from "node:assert/strict";
import { test } from "node:test";
import { int64, parseJson, stringifyJson } from "../../../../src/iceberg/spec/json.ts";

test("int64 literals beyond 2^53 survive a parse and stringify round trip", () => {
  const text = '{"snapshot-id":9007199254740993,"small":5,"ratio":1.5,"negative":-9223372036854775808}';
  const value = parseJson(text) as Record<string, unknown>;
  assert.equal(value["snapshot-id"], 9007199254740993n);
  assert.equal(value.small, 5);
  assert.equal(value.negative, -9223372036854775808n);
  assert.equal(stringifyJson(value), text);
});

test("int64() widens numbers, bigints and digit strings and names the field it rejects", () => {
  assert.equal(int64(7, "x"), 7n);
  assert.equal(int64(7n, "x"), 7n);
  assert.equal(int64("-12", "x"), -12n);
  assert.throws(() => int64(1.5, "sequence-number"), /sequence-number: expected an int64/);
});
