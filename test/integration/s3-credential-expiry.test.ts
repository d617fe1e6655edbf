// Vended credentials that expire mid-sync are renewed before they fail a write. The proxy vends
// keys said to last 3 seconds (s3.session-token-expires-at-ms) and revokes them at MinIO when the
// time is up, so they really stop working. The sync is paused at a fault point with its data
// files written and its commit not yet made, until those keys are revoked; the commit's
// manifests and the key index then need fresh keys, which floe asks for by reloading the table
// (the fixture offers no credentials endpoint). The keys are in the table config only, with the
// endpoint, region and path-style flag beside them: the job file has no storage section.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { bootstrapServers, createTopic, deleteTopic, produce } from "../../dev/kafka.ts";
import { type Readers, restS3Table, startReaders } from "../../dev/readers.ts";
import { startVendingProxy, type VendingProxy } from "../../dev/services/credential-vending-proxy.ts";
import { restS3Catalog } from "../../dev/services/iceberg-rest-s3.ts";
import { parseJob } from "../../src/config/load-job.ts";
import { waitUntil } from "../helpers/s3.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-s3-expiry-"));
const pauseFile = join(dir, "paused");
// Read by the fault points when sync.ts is first imported: set before the import below.
process.env.FLOE_FAULT_AT = "after-data-files";
process.env.FLOE_FAULT = "pause";
process.env.FLOE_FAULT_FILE = pauseFile;
process.env.AWS_EC2_METADATA_DISABLED = "true";
const { syncJob } = await import("../helpers/sync-job.ts");

const run = `${process.pid}_${Date.now()}`;
const topic = `s3expiry${run}_events`;
const name = `s3expiry_${run}`;
const namespace = `${name}_topics`;
const LIFETIME_MS = 3000;

let readers: Readers;
let proxy: VendingProxy;
before(async () => {
  proxy = await startVendingProxy({ upstream: restS3Catalog.uri, placement: "config", lifetimeMs: LIFETIME_MS });
  readers = await startReaders({ s3: true });
  await createTopic(topic, 1);
});
after(async () => {
  rmSync(pauseFile, { force: true });
  await readers?.close();
  await proxy?.close();
  await deleteTopic(topic);
});

test("credentials that expire while a sync stands between its data files and its commit are renewed", async () => {
  await produce(
    topic,
    Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: JSON.stringify({ id: i, note: `n${i}` }) })),
  );
  const job = parseJob(
    `
name: ${name}
source:
  kafka: {bootstrap_servers: [${bootstrapServers}], topic_pattern: "^${topic}$"}
destination:
  iceberg:
    catalog: {type: rest, uri: ${proxy.uri}}
    target_engines: [duckdb, spark]
streams:
  ${topic}: {mode: append, table: events}
`,
    join(dir, "job.yaml"),
  );
  const syncing = syncJob(job, { stateDir: join(dir, "state") });
  await waitUntil(() => existsSync(pauseFile), "the sync to pause after its data files");
  const vendedBefore = proxy.vended.length;
  assert.ok(vendedBefore > 0, "floe was vended credentials");
  // Every key handed out so far reaches its end of life and stops working at MinIO.
  await waitUntil(
    () => proxy.vended.every((v) => proxy.revoked.includes(v.accessKeyId)),
    "the vended credentials to expire",
    30_000,
  );
  rmSync(pauseFile);
  const report = await syncing;
  assert.equal(report.status, "complete");
  assert.equal(report.messagesRead, 20);
  assert.ok(
    proxy.vended.slice(vendedBefore).some((v) => v.table === `${namespace}.events`),
    "floe asked the catalog for fresh credentials after the old ones expired",
  );
  await readers.assertRows(
    restS3Table(namespace, "events"),
    Array.from({ length: 20 }, (_, i) => ({ id: BigInt(i), note: `n${i}` })),
    { columns: ["id", "note"], orderBy: ["id"] },
  );
});
