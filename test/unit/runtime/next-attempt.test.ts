// When the next run starts: the next tick after a run that landed or a failure that is not
// retryable; after a retryable failure a doubling backoff, capped, when it comes before the tick.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseSchedule } from "#src/job/schedule.ts";
import { backoffDelay, nextAttempt } from "#src/runtime/next-attempt.ts";

const hourly = parseSchedule("every 1h");
const now = Date.parse("2026-01-01T10:00:10Z");
const tick = Date.parse("2026-01-01T11:00:00Z");
const backoff = { baseMs: 5_000, maxMs: 60_000 };

test("the backoff doubles with each failure in a row, up to its maximum", () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 10].map((n) => backoffDelay(n, backoff)),
    [5_000, 10_000, 20_000, 40_000, 60_000, 60_000],
  );
});

test("after a success or a failure that is not retryable: the next tick", () => {
  assert.deepEqual(nextAttempt(hourly, now, { failures: 0, retryable: false }, backoff), {
    at: tick,
    trigger: "schedule",
  });
  assert.deepEqual(nextAttempt(hourly, now, { failures: 3, retryable: false }, backoff), {
    at: tick,
    trigger: "schedule",
  });
});

test("after a retryable failure: a retry after the backoff, unless the tick comes first", () => {
  assert.deepEqual(nextAttempt(hourly, now, { failures: 1, retryable: true }, backoff), {
    at: now + 5_000,
    trigger: "retry",
  });
  assert.deepEqual(nextAttempt(hourly, now, { failures: 3, retryable: true }, backoff), {
    at: now + 20_000,
    trigger: "retry",
  });
  const everyTenSeconds = parseSchedule("every 10s");
  assert.deepEqual(nextAttempt(everyTenSeconds, now, { failures: 2, retryable: true }, backoff), {
    at: Date.parse("2026-01-01T10:00:20Z"),
    trigger: "schedule",
  });
});

test("a continuous job: the next run at once after one that landed, after the backoff after any failure", () => {
  const continuous = parseSchedule("continuous");
  assert.equal(continuous.continuous, true);
  assert.deepEqual(nextAttempt(continuous, now, { failures: 0, retryable: false }, backoff), {
    at: now,
    trigger: "schedule",
  });
  // A failure that is not retryable would repeat at once: it waits for the backoff too.
  assert.deepEqual(nextAttempt(continuous, now, { failures: 1, retryable: false }, backoff), {
    at: now + 5_000,
    trigger: "retry",
  });
  assert.deepEqual(nextAttempt(continuous, now, { failures: 3, retryable: true }, backoff), {
    at: now + 20_000,
    trigger: "retry",
  });
});
