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

test("an upsert binding with cluster: is refused, naming the stream's mode", () => {
  const text =
    "name: j\nsource: {kafka: {bootstrap_servers: [k:1]}}\nstreams: {t: {mode: upsert, dedup_keys: [id]}, u: {mode: append}}\ncluster: {}";
  assert.throws(
    () => parseJob(text, "job.yaml"),
    (error: unknown) =>
      error instanceof ConfigError && /streams\.t\.mode/.test(error.message) && /upsert/.test(error.message),
  );
  assert.equal(parseJob(text.replace("cluster: {}", ""), "job.yaml").cluster, undefined);
});
