// Vended credentials that stop working mid-sync with no warning (no expiry announced, revoked
// at MinIO) are renewed when the store refuses them, and the refused write is made again. The
// proxy announces the table credentials endpoint, so floe asks there (GET .../credentials), not
// by reloading the table. The sync is paused at a fault point with its data files written, the
// keys are revoked, and the commit's manifests need fresh ones. The keys are in both the table
// config and storage-credentials, with the endpoint beside them: no storage section in the job.
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

const dir = mkdtempSync(join(tmpdir(), "floe-s3-revoked-"));
const pauseFile = join(dir, "paused");
// Read by the fault points when sync.ts is first imported: set before the import below.
process.env.FLOE_FAULT_AT = "after-data-files";
process.env.FLOE_FAULT = "pause";
process.env.FLOE_FAULT_FILE = pauseFile;
process.env.AWS_EC2_METADATA_DISABLED = "true";
const { syncJob } = await import("../helpers/sync-job.ts");

const run = `${process.pid}_${Date.now()}`;
const topic = `s3revoked${run}_events`;
const name = `s3revoked_${run}`;
const namespace = `${name}_topics`;

let readers: Readers;
let proxy: VendingProxy;
before(async () => {
  proxy = await startVendingProxy({
    upstream: restS3Catalog.uri,
    placement: "both",
    announceExpiry: false,
    credentialsEndpoint: true,
  });
  readers = await startReaders({ s3: true });
  await createTopic(topic, 1);
});
after(async () => {
  rmSync(pauseFile, { force: true });
  await readers?.close();
  await proxy?.close();
  await deleteTopic(topic);
});

test("credentials revoked while a sync stands between its data files and its commit are renewed at the credentials endpoint", async () => {
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
  await proxy.revokeAll();
  rmSync(pauseFile);
  const report = await syncing;
  assert.equal(report.status, "complete");
  assert.equal(report.messagesRead, 20);
  assert.ok(
    proxy.vended.slice(vendedBefore).some((v) => v.table === `${namespace}.events` && v.via === "loadCredentials"),
    `floe asked the credentials endpoint for fresh credentials: ${JSON.stringify(proxy.vended.map((v) => v.via))}`,
  );
  await readers.assertRows(
    restS3Table(namespace, "events"),
    Array.from({ length: 20 }, (_, i) => ({ id: BigInt(i), note: `n${i}` })),
    { columns: ["id", "note"], orderBy: ["id"] },
  );
});
