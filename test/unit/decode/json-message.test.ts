// Every outcome of decoding a message value: record, tombstone, and each bad-message kind.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type DecodedMessage, decodeJsonMessage } from "#src/decode/json-message.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);

function record(message: DecodedMessage) {
  assert.equal(message.kind, "record", message.kind === "bad" ? message.detail : undefined);
  return message as Extract<DecodedMessage, { kind: "record" }>;
}

function badReason(message: DecodedMessage): string {
  assert.equal(message.kind, "bad");
  return (message as Extract<DecodedMessage, { kind: "bad" }>).reason;
}

test("a JSON object is a record, its numbers as JSON.parse gives them", () => {
  const decoded = record(decodeJsonMessage(utf8('{"id":1,"amount":99.19,"name":"São Paulo","tags":[1,2]}')));
  assert.deepEqual(decoded.record, { id: 1, amount: 99.19, name: "São Paulo", tags: [1, 2] });
  assert.equal(decoded.wholeDecimals, undefined);
});

test("a null value is a tombstone, not an error", () => {
  assert.deepEqual(decodeJsonMessage(null), { kind: "tombstone" });
});

test("invalid UTF-8 is a bad message of kind invalid-utf8", () => {
  assert.equal(badReason(decodeJsonMessage(new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]))), "invalid-utf8");
});

test("text that is not JSON, and an empty value, are not-json", () => {
  assert.equal(badReason(decodeJsonMessage(utf8("hello"))), "not-json");
  assert.equal(badReason(decodeJsonMessage(utf8('{"id":1'))), "not-json");
  const empty = decodeJsonMessage(new Uint8Array(0));
  assert.equal(badReason(empty), "not-json");
  assert.match((empty as { detail: string }).detail, /empty/);
});

test("JSON that is not an object is not-object, whatever it is", () => {
  for (const text of ["[1,2]", "3", '"text"', "null", "true"]) {
    assert.equal(badReason(decodeJsonMessage(utf8(text))), "not-object", text);
  }
  assert.match((decodeJsonMessage(utf8("[1]")) as { detail: string }).detail, /a JSON array/);
});

test("a Confluent-framed value without a schema registry names the schema id", () => {
  const framed = new Uint8Array([0, 0, 0, 1, 0x2c, 0x02, 0x06, 0x66, 0x6f, 0x6f]);
  const decoded = decodeJsonMessage(framed);
  assert.equal(badReason(decoded), "confluent-framed-without-registry");
  assert.match((decoded as { detail: string }).detail, /schema id 300/);
});

test("a subarray of a larger buffer decodes from its own bytes", () => {
  const bytes = utf8('xx{"a":1}yy');
  assert.deepEqual(record(decodeJsonMessage(bytes.subarray(2, 9))).record, { a: 1 });
});

test("integers beyond 2^53 stay exact as bigint", () => {
  const decoded = record(decodeJsonMessage(utf8('{"id":9007199254740993,"small":42,"neg":-12345678901234567890}')));
  assert.equal(decoded.record.id, 9007199254740993n);
  assert.equal(decoded.record.small, 42);
  assert.equal(decoded.record.neg, -12345678901234567890n);
});

test("whole numbers written as decimals are flagged for inference, top level only", () => {
  const decoded = record(decodeJsonMessage(utf8('{"amount":1299.0,"exp":1e3,"n":{"x":2.0},"t":"04.000Z","id":7}')));
  assert.equal(decoded.record.amount, 1299);
  assert.deepEqual([...(decoded.wholeDecimals ?? [])].sort(), ["amount", "exp"]);
});

test("a number beyond the range of a double, or rounded to zero, is out-of-range, nested or not", () => {
  for (const [text, field] of [
    ['{"a":1e400}', "a"],
    ['{"id":1,"a":-1e400}', "a"],
    ['{"a":{"b":[2,1E+999]}}', "a"],
    ['{"tiny":1e-400}', "tiny"],
    [`{"long":${"9".repeat(400)}.5}`, "long"],
  ] as const) {
    const decoded = decodeJsonMessage(utf8(text));
    assert.equal(badReason(decoded), "out-of-range", text);
    assert.match((decoded as { detail: string }).detail, new RegExp(`^field "${field}": the number `), text);
  }
  // Zeros, and the extremes a double holds, are numbers.
  const ok = record(decodeJsonMessage(utf8('{"z":0e10,"n":-0.0,"max":1.7976931348623157e308,"min":5e-324}')));
  assert.deepEqual(ok.record, { z: 0, n: -0, max: Number.MAX_VALUE, min: Number.MIN_VALUE });
  // An integer beyond the long range is exact, and its column decides.
  assert.equal(record(decodeJsonMessage(utf8(`{"big":1${"0".repeat(400)}}`))).record.big, 10n ** 400n);
});

test("a value nested more than 1000 levels deep is too-deep, whichever way it is parsed", () => {
  const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
  assert.ok(Array.isArray(record(decodeJsonMessage(utf8(`{"a":${nested(1000)}}`))).record.a));
  for (const text of [
    `{"a":1,"deep":${nested(1001)}}`,
    `{"deep":${nested(10_000)}}`,
    // 16 digits send the text through the reviver, which recurses.
    `{"id":12345678901234567,"deep":${nested(10_000)}}`,
    `{"deep":${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`,
  ]) {
    const decoded = decodeJsonMessage(utf8(text));
    assert.equal(badReason(decoded), "too-deep", text.slice(0, 30));
    assert.equal((decoded as { detail: string }).detail, 'field "deep" is nested more than 1000 levels deep');
  }
  // Not JSON at all stays not-json, however deep it starts.
  assert.equal(badReason(decodeJsonMessage(utf8(`{"a":${"[".repeat(100_000)}`))), "not-json");
});
