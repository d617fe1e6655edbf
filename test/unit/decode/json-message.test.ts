// Every outcome of decoding a message value: record, tombstone, and each bad-message kind.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type DecodedMessage, decodeJsonMessage } from "../../../src/decode/json-message.ts";

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
