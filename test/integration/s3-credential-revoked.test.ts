// Vended credentials that stop working with no warning (no expiry announced, revoked at MinIO)
// are renewed when the store refuses them, and the refused write is made again. The keys are in
// both the table config and storage-credentials; the proxy announces the table credentials
// endpoint, so floe asks there (GET .../credentials), not by reloading the table.
import assert from "node:assert/strict";
import { test } from "node:test";
import { syncAcrossBrokenKeys } from "../helpers/credential-renewal.ts";

test("keys revoked with no warning are renewed at the credentials endpoint when the store refuses them", async () => {
  // No expiry announced; keys in both the table config and storage-credentials; the proxy
  // announces the table credentials endpoint, so floe asks there (GET .../credentials).
  const { renewals } = await syncAcrossBrokenKeys(
    "revoked",
    { placement: "both", announceExpiry: false, credentialsEndpoint: true },
    (proxy) => proxy.revokeAll(),
  );
  assert.ok(
    renewals.some((v) => v.via === "loadCredentials"),
    `floe asked the credentials endpoint for fresh credentials: ${JSON.stringify(renewals.map((v) => v.via))}`,
  );
});
