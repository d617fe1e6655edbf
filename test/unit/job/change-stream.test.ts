import assert from "node:assert/strict";
import { test } from "node:test";
import { DEBEZIUM_ENVELOPE } from "#src/decode/cdc-envelope.ts";
import { ConfigError } from "#src/job/config-error.ts";
import { parseJob } from "#src/job/load-job.ts";

const job = (stream: string) =>
  `name: j\nsource:\n  kafka:\n    bootstrap_servers: [k:9092]\nstreams:\n  pg.public.t: ${stream}\n`;

function problems(text: string): string[] {
  try {
    parseJob(text, "job.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  }
  assert.fail("expected a ConfigError");
}

test("format debezium: a JSON stream in Debezium's envelope, keyed by default on the whole Kafka key, or on key_columns", () => {
  const plain = parseJob(job("{mode: upsert, format: debezium}"), "job.yaml").bindings.get("pg.public.t")!;
  assert.equal(plain.format, "json");
  assert.deepEqual(plain.envelope, DEBEZIUM_ENVELOPE);
  assert.deepEqual(plain.dedupKeys, [{ kind: "column", column: "_kafka_key" }]);
  const keyed = parseJob(
    job("{mode: upsert, format: debezium, key_columns: {id: order_id}, cdc_columns: [op, source.lsn]}"),
    "job.yaml",
  ).bindings.get("pg.public.t")!;
  assert.deepEqual(keyed.dedupKeys, [{ kind: "column", column: "order_id" }]);
  assert.deepEqual([...keyed.keyColumns], [["id", "order_id"]]);
  assert.deepEqual(keyed.envelope?.columns, [
    { column: "_cdc_op", path: ["op"] },
    { column: "_cdc_lsn", path: ["source", "lsn"] },
  ]);
  // Explicit dedup_keys win over the default.
  const explicit = parseJob(job("{mode: upsert, format: debezium, dedup_keys: [id]}"), "job.yaml").bindings.get(
    "pg.public.t",
  )!;
  assert.deepEqual(explicit.dedupKeys, [{ kind: "column", column: "id" }]);
});

test("a change stream's settings that do not go together are errors at their paths", () => {
  assert.deepEqual(problems(job("{mode: append, format: debezium}")), [
    "streams.pg.public.t.mode: a change stream (format debezium or envelope) needs mode: upsert; in append mode each delete would add a row",
  ]);
  assert.deepEqual(
    problems(job("{mode: upsert, format: json_schema, envelope: debezium, dedup_keys: [id]}")).slice(0, 1),
    ["streams.pg.public.t.envelope: only with format json, debezium, avro or protobuf, not json_schema"],
  );
  assert.ok(
    !problems(job("{mode: upsert, format: protobuf, envelope: debezium, dedup_keys: [id]}")).some((p) =>
      p.includes(".envelope:"),
    ),
  );
  assert.deepEqual(problems(job("{mode: upsert, dedup_keys: [id], cdc_columns: [op]}")), [
    "streams.pg.public.t.cdc_columns: only in a change stream (format debezium or envelope)",
  ]);
  assert.deepEqual(problems(job("{mode: upsert, format: debezium, cdc_columns: [source.lsn, lsn]}")), [
    "streams.pg.public.t.cdc_columns.1: makes column _cdc_lsn, as another does",
  ]);
  assert.deepEqual(problems(job("{mode: upsert, format: debezium, key_columns: {id: _kafka_key, b: x, c: x}}")), [
    "streams.pg.public.t.key_columns.id: _kafka_key is a name floe reserves",
    "streams.pg.public.t.key_columns.c: column x is named twice",
  ]);
  assert.deepEqual(problems(job("{mode: upsert, format: debezium, envelope: {position: [source..lsn]}}")), [
    "streams.pg.public.t.envelope.position.0: a field name, with dots between levels (source.lsn)",
  ]);
});
