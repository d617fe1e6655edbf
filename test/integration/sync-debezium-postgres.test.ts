// A change stream captured by Debezium from a real Postgres, landed by `floe sync` (the CLI, a
// child process) into the test REST catalog. PostgreSQL 15 (wal_level=logical) and Debezium's
// Postgres connector in a Kafka Connect standalone worker (pgoutput, JsonConverter with schemas,
// Debezium's default decimal and time handling; test/helpers/debezium-postgres.ts) write the
// topic; nothing in it is produced by the test. After every phase DuckDB, PyIceberg and Spark read
// exactly what `SELECT ... FROM customers` reads in Postgres, normalised as the engines are.
//
// Phases: the snapshot (rows there before the connector starts: op r); inserts, updates, deletes
// (with their tombstones); primary-key changes (UPDATE ... SET id: Debezium's delete, tombstone
// and create); ALTER TABLE ADD COLUMN mid-stream; a Connect worker SIGKILLed before it saved its
// offsets and started again, so that Debezium sends every event since its last saved offset a
// second time (real duplicates); and a floe sync SIGKILLed after writing its data files, run
// again, then once more with nothing to do.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, type Row, restTable, startReaders } from "../../dev/readers.ts";
import type { DebeziumInstall } from "../../dev/services/debezium.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import {
  DebeziumWorker,
  debeziumInstall,
  messageCount,
  readMessages,
  TestPostgres,
  waitForMessages,
} from "../helpers/debezium-postgres.ts";
import { writeJobFile } from "../helpers/job-file.ts";
import { floeSync as floeSyncIn, syncTopic } from "../helpers/sync-cli.ts";

const run = `dbzpg${process.pid}_${Date.now()}`;
const topic = `${run}.public.customers`;
const namespace = `${run}_topics`;
const dir = mkdtempSync(join(tmpdir(), "floe-debezium-postgres-"));
const connectDir = mkdtempSync(join(tmpdir(), "floe-debezium-connect-"));
const jobPath = join(dir, "job.yaml");
const partitions = 3;

let install: DebeziumInstall;
let pg: TestPostgres;
let worker: DebeziumWorker | undefined;
let readers: Readers;
/** Messages the topic held after the last wait: each phase waits for the ones its SQL makes. */
let captured = 0;
/** The columns added upstream so far. */
const extraColumns: string[] = [];

const SNAPSHOT_ROWS = 30;

function seedRow(id: number): string {
  const balance = `${id * 3}.${String(id % 100).padStart(2, "0")}`;
  const tz = `2026-01-${String(1 + (id % 28)).padStart(2, "0")} 10:${String(id % 60).padStart(2, "0")}:00.${String(id * 1237).padStart(6, "0")}+02`;
  const seen = id % 5 === 0 ? "NULL" : `'1999-12-31 23:59:${String(id % 60).padStart(2, "0")}.5'`;
  const born = `'19${50 + (id % 50)}-0${1 + (id % 9)}-1${id % 10}'`;
  const active = id % 3 === 0 ? "NULL" : id % 2 === 0 ? "true" : "false";
  const ref = `'00000000-0000-4000-8000-${String(id).padStart(12, "0")}'`;
  const attrs = id % 4 === 0 ? "NULL" : `'{"tier": ${id % 3}, "tags": ["a", "b${id}"]}'`;
  return `(${id}, 'c${id}', ${id % 7 === 0 ? -id : balance}, '${tz}', ${seen}, ${born}, ${active}, ${ref}, ${attrs}, ${9_007_199_254_740_993n + BigInt(id)}, ${id % 2 === 1 ? `${id}.0` : `${id}.25`}, ${id % 200})`;
}

before(async () => {
  install = debeziumInstall();
  pg = await TestPostgres.start(install);
  await pg.sql(`CREATE TABLE customers (
    id integer PRIMARY KEY,
    name text NOT NULL,
    balance numeric(10, 2),
    updated_at timestamptz,
    seen_at timestamp,
    born date,
    active boolean,
    ref uuid,
    attrs jsonb,
    visits bigint,
    rating double precision,
    score smallint
  )`);
  const rows = Array.from({ length: SNAPSHOT_ROWS }, (_, i) => seedRow(i + 1));
  await pg.sql(`INSERT INTO customers VALUES ${rows.join(", ")}`);
  await createTopic(topic, partitions);
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
});

after(async () => {
  await worker?.stop();
  await pg?.stop();
  await readers?.close();
  await deleteTopic(topic).catch(() => {});
  rmSync(connectDir, { recursive: true, force: true });
});

async function startWorker(offsetFlushMs?: number): Promise<DebeziumWorker> {
  worker = await DebeziumWorker.start(install, pg, connectDir, {
    topicPrefix: run,
    tables: ["public.customers"],
    ...(offsetFlushMs === undefined ? {} : { offsetFlushMs }),
  });
  return worker;
}

/** Waits until Debezium has written the `count` messages the phase's SQL makes. */
async function captures(count: number): Promise<void> {
  captured += count;
  await waitForMessages(worker!, topic, partitions, captured);
}

const floeSync = (env: Record<string, string> = {}) => floeSyncIn(jobPath, join(dir, "state"), env);
const sync = () => syncTopic(jobPath, join(dir, "state"), topic);

const iso = (column: string, zone: string) => `to_char(${column}${zone}, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * The source table as Postgres reads it, in the engines' normal form: the model. floe's columns
 * (docs/cdc.md): numeric and date as their exact text, timestamptz and timestamp (its local time
 * read as UTC) as timestamptz, uuid and jsonb as text, the integer types as long.
 */
async function sourceRows(): Promise<Row[]> {
  const rows = await pg.rows<Record<string, string | number | boolean | null>>(
    `SELECT id, name, balance::text AS balance, ${iso("updated_at", " AT TIME ZONE 'UTC'")} AS updated_at,
       ${iso("seen_at", "")} AS seen_at, born::text AS born, active, ref::text AS ref, attrs::text AS attrs,
       visits::text AS visits, rating, score${extraColumns.map((c) => `, ${c}`).join("")}
     FROM customers ORDER BY id`,
  );
  return rows.map((r) => ({
    ...r,
    id: BigInt(r.id as number),
    visits: r.visits === null ? null : BigInt(r.visits as string),
    score: r.score === null ? null : BigInt(r.score as number),
  }));
}

async function assertSourceRows(): Promise<void> {
  const expected = await sourceRows();
  await readers.assertRows(restTable(namespace, "customers"), expected, {
    columns: Object.keys(expected[0]!),
    orderBy: ["id"],
  });
}

test("the snapshot: rows there before the connector started land once, as op r", async () => {
  await startWorker();
  await captures(SNAPSHOT_ROWS);
  const t = await sync();
  assert.deepEqual([t.messagesRead, t.recordsAdded, t.deadLetters], [SNAPSHOT_ROWS, SNAPSHOT_ROWS, 0]);
  await assertSourceRows();
  const ops = await readers.sql("duckdb", `SELECT DISTINCT _cdc_op FROM rest.${namespace}.customers`);
  assert.deepEqual(ops, [{ _cdc_op: "r" }]);
});

test("inserts, updates and deletes (each delete followed by its tombstone)", async () => {
  await pg.sql(`
    INSERT INTO customers VALUES ${[31, 32, 33, 34].map(seedRow).join(", ")};
    UPDATE customers SET name = 'updated ' || id, balance = balance + 0.01 WHERE id IN (1, 2, 3, 31);
    UPDATE customers SET updated_at = '2026-06-30 23:59:59.999999+00', attrs = '{"nested": {"deep": [1, 2.5, null]}}' WHERE id = 1;
    UPDATE customers SET active = NULL, seen_at = NULL, rating = 0 WHERE id = 2;
    DELETE FROM customers WHERE id IN (4, 5, 32);
  `);
  await captures(4 + 4 + 1 + 1 + 3 * 2);
  const t = await sync();
  assert.equal(t.deadLetters, 0);
  await assertSourceRows();
});

test("primary-key changes move the row: Debezium's delete, tombstone and create with the key headers", async () => {
  const before = captured;
  await pg.sql("UPDATE customers SET id = 106 WHERE id = 6; UPDATE customers SET id = 35 WHERE id = 33");
  await captures(2 * 3);
  const messages = await readMessages(topic, captured);
  const created = messages.filter((m) => m.headers["__debezium.oldkey"] !== undefined);
  assert.equal(created.length, 2, "two creates carry the old key");
  assert.ok(messages.length - before >= 6);
  await sync();
  await assertSourceRows();
});

test("ALTER TABLE ADD COLUMN mid-stream evolves the table; rows not changed since read it as null", async () => {
  await pg.sql(`
    ALTER TABLE customers ADD COLUMN email text;
    UPDATE customers SET email = 'eleven@example.com' WHERE id = 11;
    INSERT INTO customers (id, name, email) VALUES (40, 'c40', 'forty@example.com');
    UPDATE customers SET name = 'twelve' WHERE id = 12;
  `);
  extraColumns.push("email");
  await captures(3);
  await sync();
  await assertSourceRows();
});

test("a Connect worker killed before saving its offsets sends its events again: the duplicates change nothing", async () => {
  // A graceful stop saves the offsets; the next worker saves none before it is killed.
  await worker!.stop();
  await startWorker(3_600_000);
  await pg.sql(`
    UPDATE customers SET name = 'twenty, first' WHERE id = 20;
    UPDATE customers SET name = 'twenty, second', email = '20@example.com' WHERE id = 20;
    DELETE FROM customers WHERE id = 21;
    INSERT INTO customers VALUES ${seedRow(50)};
    UPDATE customers SET id = 122 WHERE id = 22;
  `);
  const changes = 1 + 1 + 2 + 1 + 3;
  await captures(changes);
  await worker!.kill();
  const first = await sync();
  assert.equal(first.deadLetters, 0);
  await assertSourceRows();

  // Debezium resumes from the offset the first worker saved: every change above comes again.
  await startWorker();
  await captures(changes);
  const messages = await readMessages(topic, captured);
  const events = messages.filter((m) => m.value !== undefined).map((m) => m.value!);
  const lsns = events.map((v) => `${JSON.parse(v).payload.source.lsn} ${JSON.parse(v).payload.op}`);
  assert.ok(new Set(lsns).size < lsns.length, "the topic holds events Debezium sent twice");
  const replay = await sync();
  assert.equal(replay.deadLetters, 0);
  await assertSourceRows();
  assert.equal(await messageCount(topic, partitions), captured, "nothing beyond the replay was sent");
});

test("a sync killed after writing its data files, run again, lands exactly the source table; a further run changes nothing", async () => {
  await pg.sql(`
    UPDATE customers SET name = 'thirteen', email = '13@example.com' WHERE id = 13;
    DELETE FROM customers WHERE id = 14;
    INSERT INTO customers VALUES ${seedRow(41)};
    UPDATE customers SET id = 115 WHERE id = 15;
  `);
  await captures(1 + 2 + 1 + 3);
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
