// The dedup-key grammar, parsed once when the job loads: a column, or a field of the decoded key.
import assert from "node:assert/strict";
import { test } from "node:test";
import { dedupKeyText, isInMessageKey, parseDedupKey } from "#src/job/dedup-key.ts";

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
