// target_engines against the streams' modes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "#src/job/config-error.ts";
import { parseJob } from "#src/job/load-job.ts";
import { ENGINE_SUPPORT, engineConflicts, TARGET_ENGINES } from "#src/job/target-engines.ts";

const job = (engines: string, streams: string, pattern = "") => `name: j
source:
  kafka:
    bootstrap_servers: [k:9092]
${pattern}destination:
  iceberg:
    target_engines: [${engines}]
streams:
${streams}`;

test("engines that read deletion vectors accept upsert streams", () => {
  const readers = TARGET_ENGINES.filter((e) => ENGINE_SUPPORT[e].deletionVectors);
  assert.deepEqual(readers, ["databricks", "duckdb", "spark", "snowflake", "trino", "pyiceberg"]);
  const parsed = parseJob(job(readers.join(", "), "  orders: {mode: upsert, dedup_keys: [id]}\n"), "job.yaml");
  assert.deepEqual(parsed.destination.targetEngines, readers);
});

test("an engine without deletion vectors and an upsert stream: an error naming both", () => {
  const text = job("duckdb, athena", "  orders: {mode: upsert, dedup_keys: [id]}\n  clicks: {mode: append}\n");
  assert.throws(
    () => parseJob(text, "job.yaml"),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.issues.length, 1);
      const issue = error.issues[0]!;
      assert.deepEqual(issue.path, ["destination", "iceberg", "target_engines", 1]);
      assert.equal(issue.line, 7);
      assert.match(
        issue.message,
        /^athena .* deletion vectors .*\(upsert streams: orders\).*Use mode: append for that stream, or remove athena\.$/,
      );
      return true;
    },
  );
});

test("the same engines are fine when every stream appends", () => {
  const parsed = parseJob(job("athena, redshift, bigquery, iceberg-rust", "  clicks: {mode: append}\n"), "job.yaml");
  assert.equal(parsed.destination.targetEngines.length, 4);
});

test("an upsert default_stream counts when a pattern selects topics", () => {
  const conflicts = engineConflicts(["iceberg-rust", "spark", "redshift"], ["orders", "default_stream"]);
  assert.deepEqual(
    conflicts.map((c) => [c.engine, c.index, c.upsertStreams]),
    [
      ["iceberg-rust", 0, ["orders", "default_stream"]],
      ["redshift", 2, ["orders", "default_stream"]],
    ],
  );
  const text = `${job("athena", "  clicks: {mode: append}\n", "    topic_pattern: .*\n")}default_stream: {mode: upsert, dedup_keys: [_kafka_key]}\n`;
  assert.throws(() => parseJob(text, "job.yaml"), /upsert streams: default_stream/);
});

test("an upsert default_stream without a pattern applies to no topic, so it is not in the way", () => {
  const text = `${job("athena", "  clicks: {mode: append}\n")}default_stream: {mode: upsert, dedup_keys: [id]}\n`;
  const parsed = parseJob(text, "job.yaml");
  assert.deepEqual(parsed.destination.targetEngines, ["athena"]);
  assert.equal(parsed.defaultBinding.mode, "upsert");
});
