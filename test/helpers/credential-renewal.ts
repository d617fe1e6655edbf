// A sync paused before its commit while the catalog's vended keys stop working at MinIO: the
// commit's manifests and the key index then need fresh keys. The job file has no storage
// section: the endpoint, region and path-style flag come from the catalog beside the keys.
// Each test file that uses it is a process of its own: the fault point pauses once a process.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { createTopic, deleteTopic, produce } from "../../dev/kafka.ts";
import { type Readers, restS3Table, startReaders } from "../../dev/readers.ts";
import {
  startVendingProxy,
  type VendingProxy,
  type VendingProxyOptions,
} from "../../dev/services/credential-vending-proxy.ts";
import { restS3Catalog } from "../../dev/services/iceberg-rest-s3.ts";
import { buildJob } from "./job-file.ts";
import { waitUntil } from "./s3.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-s3-renewal-"));
const pauseFile = join(dir, "paused");
// Read by the fault points when sync.ts is first imported: set before the import below.
process.env.FLOE_FAULT_AT = "after-data-files";
process.env.FLOE_FAULT = "pause";
process.env.FLOE_FAULT_FILE = pauseFile;
process.env.AWS_EC2_METADATA_DISABLED = "true";
const { syncJob } = await import("./sync-job.ts");

const run = `${process.pid}_${Date.now()}`;
const proxies: VendingProxy[] = [];
const topics: string[] = [];
let readers: Readers;

// Importing this module registers these hooks on the importing test file.
before(async () => {
  readers = await startReaders({ s3: true });
});
after(async () => {
  rmSync(pauseFile, { force: true });
  await readers?.close();
  for (const proxy of proxies) await proxy.close();
  for (const topic of topics) await deleteTopic(topic);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Syncs 20 messages through a vending proxy in front of the S3 REST fixture; `breakKeys` runs
 * while the sync is paused before its commit. Returns which of the proxy's vendings came after.
 */
export async function syncAcrossBrokenKeys(
  label: string,
  options: Omit<VendingProxyOptions, "upstream">,
  breakKeys: (proxy: VendingProxy) => Promise<void>,
) {
  const proxy = await startVendingProxy({ upstream: restS3Catalog.uri, ...options });
  proxies.push(proxy);
  const topic = `s3${label}${run}_events`;
  topics.push(topic);
  const name = `s3${label}_${run}`;
  const namespace = `${name}_topics`;
  await createTopic(topic, 1);
  await produce(
    topic,
    Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: JSON.stringify({ id: i, note: `n${i}` }) })),
  );
  const job = buildJob(
    {
      name,
      kafka: { topic_pattern: `^${topic}$` },
      iceberg: { catalog: { type: "rest", uri: proxy.uri }, target_engines: ["duckdb", "spark"] },
      streams: { [topic]: { mode: "append", table: "events" } },
    },
    join(dir, `${label}.yaml`),
  );
  const syncing = syncJob(job, { stateDir: join(dir, label) });
  await waitUntil(() => existsSync(pauseFile), "the sync to pause after its data files");
  const vendedBefore = proxy.vended.length;
  assert.ok(vendedBefore > 0, "floe was vended credentials");
  await breakKeys(proxy);
  rmSync(pauseFile);
  const report = await syncing;
  assert.equal(report.status, "complete");
  assert.equal(report.messagesRead, 20);
  await readers.assertRows(
    restS3Table(namespace, "events"),
    Array.from({ length: 20 }, (_, i) => ({ id: BigInt(i), note: `n${i}` })),
    { columns: ["id", "note"], orderBy: ["id"] },
  );
  return { renewals: proxy.vended.slice(vendedBefore).filter((v) => v.table === `${namespace}.events`) };
}
