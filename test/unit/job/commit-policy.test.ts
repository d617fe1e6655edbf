// The job file's commit: limits: defaults when absent, sizes as bytes or <n><unit>, and a wrong
// value reported with its YAML path.
import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_COMMIT, parseByteSize } from "#src/job/commit-policy.ts";
import { ConfigError } from "#src/job/config-error.ts";
import { parseJob } from "#src/job/load-job.ts";

const job = (commit: string) => `name: j\nsource: {kafka: {bootstrap_servers: [k:1], topic_pattern: x}}\n${commit}`;

const DEFAULTS = { intervalMs: 10_000, maxMessages: 250_000, maxBytes: 32 * 2 ** 20 };

test("no commit: key: 10 s, 250,000 messages or 32 MiB, whichever comes first", () => {
  assert.deepEqual(parseJob(job(""), "job.yaml").commit, DEFAULTS);
  assert.deepEqual(DEFAULT_COMMIT, DEFAULTS);
});

test("the interval is a duration with its unit, at least 100 ms", () => {
  assert.equal(parseJob(job("commit: {interval: 2s}"), "job.yaml").commit.intervalMs, 2000);
  assert.equal(parseJob(job("commit: {interval: 750ms}"), "job.yaml").commit.intervalMs, 750);
  assert.equal(parseJob(job("commit: {interval: 1m}"), "job.yaml").commit.intervalMs, 60_000);
});

test("each limit is optional, and a size is bytes or <n><unit>", () => {
  assert.deepEqual(parseJob(job("commit: {max_bytes: 64MiB}"), "job.yaml").commit, {
    intervalMs: 10_000,
    maxMessages: 250_000,
    maxBytes: 64 * 2 ** 20,
  });
  assert.deepEqual(parseJob(job("commit: {max_messages: 1000, max_bytes: 4096}"), "job.yaml").commit, {
    intervalMs: 10_000,
    maxMessages: 1000,
    maxBytes: 4096,
  });
  assert.equal(parseByteSize("512 KiB"), 512 * 1024);
  assert.equal(parseByteSize("2GiB"), 2 * 2 ** 30);
  assert.equal(parseByteSize("10"), 10);
  assert.equal(parseByteSize("10MB"), undefined, "decimal units are not guessed at");
  assert.equal(parseByteSize("lots"), undefined);
});

test("a wrong limit names its path", () => {
  for (const [text, path] of [
    ["commit: {max_bytes: 10MB}", "commit.max_bytes"],
    ["commit: {max_bytes: 0}", "commit.max_bytes"],
    ["commit: {max_messages: -1}", "commit.max_messages"],
    ["commit: {max_messages: 1.5}", "commit.max_messages"],
    ["commit: {interval_typo: 1}", "commit"],
    ["commit: {interval: 10}", "commit.interval"],
    ["commit: {interval: 50ms}", "commit.interval"],
    ["commit: {interval: soon}", "commit.interval"],
  ] as const) {
    try {
      parseJob(job(text), "job.yaml");
      assert.fail(`expected a ConfigError for ${text}`);
    } catch (error) {
      assert.ok(error instanceof ConfigError, String(error));
      const paths = error.issues.map((i) => i.path.join("."));
      assert.ok(
        paths.some((p) => p.startsWith(path)),
        `${text}: ${paths.join("; ")}`,
      );
    }
  }
});
