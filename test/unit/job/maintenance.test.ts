// The job file's maintenance: policy: on by default with the safe settings, each key optional,
// durations as <n><unit>, and a wrong value reported with its YAML path and line.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "#src/job/config-error.ts";
import { parseJob } from "#src/job/load-job.ts";
import { DEFAULT_MAINTENANCE } from "#src/job/maintenance.ts";

const job = (maintenance: string) =>
  `name: j\nsource: {kafka: {bootstrap_servers: [k:1], topic_pattern: x}}\n${maintenance}`;

test("no maintenance: key: on, with the defaults", () => {
  const { maintenance } = parseJob(job(""), "job.yaml");
  assert.deepEqual(maintenance, DEFAULT_MAINTENANCE);
  assert.equal(maintenance.enabled, true);
  assert.equal(maintenance.intervalMs, 3_600_000);
  assert.deepEqual(maintenance.snapshots, { enabled: true, retainLast: 10, maxAgeMs: 6 * 3_600_000 });
  assert.deepEqual(maintenance.orphans, { enabled: true, olderThanMs: 3 * 86_400_000 });
  assert.deepEqual(maintenance.manifests, { enabled: true, maxCount: 20 });
  assert.equal(maintenance.compaction.minInputFiles, 5);
  assert.equal(maintenance.compaction.targetFileSizeBytes, undefined);
});

test("a partial policy keeps the other defaults", () => {
  const { maintenance } = parseJob(
    job("maintenance:\n  interval: 30m\n  snapshots: {retain_last: 3}\n  orphans: {enabled: false}\n"),
    "job.yaml",
  );
  assert.equal(maintenance.intervalMs, 1_800_000);
  assert.deepEqual(maintenance.snapshots, { enabled: true, retainLast: 3, maxAgeMs: 6 * 3_600_000 });
  assert.equal(maintenance.orphans.enabled, false);
  assert.equal(maintenance.compaction.enabled, true);
});

test("a wrong value names its path and line", () => {
  try {
    parseJob(job("maintenance:\n  snapshots: {max_age: soon, retain_last: 0}\n  typo: 1\n"), "job.yaml");
    assert.fail("expected a ConfigError");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    const issues = error.issues.map((i) => `${i.line}: ${i.path.join(".")}`);
    assert.ok(issues.includes("4: maintenance.snapshots.max_age"), issues.join("; "));
    assert.ok(issues.includes("4: maintenance.snapshots.retain_last"), issues.join("; "));
    assert.ok(
      issues.some((i) => i.startsWith("3: maintenance") || i.includes("typo")),
      issues.join("; "),
    );
  }
});
