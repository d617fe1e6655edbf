// The job file's cluster: setting: absent means no membership; its durations have defaults, and
// a heartbeat too slow for the session is reported with its path.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "#src/job/config-error.ts";
import { parseJob } from "#src/job/load-job.ts";

const job = (cluster: string) => `name: j\nsource: {kafka: {bootstrap_servers: [k:1], topic_pattern: x}}\n${cluster}`;

test("no cluster: key: the job never joins its group", () => {
  assert.equal(parseJob(job(""), "job.yaml").cluster, undefined);
});

test("cluster: {} takes the defaults; each duration has its unit", () => {
  assert.deepEqual(parseJob(job("cluster: {}"), "job.yaml").cluster, {
    sessionTimeoutMs: 30_000,
    heartbeatIntervalMs: 3000,
    rebalanceTimeoutMs: 60_000,
  });
  assert.deepEqual(
    parseJob(job("cluster: {session_timeout: 10s, heartbeat_interval: 1s, rebalance_timeout: 2m}"), "job.yaml").cluster,
    { sessionTimeoutMs: 10_000, heartbeatIntervalMs: 1000, rebalanceTimeoutMs: 120_000 },
  );
});

test("a heartbeat interval above a third of the session timeout names its path", () => {
  assert.throws(
    () => parseJob(job("cluster: {session_timeout: 6s, heartbeat_interval: 3s}"), "job.yaml"),
    (error: unknown) =>
      error instanceof ConfigError && /cluster\.heartbeat_interval/.test(error.message) && /third/.test(error.message),
  );
  assert.throws(
    () => parseJob(job("cluster: {members: 3}"), "job.yaml"),
    (error: unknown) => error instanceof ConfigError && /cluster/.test(error.message),
  );
});

test("an upsert binding with cluster: is accepted; order_by orders a key's messages, for upsert only", () => {
  const text =
    "name: j\nsource: {kafka: {bootstrap_servers: [k:1]}}\nstreams: {t: {mode: upsert, dedup_keys: [id], order_by: _kafka_timestamp}, u: {mode: upsert, dedup_keys: [id]}}\ncluster: {}";
  const parsed = parseJob(text, "job.yaml");
  const t = parsed.bindings.get("t");
  const u = parsed.bindings.get("u");
  assert.equal(t?.mode === "upsert" ? t.orderBy : "not upsert", "_kafka_timestamp");
  assert.equal(u?.mode === "upsert" ? u.orderBy : "not upsert", undefined);
  assert.throws(
    () => parseJob(text.replace("mode: upsert, dedup_keys: [id], order_by", "mode: append, order_by"), "job.yaml"),
    (error: unknown) =>
      error instanceof ConfigError && /streams\.t\.order_by/.test(error.message) && /upsert/.test(error.message),
  );
  assert.throws(
    () => parseJob(text.replace("order_by: _kafka_timestamp", "order_by: updated_at"), "job.yaml"),
    (error: unknown) => error instanceof ConfigError && /streams\.t\.order_by/.test(error.message),
  );
  assert.throws(
    () => parseJob(text.replace("dedup_keys: [id], order_by", "format: debezium, order_by"), "job.yaml"),
    (error: unknown) =>
      error instanceof ConfigError &&
      /streams\.t\.order_by/.test(error.message) &&
      /source position/.test(error.message),
  );
});
