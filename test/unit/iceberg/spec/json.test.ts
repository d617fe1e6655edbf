import assert from "node:assert/strict";
import { test } from "node:test";
import { errorKind } from "../../../../src/iceberg/errors.ts";
import {
  array,
  int32,
  int64,
  object,
  parseDocument,
  parseJson,
  readJsonDocument,
  stringifyJson,
  stringMap,
} from "../../../../src/iceberg/spec/json.ts";

test("int64 literals beyond 2^53 survive a parse and stringify round trip", () => {
  const text = '{"snapshot-id":9007199254740993,"small":5,"ratio":1.5,"negative":-9223372036854775808}';
  const value = parseJson(text) as Record<string, unknown>;
  assert.equal(value["snapshot-id"], 9007199254740993n);
  assert.equal(value.small, 5);
  assert.equal(value.negative, -9223372036854775808n);
  assert.equal(stringifyJson(value), text);
});

test("the int64 schema widens numbers and bigints and names what it rejects", () => {
  assert.equal(int64.parse(7), 7n);
  assert.equal(int64.parse(9007199254740993n), 9007199254740993n);
  for (const [bad, got] of [
    [1.5, "1.5"],
    ["-12", 'the string "-12"'],
    [2n ** 63n, "9223372036854775808"],
    [undefined, "nothing"],
  ] as const) {
    const result = int64.safeParse(bad);
    assert.equal(result.success, false);
    assert.equal(result.error?.issues[0]?.message, `expected a 64-bit integer, got ${got}`);
  }
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

test("a document that does not match its schema is corrupt, naming the document and the JSON path", () => {
  const schema = object({ "snapshot-id": int64, properties: stringMap, list: array(int32) });
  assert.throws(
    () => parseDocument(schema, { "snapshot-id": "x", properties: { "a b": 1 }, list: [1, "2"] }, "/t/v1.json"),
    (e: unknown) => {
      assert.equal(errorKind(e), "corrupt");
      assert.equal(
        (e as Error).message,
        '/t/v1.json: snapshot-id: expected a 64-bit integer, got the string "x"; properties["a b"]: ' +
          'expected a string, got 1; list[1]: expected a 32-bit integer, got the string "2"',
      );
      return true;
    },
  );
  assert.throws(
    () => readJsonDocument(schema, "{nope", "getConfig"),
    (e: unknown) => errorKind(e) === "corrupt" && /^getConfig: not JSON \(/.test((e as Error).message),
  );
});
