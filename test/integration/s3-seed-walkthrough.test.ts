// The seed walkthrough with the warehouse on MinIO: the REST fixture's s3:// instance (which
// writes its metadata files to the bucket itself) behind the credential-vending proxy, which
// hands floe short-lived STS keys narrowed to each table's location. floe writes with those keys
// only: the job file gives the endpoint and region and no keys, and the proxy vends keys in
// `storage-credentials` alone, with no endpoint (as rustberg does), so the two must merge.
// DuckDB (httpfs with an S3 secret), PyIceberg and Spark (S3FileIO) read the bucket back.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTopics, expected, producePhase } from "../../demo/seed-walkthrough.ts";
import { bootstrapServers } from "../../dev/kafka.ts";
import { type Readers, restS3Table, startReaders, testRestS3Catalog } from "../../dev/readers.ts";
import { startVendingProxy, type VendingProxy } from "../../dev/services/credential-vending-proxy.ts";
import { restS3Catalog } from "../../dev/services/iceberg-rest-s3.ts";
import { minio } from "../../dev/services/minio.ts";
import { parseJob } from "../../src/config/load-job.ts";
import type { SyncReport } from "../../src/sync/sync.ts";
import { objectKeys } from "../helpers/s3.ts";
import { syncJob } from "../helpers/sync-job.ts";

process.env.AWS_EC2_METADATA_DISABLED = "true";

const run = `${process.pid}_${Date.now()}`;
const prefix = `s3seed${run}_`;
const name = `s3seed_${run}`;
const namespace = `${name}_topics`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-s3-seed-"));

let readers: Readers;
let proxy: VendingProxy;
before(async () => {
  proxy = await startVendingProxy({
    upstream: restS3Catalog.uri,
    placement: "storage-credentials",
    vendEndpoint: false,
  });
  readers = await startReaders({ s3: true });
  await createTopics(prefix);
});
after(async () => {
  await readers?.close();
  await proxy?.close();
});

function job() {
  return parseJob(
    `
name: ${name}
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    consumer_group: floe_${name}
    topic_pattern: ^${prefix}(customers|orders)$
    security: {protocol: PLAINTEXT}
    max_threads: 2
destination:
  iceberg:
    catalog: {type: rest, uri: ${proxy.uri}}
    target_engines: [databricks, duckdb, spark]
    storage:
      s3: {endpoint: ${minio.endpoint}, region: ${minio.region}}
streams:
  ${prefix}customers: {mode: upsert, dedup_keys: [id], table: customers}
  ${prefix}orders: {mode: upsert, dedup_keys: [id], table: orders}
`,
    join(stateDir, "job.yaml"),
  );
}

const money = (n: unknown) => Math.round(Number(n) * 100) / 100;

async function assertOrders(figures: typeof expected.after_phase1.orders) {
  for (const engine of readers.engines) {
    const rows = await readers.rows(engine, restS3Table(namespace, "orders"), { columns: ["id", "status", "amount"] });
    assert.equal(rows.length, figures.rows, `${engine}: orders`);
    assert.equal(money(rows.reduce((sum, r) => sum + Number(r.amount), 0)), figures.total, `${engine}: total`);
    for (const s of figures.by_status) {
      const group = rows.filter((r) => r.status === s.status);
      assert.equal(group.length, s.n, `${engine}: ${s.status} count`);
      assert.equal(money(group.reduce((sum, r) => sum + Number(r.amount), 0)), s.total, `${engine}: ${s.status} total`);
    }
  }
}

function tableReport(report: SyncReport, table: string) {
  const t = report.tables.find((r) => r.table === `${namespace}.${table}`);
  assert.ok(t, `no report for ${table}`);
  return t;
}

test("seed walkthrough on MinIO with vended credentials: DuckDB, PyIceberg and Spark read expected.json", async () => {
  await producePhase(1, prefix);
  const first = await syncJob(job(), { stateDir });
  assert.equal(first.status, "complete");
  assert.equal(first.messagesRead, expected.after_phase1.records_read);
  const customers = await readers.rows("duckdb", restS3Table(namespace, "customers"), { columns: ["id"] });
  assert.equal(customers.length, expected.after_phase1.customers.rows);
  await assertOrders(expected.after_phase1.orders);

  await producePhase(2, prefix);
  const second = await syncJob(job(), { stateDir });
  const e = expected.after_phase2;
  assert.equal(second.messagesRead, e.records_read);
  const c = tableReport(second, "customers");
  assert.deepEqual(
    [c.dataFilesAdded, c.deletionVectorsAdded, c.recordsAdded, c.positionsDeleted],
    [1, 1, e.customers.added_records, e.customers.deleted_positions],
  );
  const o = tableReport(second, "orders");
  assert.deepEqual(
    [o.dataFilesAdded, o.deletionVectorsAdded, o.recordsAdded, o.positionsDeleted],
    [1, 1, e.orders.added_records, e.orders.deleted_positions],
  );

  await readers.assertRows(
    restS3Table(namespace, "customers"),
    e.customers.rows_by_id.map((r) => ({ ...r, id: BigInt(r.id) })),
    { columns: ["id", "name", "city", "tier"], orderBy: ["id"] },
  );
  await assertOrders(e.orders);
  const [key] = await readers.sql(
    "duckdb",
    `SELECT _kafka_key FROM rest_s3.${namespace}.customers WHERE id = 3`,
    testRestS3Catalog,
  );
  assert.equal(key?._kafka_key, "Mw==");

  // The files are in the bucket, under each table's location, and floe had vended keys for both.
  const tablePrefix = `warehouse/${namespace}/`;
  const keys = await objectKeys(tablePrefix);
  for (const table of ["customers", "orders"]) {
    assert.ok(
      keys.some((k) => k.startsWith(`${tablePrefix}${table}/data/`) && k.endsWith(".parquet")),
      table,
    );
    assert.ok(
      keys.some((k) => k.startsWith(`${tablePrefix}${table}/data/`) && k.endsWith(".puffin")),
      table,
    );
    assert.ok(keys.some((k) => k.startsWith(`${tablePrefix}${table}/metadata/`) && k.endsWith(".metadata.json")));
    assert.ok(
      proxy.vended.some((v) => v.table === `${namespace}.${table}`),
      `no credentials vended for ${table}`,
    );
  }

  // A third sync with nothing new reads nothing and changes nothing.
  const third = await syncJob(job(), { stateDir });
  assert.equal(third.messagesRead, 0);
});
