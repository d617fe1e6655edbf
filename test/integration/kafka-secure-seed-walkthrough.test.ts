// The seed walkthrough over SASL_SSL with SCRAM-SHA-512, as a managed cluster (MSK, Confluent
// Cloud) is reached: the broker's certificate verified against the test CA, the principal allowed
// only Read and Describe on the walkthrough's topics (one prefixed ACL, as admins grant a tool
// its topics) and Read on its group. Two syncs, and every figure of
// demo/seed-walkthrough/expected.json read back through DuckDB, PyIceberg and Spark.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTopics, expected, producePhase } from "../../demo/seed-walkthrough.ts";
import { floeUser, grantAcls, principalOf, secureAdmin, sourceYaml } from "../../dev/kafka-secure.ts";
import { type Readers, restTable, startReaders, testRestCatalog } from "../../dev/readers.ts";
import { parseJob } from "../../src/config/load-job.ts";
import type { SyncReport } from "../../src/sync/sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `${process.pid}_${Date.now()}`;
const prefix = `secseed${run}_`;
const name = `secseed_${run}`;
const namespace = `${name}_topics`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-secure-seed-"));

const job = parseJob(
  `
name: ${name}
source:
  kafka:
${sourceYaml({ protocol: "SASL_SSL", mechanism: "SCRAM-SHA-512" })}
    consumer_group: floe_${name}
    topic_pattern: ^${prefix}(customers|orders)$
    max_threads: 2
destination:
  iceberg:
    catalog: {type: rest, uri: ${testRestCatalog.uri}}
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
  await createTopics(prefix, secureAdmin);
  await grantAcls(principalOf(floeUser), [
    { topic: prefix, prefixed: true, operations: ["Read", "Describe"] },
    { group: `floe_${name}`, operations: ["Read"] },
  ]);
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

test("seed walkthrough over SASL_SSL SCRAM-SHA-512: two syncs reproduce expected.json in DuckDB, PyIceberg and Spark", async () => {
  await producePhase(1, prefix, secureAdmin);
  const first = await syncJob(job, { stateDir });
  assert.equal(first.status, "complete");
  assert.equal(first.messagesRead, expected.after_phase1.records_read);
  const customers = await readers.rows("duckdb", restTable(namespace, "customers"), { columns: ["id"] });
  assert.equal(customers.length, expected.after_phase1.customers.rows);
  await assertOrders(expected.after_phase1.orders);

  await producePhase(2, prefix, secureAdmin);
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

  // The group's offsets were committed over SASL_SSL too: a third sync reads nothing.
  const third = await syncJob(job, { stateDir });
  assert.equal(third.messagesRead, 0);
});
