// The login limiter: a few wrong guesses free, then a doubling wait per client, at most the
// cap; a right password clears the client; all clients share a budget per minute.
import assert from "node:assert/strict";
import { test } from "node:test";
import { LoginLimiter } from "#src/api/login-limiter.ts";

const options = { freeFailures: 3, firstDelayMs: 1000, maxDelayMs: 8000, globalPerMinute: 20 };

test("a client waits 1 s, 2 s, 4 s ... after its free wrong guesses, at most the cap; a success clears it", () => {
  const limiter = new LoginLimiter(options);
  const t = 1_000_000;
  for (let i = 0; i < 2; i++) limiter.failed("a", t);
  assert.equal(limiter.waitMs("a", t), 0);
  limiter.failed("a", t);
  assert.equal(limiter.waitMs("a", t), 1000);
  limiter.failed("a", t + 1000);
  assert.equal(limiter.waitMs("a", t + 1000), 2000);
  limiter.failed("a", t + 3000);
  assert.equal(limiter.waitMs("a", t + 3000), 4000);
  for (let i = 0; i < 5; i++) limiter.failed("a", t + 7000);
  assert.equal(limiter.waitMs("a", t + 7000), 8000, "at most the cap");
  assert.equal(limiter.waitMs("b", t + 7000), 0, "another client is not held");
  limiter.succeeded("a");
  assert.equal(limiter.waitMs("a", t + 7000), 0);
});

test("all clients together: past the budget of wrong guesses per minute, everyone waits", () => {
  const limiter = new LoginLimiter(options);
  const t = 5_000_000;
  for (let i = 0; i < 20; i++) limiter.failed(`client-${i}`, t);
  assert.equal(limiter.waitMs("fresh", t + 10_000), 50_000);
  assert.equal(limiter.waitMs("fresh", t + 60_001), 0, "a minute later the budget is back");
});

test("a right password, counted while it was hashed, does not use up the budget of wrong guesses", () => {
  const limiter = new LoginLimiter(options);
  const t = 7_000_000;
  for (let i = 0; i < 19; i++) limiter.failed(`client-${i}`, t);
  limiter.failed("right", t);
  limiter.succeeded("right");
  assert.equal(limiter.waitMs("fresh", t), 0, "19 wrong guesses: one is left");
  limiter.failed("fresh", t);
  assert.equal(limiter.waitMs("other", t), 60_000);
});
