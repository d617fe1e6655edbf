// When vended credentials are renewed: past half their remaining lifetime and at least five
// minutes before expiry; never without an expiry unless asked; one request for concurrent callers.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { StorageProperties } from "#src/iceberg/io/file-io.ts";
import { RefreshingCredentials, renewTime } from "#src/iceberg/io/refreshing-credentials.ts";
import { catalogCredentials, type S3Credentials } from "#src/iceberg/io/s3-config.ts";

const MINUTE = 60_000;

function keys(id: string, expiresAtMs?: number): S3Credentials {
  return {
    accessKeyId: id,
    secretAccessKey: `${id}-secret`,
    ...(expiresAtMs === undefined ? {} : { expiresAtMs }),
  };
}

function vended(id: string, expiresAtMs: number): StorageProperties {
  return {
    properties: {
      "s3.access-key-id": id,
      "s3.secret-access-key": `${id}-secret`,
      "s3.session-token-expires-at-ms": String(expiresAtMs),
    },
    origin: "test",
  };
}

test("renewal time: half the remaining lifetime for short ones, five minutes ahead for long ones, never without an expiry", () => {
  assert.equal(renewTime(keys("a", 10_000), 0), 5_000);
  assert.equal(renewTime(keys("a", 60 * MINUTE), 0), 55 * MINUTE);
  assert.equal(renewTime(keys("a"), 0), Number.POSITIVE_INFINITY);
  assert.equal(renewTime(keys("a", 1000), 2000), 1000, "already expired: due now");
});

test("credentials are renewed once due, from the catalog's fresh answer; not before", async () => {
  let now = 0;
  let asked = 0;
  const credentials = new RefreshingCredentials(
    keys("first", 10 * MINUTE),
    {
      refresh: async () => vended(`fresh${++asked}`, now + 10 * MINUTE),
      select: (fresh) => catalogCredentials(fresh.properties),
    },
    () => now,
  );
  now = 4 * MINUTE;
  assert.equal((await credentials.get()).accessKeyId, "first");
  now = 5 * MINUTE;
  assert.equal((await credentials.get()).accessKeyId, "fresh1");
  now = 6 * MINUTE;
  assert.equal((await credentials.get()).accessKeyId, "fresh1");
  assert.equal(credentials.renewals, 1);
});

test("concurrent callers share one renewal", async () => {
  let asked = 0;
  const credentials = new RefreshingCredentials(keys("old", 1), {
    refresh: async () => {
      asked++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return vended("new", Date.now() + 60 * MINUTE);
    },
    select: (fresh) => catalogCredentials(fresh.properties),
  });
  const all = await Promise.all([credentials.get(), credentials.get(), credentials.get()]);
  assert.deepEqual(
    all.map((c) => c.accessKeyId),
    ["new", "new", "new"],
  );
  assert.equal(asked, 1);
});

test("a failed renewal keeps credentials that are still valid, and fails once they have expired", async () => {
  let now = 0;
  const credentials = new RefreshingCredentials(
    keys("k", 10_000),
    {
      refresh: async () => {
        throw new Error("catalog down");
      },
      select: () => undefined,
    },
    () => now,
  );
  now = 6_000;
  assert.equal((await credentials.get()).accessKeyId, "k");
  now = 10_000;
  await assert.rejects(credentials.get(), /catalog down/);
});

test("an answer without credentials is a failed renewal; without a renewal source renew() is a no-op", async () => {
  const empty = new RefreshingCredentials(keys("k", 1), {
    refresh: async () => ({ properties: {}, origin: "test" }),
    select: (fresh) => catalogCredentials(fresh.properties),
  });
  await assert.rejects(empty.renew(), /vended no credentials/);
  const fixed = new RefreshingCredentials(keys("static"), undefined);
  assert.equal(fixed.renewable, false);
  await fixed.renew();
  assert.equal((await fixed.get()).accessKeyId, "static");
});
