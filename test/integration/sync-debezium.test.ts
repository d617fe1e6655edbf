// A Debezium change stream of a Postgres table, landed by `floe sync` (the CLI, a child process)
// into the test REST catalog: after every phase DuckDB, PyIceberg and Spark read exactly the
// source table's rows. The events are produced to Debezium's documented JSON format (the
// JsonConverter's {schema, payload}, keys included, with the __debezium.oldkey/newkey headers
// of a key change; test/helpers/debezium-events.ts), not captured from a running Postgres:
// sync-debezium-postgres.test.ts lands what Debezium captures from one. This one reaches what a
// real connector does not send on demand: a replay of older events in one sync with newer ones.
//
// Phases: the snapshot (op r); inserts, updates, deletes with their tombstones; a primary-key
// change; a connector replay (older events again, in the same sync as newer ones and in a sync
// of their own) and duplicates; a column added upstream; a sync killed (SIGKILL) after it wrote
// its data files, then run again; and a last run that has nothing to do and changes nothing.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ProduceAcks, Producer } from "@platformatic/kafka";
import { bootstrapServers, createTopic } from "../../dev/kafka.ts";
import { type Readers, type Row, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { type ChangeMessage, DebeziumTable, sourceRow } from "../helpers/debezium-events.ts";
import { writeJobFile } from "../helpers/job-file.ts";
import { floeSync as floeSyncIn, syncTopic } from "../helpers/sync-cli.ts";

const run = `dbz${process.pid}_${Date.now()}`;
const topic = `${run}.public.customers`;
const namespace = `${run}_topics`;
const dir = mkdtempSync(join(tmpdir(), "floe-debezium-"));
const jobPath = join(dir, "job.yaml");
const partitions = 3;
const source = new DebeziumTable(run, "customers");

let readers: Readers;

before(async () => {
  writeJobFile(jobPath, {
    name: run,
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    streams: {
      [topic]: {
        mode: "upsert",
        format: "debezium",
        table: "customers",
        key_columns: { id: "id" },
        cdc_columns: ["op", "source.lsn"],
      },
    },
  });
  readers = await startReaders();
  await createTopic(topic, partitions);
});
after(() => readers?.close());

/** Debezium's producer keys by the primary key: one key, one partition. */
function partitionOf(key: string): number {
  return (JSON.parse(key).payload.id as number) % partitions;
}

async function produceChanges(messages: ChangeMessage[]) {
  const producer = new Producer<Buffer | null, Buffer | null>({
    clientId: "floe-test-debezium",
    bootstrapBrokers: [bootstrapServers],
    idempotent: true,
  });
  try {
    await producer.send({
      acks: ProduceAcks.ALL,
      messages: messages.map((m) => ({
        topic,
        key: Buffer.from(m.key),
        value: m.value === null ? null : Buffer.from(JSON.stringify(m.value)),
        partition: partitionOf(m.key),
        ...(m.headers
          ? { headers: new Map(Object.entries(m.headers).map(([k, v]) => [Buffer.from(k), Buffer.from(v)])) }
          : {}),
      })),
    });
  } finally {
    await producer.close();
  }
}

const floeSync = (env: Record<string, string> = {}) => floeSyncIn(jobPath, join(dir, "state"), env);
const sync = () => syncTopic(jobPath, join(dir, "state"), topic);

function micros(us: number): string {
  const iso = new Date(Math.floor(us / 1000)).toISOString();
  return `${iso.slice(0, 23)}${String(us % 1000).padStart(3, "0")}Z`;
}

/** The source table's rows as the engines read them: the model. */
function expectedRows(): Row[] {
  return [...source.rows.values()]
    .sort((a, b) => a.id - b.id)
    .map((r) => ({
      id: BigInt(r.id),
      name: r.name,
      balance: r.balance,
      born: r.born,
      updated_at: micros(r.updatedAt),
      ...Object.fromEntries(source.extraColumns.map((c) => [c, r[c] ?? null])),
    }));
}

async function assertSourceRows() {
  await readers.assertRows(restTable(namespace, "customers"), expectedRows(), {
    columns: ["id", "name", "balance", "born", "updated_at", ...source.extraColumns],
    orderBy: ["id"],
  });
}

test("the snapshot phase: every row read (op r) lands once", async () => {
  await produceChanges(source.snapshot(Array.from({ length: 30 }, (_, i) => sourceRow(i + 1, `c${i + 1}`))));
  const t = await sync();
  assert.deepEqual([t.messagesRead, t.recordsAdded, t.deadLetters], [30, 30, 0]);
  await assertSourceRows();
});

test("inserts, updates, deletes with their tombstones: deletes leave no row and no dead letter", async () => {
  const changes: ChangeMessage[] = [];
  for (let id = 31; id <= 36; id++) changes.push(...source.insert(sourceRow(id, `c${id}`)));
  for (const id of [1, 2, 3, 31]) changes.push(...source.update(id, { name: `updated ${id}` }));
  changes.push(...source.update(1, { name: "updated twice", balance: "-17.25" }));
  for (const id of [4, 5, 32]) changes.push(...source.delete(id));
  await produceChanges(changes);
  const t = await sync();
  assert.equal(t.deadLetters, 0);
  await assertSourceRows();
  const ops = await readers.sql(
    "duckdb",
    `SELECT _cdc_op, count(*) AS n FROM rest.${namespace}.customers GROUP BY _cdc_op ORDER BY _cdc_op`,
  );
  assert.deepEqual(
    ops.map((r) => [r._cdc_op, Number(r.n)]),
    [
      ["c", 4],
      ["r", 25],
      ["u", 4],
    ],
  );
});

test("a primary-key change (delete of the old key, tombstone, create of the new key) moves the row", async () => {
  await produceChanges([...source.changeKey(6, 106), ...source.changeKey(33, 7)]);
  await sync();
  assert.ok(!source.rows.has(6) && source.rows.has(106));
  await assertSourceRows();
});

test("a connector replay: older events, in a sync with newer ones and in a sync of their own, never win; duplicates change nothing", async () => {
  // Older events of keys the table holds, captured before the newer ones below.
  const olderUpdate = source.update(8, { name: "eight, older" });
  const olderDelete = source.delete(9);
  const newer = [
    ...olderUpdate,
    ...olderDelete,
    ...source.insert(sourceRow(9, "nine, re-created")),
    ...source.update(8, { name: "eight, newer" }),
    ...source.update(10, { name: "ten" }),
  ];
  // In one sync: the replay after the newer events, and every event twice.
  await produceChanges([...newer, ...olderUpdate, ...newer]);
  await sync();
  await assertSourceRows();
  // In a sync of its own: the replay reaches a table that holds newer rows of its keys.
  await produceChanges([...olderUpdate, ...olderDelete, ...olderUpdate]);
  const t = await sync();
  assert.deepEqual([t.recordsAdded, t.positionsDeleted, t.deadLetters], [0, 0, 0]);
  await assertSourceRows();
});

test("a column added upstream (ALTER TABLE ADD COLUMN) evolves the table; earlier rows read it as null", async () => {
  source.addColumn("email");
  await produceChanges([
    ...source.update(11, { email: "eleven@example.com" }),
    ...source.insert(sourceRow(40, "c40", { email: "forty@example.com" })),
    ...source.update(12, { name: "twelve" }),
  ]);
  await sync();
  await assertSourceRows();
});

test("a sync killed after writing its data files, run again, lands exactly the source table; a further run changes nothing", async () => {
  await produceChanges([
    ...source.update(13, { name: "thirteen", email: "13@example.com" }),
    ...source.delete(14),
    ...source.insert(sourceRow(41, "c41")),
    ...source.changeKey(15, 115),
  ]);
  const killed = await floeSync({ FLOE_FAULT_AT: "after-data-files", FLOE_FAULT: "crash" });
  assert.equal(killed.signal, "SIGKILL", killed.stderr);
  const t = await sync();
  assert.ok(t.messagesRead > 0);
  await assertSourceRows();
  const again = await sync();
  assert.equal(again.messagesRead, 0);
  assert.equal(again.snapshotId ?? null, null, "a run with nothing to read commits no snapshot");
  await assertSourceRows();
});
