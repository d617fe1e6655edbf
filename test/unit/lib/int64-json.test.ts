import assert from "node:assert/strict";
import { test } from "node:test";
import { parseJson, stringifyJson } from "#src/lib/int64-json.ts";

test("int64 literals beyond 2^53 survive a parse and stringify round trip", () => {
  const text = '{"snapshot-id":9007199254740993,"small":5,"ratio":1.5,"negative":-9223372036854775808}';
  const value = parseJson(text) as Record<string, unknown>;
  assert.equal(value["snapshot-id"], 9007199254740993n);
  assert.equal(value.small, 5);
  assert.equal(value.negative, -9223372036854775808n);
  assert.equal(stringifyJson(value), text);
});

test("bigints are written as bare literals, or as strings for readers whose numbers are doubles", () => {
  const value = { id: 9223372036854775807n, n: 1 };
  assert.equal(stringifyJson(value), '{"id":9223372036854775807,"n":1}');
  assert.equal(stringifyJson(value, { bigints: "strings" }), '{"id":"9223372036854775807","n":1}');
  assert.equal(stringifyJson([1n], { indent: 2 }), "[\n  1\n]");
});

test("parseJson hands every number that stays a number to the visitor, with its holder and source", () => {
  const seen: unknown[] = [];
  const value = parseJson('{"a":1.0,"b":[2e3],"c":12345678901234567890}', (holder, key, n, source) =>
    seen.push([Array.isArray(holder) ? "array" : "object", key, n, source]),
  );
  assert.deepEqual(value, { a: 1, b: [2000], c: 12345678901234567890n });
  assert.deepEqual(seen, [
    ["object", "a", 1, "1.0"],
    ["array", "0", 2000, "2e3"],
  ]);
});
