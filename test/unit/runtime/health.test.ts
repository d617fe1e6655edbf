// The probes' answers: /healthz is 200 whatever the readiness, /readyz follows it and says why
// not, other paths are not probes.
import assert from "node:assert/strict";
import { test } from "node:test";
import { healthAnswer, type Readiness } from "#src/runtime/health.ts";

test("liveness answers ok whether or not the process is ready; readiness says why not", () => {
  const starting = (): Readiness => ({ ready: false, reason: "starting" });
  const ready = (): Readiness => ({ ready: true });
  assert.deepEqual(healthAnswer("/healthz", starting), { status: 200, body: { status: "ok" } });
  assert.deepEqual(healthAnswer("/readyz", starting), {
    status: 503,
    body: { status: "unavailable", reason: "starting" },
  });
  assert.deepEqual(healthAnswer("/readyz", ready), { status: 200, body: { status: "ok" } });
  assert.equal(healthAnswer("/metrics", ready), undefined);
  assert.equal(healthAnswer("/readyz/", ready), undefined);
});
