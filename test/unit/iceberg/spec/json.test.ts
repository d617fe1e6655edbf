import assert from "node:assert/strict";
import { test } from "node:test";
import { errorKind } from "#src/iceberg/errors.ts";
import { array, int32, int64, object, parseDocument, readJsonDocument, stringMap } from "#src/iceberg/spec/json.ts";

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
