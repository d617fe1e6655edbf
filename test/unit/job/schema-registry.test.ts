// source.kafka.schema_registry and the streams' format / key_format in the job file.
import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";
import { ConfigError } from "#src/job/config-error.ts";
import { parseJob } from "#src/job/load-job.ts";

const job = (registry: string, streams: string) => `
name: j
source:
  kafka:
    bootstrap_servers: [k:9092]
${registry}
streams:
${streams}
`;

function problems(text: string): string[] {
  try {
    parseJob(text, "/jobs/job.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map((i) => `${i.line}: ${i.path.join(".")}: ${i.message}`);
  }
  assert.fail("expected a ConfigError");
}

test("a registry with basic auth: the password is a Secret; a relative CA is the job file's", () => {
  const parsed = parseJob(
    job(
      "    schema_registry:\n      url: https://psrc-123.us-east-2.aws.confluent.cloud\n      auth: {basic: {username: KEY, password: s3cr3t}}\n      tls: {ca: certs/ca.pem}",
      "  orders: {mode: upsert, dedup_keys: [id], format: avro}",
    ),
    "/jobs/job.yaml",
  );
  const registry = parsed.source.schemaRegistry!;
  assert.equal(registry.url, "https://psrc-123.us-east-2.aws.confluent.cloud");
  assert.equal(registry.auth.kind, "basic");
  assert.ok(registry.auth.kind === "basic" && registry.auth.password.reveal() === "s3cr3t");
  assert.equal(registry.tls?.ca, "/jobs/certs/ca.pem");
  assert.equal(registry.requestTimeoutMs, 30_000);
  assert.doesNotMatch(inspect(parsed, { depth: 10 }) + JSON.stringify(registry), /s3cr3t/);
  assert.equal(parsed.bindings.get("orders")!.format, "avro");
  assert.equal(parsed.bindings.get("orders")!.keyFormat, "bytes");
});

test("auth: none by default, or a bearer token; format json by default", () => {
  const none = parseJob(job("    schema_registry: {url: 'http://127.0.0.1:8081'}", "  t: {mode: append}"), "j.yaml");
  assert.deepEqual(none.source.schemaRegistry!.auth, { kind: "none" });
  assert.equal(none.bindings.get("t")!.format, "json");
  const bearer = parseJob(
    job(
      "    schema_registry: {url: 'http://r:8081', auth: {bearer: {token: tok}}}",
      "  t: {mode: append, format: protobuf}",
    ),
    "j.yaml",
  );
  assert.ok(bearer.source.schemaRegistry!.auth.kind === "bearer");
  assert.doesNotMatch(JSON.stringify(bearer.source.schemaRegistry), /"tok"/);
});

test("avro and protobuf need a registry; their columns only declared json; key fields need key_format", () => {
  assert.deepEqual(problems(job("", "  t: {mode: append, format: avro}\n  u: {mode: append, key_format: protobuf}")), [
    "8: streams.t.format: avro, protobuf and json_schema need source.kafka.schema_registry, where the schemas are",
    "9: streams.u.key_format: avro, protobuf and json_schema need source.kafka.schema_registry, where the schemas are",
  ]);
  const registry = "    schema_registry: {url: 'http://r:8081'}";
  assert.deepEqual(problems(job(registry, "  t: {mode: append, format: avro, columns: {a: long, b: json, c: map}}")), [
    "8: streams.t.columns.a: only json (the field's JSON text) for an avro stream: its schema types its columns",
    "8: streams.t.columns.c: only json (the field's JSON text) for an avro stream: its schema types its columns",
  ]);
  const text = parseJob(job(registry, "  t: {mode: append, format: protobuf, columns: {b: json}}"), "j.yaml");
  assert.deepEqual([...text.bindings.get("t")!.columns], [["b", "json"]]);
  assert.deepEqual(problems(job(registry, "  t: {mode: upsert, dedup_keys: [_kafka_key.id]}")), [
    "8: streams.t.dedup_keys.0: a field of the key needs key_format: avro, protobuf or json_schema (the key's schema names its fields)",
  ]);
  const keyed = parseJob(job(registry, "  t: {mode: upsert, dedup_keys: [_kafka_key.id], key_format: avro}"), "j.yaml");
  assert.deepEqual(keyed.bindings.get("t")!.dedupKeys, [{ kind: "kafka-key-field", field: "id" }]);
  assert.deepEqual(problems(job("    schema_registry: {url: 'ftp://r'}", "  t: {mode: append}")).length, 1);
  assert.deepEqual(
    problems(job("    schema_registry: {url: 'http://r', auth: basic}", "  t: {mode: append}")).length,
    1,
  );
});
