// The dedup-key grammar, parsed once when the job loads: a column, or a field of the decoded key.
import assert from "node:assert/strict";
import { test } from "node:test";
import { dedupKeyText, isInMessageKey, keyValueIn, parseDedupKey, setKeyValue } from "#src/job/dedup-key.ts";

test("a dedup key is a column, the message key's column, or a field of the decoded key", () => {
  assert.deepEqual(parseDedupKey("id"), { kind: "column", column: "id" });
  assert.deepEqual(parseDedupKey("_kafka_key"), { kind: "column", column: "_kafka_key" });
  assert.deepEqual(parseDedupKey("_kafka_key.id"), { kind: "kafka-key-field", field: "id" });
  assert.deepEqual(parseDedupKey("_kafka_key.a.b"), { kind: "kafka-key-field", field: "a.b" });
  // Only the prefix with its dot names the key: a column may start with the same letters.
  assert.deepEqual(parseDedupKey("_kafka_keyring"), { kind: "column", column: "_kafka_keyring" });
});

test("the text of a parsed key is the job file's", () => {
  for (const text of ["id", "_kafka_key", "_kafka_key.id", "_kafka_keyring"]) {
    assert.equal(dedupKeyText(parseDedupKey(text)), text);
  }
});

test("only the message key and its fields are in what a tombstone carries", () => {
  assert.deepEqual(
    ["id", "_kafka_key", "_kafka_key.id"].map((k) => isInMessageKey(parseDedupKey(k))),
    [false, true, true],
  );
});

test("a column key's value: the top-level field of its name, else the field at its path through structs", () => {
  const record = { id: 1, customer: { id: 7, address: { zip: "75001" } }, tags: ["a"], "a.b": 3 };
  assert.equal(keyValueIn(record, "id"), 1);
  assert.equal(keyValueIn(record, "customer.id"), 7);
  assert.equal(keyValueIn(record, "customer.address.zip"), "75001");
  // A top-level field named with the dots wins over a path.
  assert.equal(keyValueIn(record, "a.b"), 3);
  assert.equal(keyValueIn(record, "customer.name"), undefined);
  assert.equal(keyValueIn(record, "tags.0"), undefined);
  assert.equal(keyValueIn({ customer: null }, "customer.id"), undefined);
  assert.equal(keyValueIn({ m: new Map([["id", 1]]) }, "m.id"), undefined);
  const keys: Record<string, unknown> = {};
  setKeyValue(keys, "customer.id", 7, true);
  setKeyValue(keys, "customer.address.zip", "75001", true);
  setKeyValue(keys, "a.b", 3, false);
  assert.deepEqual(keys, { customer: { id: 7, address: { zip: "75001" } }, "a.b": 3 });
});
