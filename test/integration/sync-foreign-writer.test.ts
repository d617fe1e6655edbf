// Spark writes into a floe upsert table, then floe upserts the same keys again. Against the REST
// catalog, an upsert stream keyed on a payload column (id) is synced; Spark then INSERTs rows of
// keys the table holds (no _floe_id: two rows of one key), MERGEs (an update of an existing key,
// an insert of a new one, both without _floe_id), UPDATEs a dedup column (the row keeps the old
// key's _floe_id), and DELETEs a key; first with Spark's default copy-on-write, then with
// merge-on-read (Spark's deletion vectors). After each round floe upserts the keys Spark touched
// but one of those it inserted twice, and DuckDB, PyIceberg and Spark read exactly the model: one
// row per key, floe's latest message, or for that key Spark's row, updated last (by row lineage:
// Spark's copy-on-write copied floe's older row of it into a newer file).
// Last, Spark's rewrite_data_files compacts the table and the next sync catches its key index up
// by reading only the files the rewrite added, not by a rebuild.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { SYSTEM_COLUMNS } from "#src/decode/system-columns.ts";
import type { SyncReport } from "#src/pipeline/sync.ts";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, type Row, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { buildJob } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import { OffsetCounter, produceExactly } from "../helpers/sync-model.ts";

const PARTITIONS = 3;
const run = `${process.pid}_${Date.now()}`;
const topic = `foreign${run}_accounts`;
const name = `foreign_${run}`;
const namespace = `${name}_topics`;
const table = `rest.${namespace}.accounts`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-foreign-"));

const job = buildJob(
  {
    name,
    kafka: { consumer_group: `floe_${name}`, topic_pattern: `^${topic}$`, security: { protocol: "PLAINTEXT" } },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri }, target_engines: ["duckdb", "spark"] },
    streams: { [topic]: { mode: "upsert", dedup_keys: ["id"], table: "accounts" } },
  },
  join(stateDir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await createTopic(topic, PARTITIONS);
});
after(async () => {
  await readers?.close();
  await deleteTopic(topic);
});

const counter = new OffsetCounter();
/** id -> the values of its rows in the table; floe's upsert leaves one. */
const model = new Map<number, string[]>();

function expected(): Row[] {
  return [...model]
    .sort(([a], [b]) => a - b)
    .flatMap(([id, values]) => [...values].sort().map((v) => ({ id: BigInt(id), v })));
}

async function assertModel(step: string) {
  await readers.assertRows(restTable(namespace, "accounts"), expected(), {
    columns: ["id", "v"],
    orderBy: ["id", "v"],
  });
  assert.ok(step);
}

/** floe upserts `ids` with values tagged `step`; returns the table's report. */
async function upsert(ids: number[], step: string): Promise<SyncReport["tables"][number]> {
  const messages = counter.assign(
    ids.map((id) => ({ partition: id % PARTITIONS, key: String(id), value: { id, v: `floe${id}_${step}` } })),
  );
  await produceExactly(topic, messages, counter);
  for (const id of ids) model.set(id, [`floe${id}_${step}`]);
  // A key the table holds twice keeps its later row once floe commits, a message for it or not.
  for (const [id, values] of model) if (values.length > 1) model.set(id, [values.at(-1)!]);
  const report = await syncJob(job, { stateDir });
  assert.equal(report.status, "complete", step);
  return report.tables[0]!;
}

/** floe's system columns: another engine's rows leave them null (Spark wants every column named). */
const SYSTEM = SYSTEM_COLUMNS.map((c) => c.name).join(", ");
const NULLS = SYSTEM_COLUMNS.map(() => "NULL").join(", ");

/** Spark's INSERT, MERGE, UPDATE of the dedup column and DELETE on keys `k`, and the model after them. */
async function sparkWrites(k: {
  insert: number[];
  merge: number;
  mergeNew: number;
  rekey: [number, number];
  del: number;
}) {
  await readers.spark(
    `INSERT INTO ${table} (id, v, ${SYSTEM}) VALUES ${k.insert.map((id) => `(${id}, 'spark${id}', ${NULLS})`).join(", ")}`,
  );
  for (const id of k.insert) model.get(id)!.push(`spark${id}`);
  await readers.spark(
    `MERGE INTO ${table} t USING (SELECT CAST(${k.merge} AS BIGINT) AS id, 'spark${k.merge}' AS v UNION ALL SELECT CAST(${k.mergeNew} AS BIGINT), 'spark${k.mergeNew}') s ON t.id = s.id
     WHEN MATCHED THEN UPDATE SET t.v = s.v, t._floe_id = NULL
     WHEN NOT MATCHED THEN INSERT (id, v, ${SYSTEM}) VALUES (s.id, s.v, ${NULLS})`,
  );
  model.set(k.merge, [`spark${k.merge}`]);
  model.set(k.mergeNew, [`spark${k.mergeNew}`]);
  // The row keeps the _floe_id of its old key: stale.
  const [from, to] = k.rekey;
  await readers.spark(`UPDATE ${table} SET id = ${to} WHERE id = ${from}`);
  model.set(to, model.get(from)!);
  model.delete(from);
  await readers.spark(`DELETE FROM ${table} WHERE id = ${k.del}`);
  model.delete(k.del);
}

test("rows Spark inserts, merges, re-keys and deletes are retired by floe's next upserts of those keys; the key index follows Spark's rewrite_data_files", async () => {
  const first = await upsert(
    Array.from({ length: 40 }, (_, id) => id),
    "1",
  );
  assert.equal(first.recordsAdded, 40);
  await assertModel("first sync");

  // Round one: Spark's default write mode, copy-on-write (data files rewritten).
  const cow = { insert: [3, 4, 7], merge: 8, mergeNew: 100, rekey: [5, 50] as [number, number], del: 6 };
  await sparkWrites(cow);
  await assertModel("after Spark's copy-on-write INSERT, MERGE, UPDATE and DELETE");
  const second = await upsert([3, 4, 5, 6, 8, 50, 100, 41], "2");
  // 3, 4 and 7 had two rows each: floe's old row retired too (7 keeps Spark's, the later one,
  // although Spark's copy-on-write copied floe's row of 7 into a newer file: row lineage says).
  assert.equal(second.duplicatesRetired, 3);
  assert.equal(second.positionsDeleted, 5 + 3);
  await assertModel("floe upserted the keys Spark wrote (copy-on-write)");

  // Round two: merge-on-read, Spark's own deletion vectors on floe's files.
  await readers.spark(
    `ALTER TABLE ${table} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')`,
  );
  const mor = { insert: [10, 11, 41, 15], merge: 12, mergeNew: 101, rekey: [13, 60] as [number, number], del: 14 };
  await sparkWrites(mor);
  await assertModel("after Spark's merge-on-read INSERT, MERGE, UPDATE and DELETE");
  const third = await upsert([10, 11, 41, 12, 101, 13, 60, 14], "3");
  assert.equal(third.duplicatesRetired, 4);
  await assertModel("floe upserted the keys Spark wrote (merge-on-read)");

  // Spark compacts; the next sync reads only the files the rewrite added.
  const [rewrite] = await readers.spark(
    `CALL rest.system.rewrite_data_files(table => '${namespace}.accounts', options => map('min-input-files','2'))`,
  );
  const added = Number(rewrite?.added_data_files_count);
  assert.ok(Number(rewrite?.rewritten_data_files_count) >= 2 && added >= 1, JSON.stringify(rewrite, bigints));
  const fourth = await upsert([0, 1, 2, 100], "4");
  assert.deepEqual(
    fourth.keyIndex?.map((k) => [k.how, k.dataFilesRead, k.duplicateKeys]),
    [["caught-up", added, 0]],
    "the key index caught up by reading the rewrite's files alone",
  );
  await assertModel("after Spark's rewrite_data_files and floe's upserts");
});

const bigints = (_key: string, value: unknown) => (typeof value === "bigint" ? String(value) : value);
