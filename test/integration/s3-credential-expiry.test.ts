// Vended credentials that expire mid-sync are renewed before they fail a write. The proxy vends
// keys said to last 3 seconds (s3.session-token-expires-at-ms), in the table config only, and
// revokes them at MinIO when the time is up, so they really stop working; floe renews them by
// reloading the table (the fixture offers no credentials endpoint).
import assert from "node:assert/strict";
import { test } from "node:test";
import { syncAcrossBrokenKeys } from "../helpers/credential-renewal.ts";
import { waitUntil } from "../helpers/s3.ts";

test("keys that expire while a sync stands before its commit are renewed by reloading the table", async () => {
  // Keys said to last 3 seconds (s3.session-token-expires-at-ms) in the table config only, and
  // revoked at MinIO when the time is up; the fixture offers no credentials endpoint.
  const { renewals } = await syncAcrossBrokenKeys(
    "expiry",
    { placement: "config", lifetimeMs: 3000 },
    async (proxy) => {
      await waitUntil(
        () => proxy.vended.every((v) => proxy.revoked.includes(v.accessKeyId)),
        "the vended credentials to expire",
        30_000,
      );
    },
  );
  assert.ok(renewals.length > 0, "floe asked the catalog for fresh credentials after the old ones expired");
});
