// The seed walkthrough end to end against the real broker and the real REST catalog: two
// syncs, and every figure of demo/seed-walkthrough/expected.json read back through DuckDB,
// PyIceberg and Spark, plus the second sync's commit report.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTopics, expected, producePhase } from "../../demo/seed-walkthrough.ts";
import { bootstrapServers } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { parseJob } from "../../src/config/load-job.ts";
import type { SyncReport } from "../../src/sync/sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `${process.pid}_${Date.now()}`;
const prefix = `seed${run}_`;
const name = `seed_${run}`;
const namespace = `${name}_topics`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-seed-"));

const job = parseJob(
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
    catalog: {type: rest, uri: ${restCatalog.uri}}
    target_engines: [databricks, duckdb, spark]
streams:
  ${prefix}customers: {mode: upsert, dedup_keys: [id], table: customers}
  ${prefix}orders: {mode: upsert, dedup_keys: [id], table: orders}
`,
  join(stateDir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await createTopics(prefix);
});
after(() => readers?.close());

const money = (n: unknown) => Math.round(Number(n) * 100) / 100;

async function assertOrders(figures: typeof expected.after_phase1.orders) {
  for (const engine of readers.engines) {
    const rows = await readers.rows(engine, restTable(namespace, "orders"), { columns: ["id", "status", "amount"] });
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

test("seed walkthrough: two syncs reproduce expected.json in DuckDB, PyIceberg and Spark", async () => {
  await producePhase(1, prefix);
  const first = await syncJob(job, { stateDir });
  assert.equal(first.status, "complete");
  assert.equal(first.messagesRead, expected.after_phase1.records_read);
  const customers = await readers.rows("duckdb", restTable(namespace, "customers"), { columns: ["id"] });
  assert.equal(customers.length, expected.after_phase1.customers.rows);
  await assertOrders(expected.after_phase1.orders);

  await producePhase(2, prefix);
  const second = await syncJob(job, { stateDir });
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
    restTable(namespace, "customers"),
    e.customers.rows_by_id.map((r) => ({ ...r, id: BigInt(r.id) })),
    { columns: ["id", "name", "city", "tier"], orderBy: ["id"] },
  );
  await assertOrders(e.orders);
  const [key] = await readers.sql("duckdb", `SELECT _kafka_key FROM rest.${namespace}.customers WHERE id = 3`);
  assert.equal(key?._kafka_key, "Mw==");

  // A third sync with nothing new reads nothing and changes nothing.
  const third = await syncJob(job, { stateDir });
  assert.equal(third.messagesRead, 0);
});
