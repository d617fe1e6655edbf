// The seed walkthrough's figures (demo/seed-walkthrough/expected.json, the copy of
// shared/scenarios/seed-walkthrough/expected.json) checked one way for every store and catalog:
// after a phase's sync, the sync's report and what each reader reads back of both tables. The
// tests differ in where the tables live and which engines can read them; they pass readers.
// The start-up bench checks its walkthrough syncs with it too.
import assert from "node:assert/strict";
import { expected } from "../demo/seed-walkthrough.ts";
import type { SyncReport } from "../src/pipeline/sync.ts";
import { bootstrapServers } from "./kafka.ts";
import type { Readers, Row, TableRef } from "./readers.ts";

export type SeedTable = "customers" | "orders";

/**
 * The walkthrough's job file: both topics of `prefix`, each upserted on id into its table.
 * `kafka`: the connection keys under source.kafka (the test broker over PLAINTEXT by default);
 * `iceberg`: the keys under destination.iceberg; both indented four spaces, as in the file.
 */
export function seedWalkthroughJobYaml(options: { name: string; prefix: string; kafka?: string; iceberg: string }) {
  const { name, prefix } = options;
  const kafka = options.kafka ?? `    bootstrap_servers: [${bootstrapServers}]\n    security: {protocol: PLAINTEXT}`;
  return `
name: ${name}
source:
  kafka:
${kafka}
    consumer_group: floe_${name}
    topic_pattern: ^${prefix}(customers|orders)$
    max_threads: 2
destination:
  iceberg:
${options.iceberg}
streams:
  ${prefix}customers: {mode: upsert, dedup_keys: [id], table: customers}
  ${prefix}orders: {mode: upsert, dedup_keys: [id], table: orders}
`;
}

/** Every live row of one of the walkthrough's tables, with the columns asked for. */
export type SeedReader = (table: SeedTable, columns: string[]) => Promise<Row[]>;

export interface SeedTarget {
  readonly namespace: string;
  /** Engine name -> how it reads the tables; each is checked in full. */
  readonly readers: Readonly<Record<string, SeedReader>>;
}

/** The shared readers process's engines over the tables' catalog (`table` maps a name to its ref). */
export function engineReaders(
  readers: Readers,
  table: (namespace: string, table: string) => TableRef,
  namespace: string,
): Record<string, SeedReader> {
  return Object.fromEntries(
    readers.engines.map((engine) => [
      engine,
      (name: SeedTable, columns: string[]) => readers.rows(engine, table(namespace, name), { columns }),
    ]),
  );
}

const cents = (n: unknown) => Math.round(Number(n) * 100) / 100;

/**
 * Asserts expected.json after `phase`: the sync read the phase's messages (and completed); in
 * phase 2 each table got one data file and one deletion vector with the expected records and
 * deleted positions; every reader reads the customers (count, then every row by id, the key of
 * id 3 as base64) and the orders' count, total and per-status figures.
 */
export async function assertSeedWalkthrough(phase: 1 | 2, report: SyncReport, target: SeedTarget): Promise<void> {
  const figures = phase === 1 ? expected.after_phase1 : expected.after_phase2;
  assert.equal(report.status, "complete", `phase ${phase}: sync status`);
  assert.equal(report.messagesRead, figures.records_read, `phase ${phase}: messages read`);
  if (phase === 2) {
    const e = expected.after_phase2;
    for (const [table, wanted] of [
      ["customers", e.customers],
      ["orders", e.orders],
    ] as const) {
      const t = report.tables.find((r) => r.table === `${target.namespace}.${table}`);
      assert.ok(t, `phase 2: no report for ${table}`);
      assert.deepEqual(
        [t.dataFilesAdded, t.deletionVectorsAdded, t.recordsAdded, t.positionsDeleted],
        [1, 1, wanted.added_records, wanted.deleted_positions],
        `phase 2: ${table}: data files, DVs, records added, positions deleted`,
      );
    }
  }
  for (const [engine, read] of Object.entries(target.readers)) {
    const at = `phase ${phase}, ${engine}`;
    const customers = await read("customers", ["id", "name", "city", "tier", "_kafka_key"]);
    assert.equal(customers.length, figures.customers.rows, `${at}: customers`);
    assert.equal(customers.find((r) => Number(r.id) === 3)?._kafka_key, "Mw==", `${at}: _kafka_key of customer 3`);
    if (phase === 2) {
      const byId = customers
        .map(({ id, name, city, tier }) => ({ id: Number(id), name, city, tier }))
        .sort((a, b) => a.id - b.id);
      assert.deepEqual(byId, expected.after_phase2.customers.rows_by_id, `${at}: customers by id`);
    }
    const orders = await read("orders", ["id", "status", "amount"]);
    assert.equal(orders.length, figures.orders.rows, `${at}: orders`);
    assert.equal(cents(orders.reduce((sum, r) => sum + Number(r.amount), 0)), figures.orders.total, `${at}: total`);
    for (const s of figures.orders.by_status) {
      const group = orders.filter((r) => r.status === s.status);
      assert.equal(group.length, s.n, `${at}: ${s.status} count`);
      assert.equal(cents(group.reduce((sum, r) => sum + Number(r.amount), 0)), s.total, `${at}: ${s.status} total`);
    }
  }
}
