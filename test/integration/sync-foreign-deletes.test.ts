// Row-level deletes written by other engines. A table that began in Spark as format v2 with
// merge-on-read deletes holds position delete files (Parquet rows of file_path, pos); upgraded to
// v3, floe upserts into it: the deleted rows must not be in floe's key index, and a data file's
// first DV must hold its position deletes too (spec "Deletion Vectors": they "must be merged into
// the DV for a data file when one is created"), or the rows Spark deleted come back in every
// reader. Before, floe refused such a table for good. An equality delete file (written here with
// floe's own Iceberg layer, applied by Spark) is refused with the Spark rewrite that applies it;
// after that rewrite floe syncs again. Read back through DuckDB, PyIceberg and Spark.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { loadCatalog } from "#src/iceberg/catalog/load-catalog.ts";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { previewRows } from "#src/iceberg/scan/preview-rows.ts";
import { FileContent, type OtherDeleteFile } from "#src/iceberg/spec/manifest.ts";
import { currentSchema, currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import type { Job } from "#src/job/job.ts";
import { catalogConfig } from "#src/pipeline/connect.ts";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { AddDeleteFiles } from "../helpers/foreign-commits.ts";
import { buildJob } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import { type ModelMessage, modelColumns, OffsetCounter, produceExactly, UpsertModel } from "../helpers/sync-model.ts";
import { arrowRows } from "../helpers/tables.ts";

const run = `${process.pid}_${Date.now()}`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-foreign-deletes-"));
const topic = `foreigndeletes${run}`;

function jobFor(name: string, table: string): Job {
  return buildJob(
    {
      name: `${name}_${run}`,
      kafka: { topic_pattern: `^${topic}$` },
      iceberg: { catalog: { type: "rest", uri: restCatalog.uri }, namespace: `foreigndeletes_${run}` },
      streams: { [topic]: { mode: "upsert", dedup_keys: ["_kafka_key"], table } },
    },
    join(stateDir, `${name}.yaml`),
  );
}

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await createTopic(topic, 2);
});
after(async () => {
  await readers?.close();
  await deleteTopic(topic);
});

async function withTable<T>(job: Job, name: string, work: (table: Table) => Promise<T>): Promise<T> {
  const catalog = await loadCatalog(catalogConfig(job.destination));
  try {
    return await work(await Table.load(catalog, { namespace: [job.namespace], name }));
  } finally {
    await catalog.close();
  }
}

const keyOf = (i: number) => `k${i % 40}`;
function batch(counter: OffsetCounter, from: number, n: number): ModelMessage[] {
  return counter.assign(
    Array.from({ length: n }, (_, j) => {
      const i = from + j;
      return { partition: (i % 40) % 2, key: keyOf(i), value: { i } };
    }),
  );
}
const order = ["_kafka_partition", "_kafka_offset"];

test("position deletes of a table upgraded from v2 are honoured by floe's upserts; equality deletes are refused until Spark applies them", async () => {
  // Rows as floe lands them, in a table floe writes.
  const source = jobFor("source", "source");
  const counter = new OffsetCounter();
  const model = new UpsertModel((m) => m.key, true);
  const first = batch(counter, 0, 40);
  await produceExactly(topic, first, counter);
  assert.equal((await syncJob(source, { stateDir })).messagesRead, 40);
  model.apply(first);

  // The same rows in a table Spark created as v2, with merge-on-read deletes of every fourth key.
  const ns = source.namespace;
  await readers.spark(
    `CREATE TABLE rest.${ns}.upgraded USING iceberg TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', ` +
      `'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read') AS SELECT * FROM rest.${ns}.source`,
  );
  await readers.spark(`DELETE FROM rest.${ns}.upgraded WHERE i % 4 = 0`);
  const deleteFiles = await readers.spark(
    `SELECT content, file_format, record_count FROM rest.${ns}.upgraded.delete_files`,
  );
  assert.ok(deleteFiles.length >= 1, "Spark wrote position delete files");
  for (const f of deleteFiles)
    assert.deepEqual([Number(f.content), String(f.file_format).toUpperCase()], [1, "PARQUET"]);
  await readers.spark(`ALTER TABLE rest.${ns}.upgraded SET TBLPROPERTIES ('format-version'='3')`);
  for (let i = 0; i < 40; i += 4) model.live.delete(keyOf(i));
  const ref = restTable(ns, "upgraded");
  await readers.assertRows(ref, model.rows(["i"]), { columns: modelColumns(["i"]), orderBy: order });

  // floe reads it: the preview leaves the deleted rows out.
  await withTable(source, "upgraded", async (table) => {
    assert.equal(table.metadata.formatVersion, 3);
    const preview = await previewRows(table, 100);
    assert.equal(preview.liveRows, 30);
    assert.deepEqual(
      preview.rows.map((r) => Number(r.i)).sort((a, b) => a - b),
      Array.from({ length: 40 }, (_, i) => i).filter((i) => i % 4 !== 0),
    );
  });

  // A job whose table it is now: it holds rows but no floe position, so floe is told where to go on.
  const job = jobFor("upgraded", "upgraded");
  await assert.rejects(syncJob(job, { stateDir }), { name: "PositionUnknownError" });
  assert.equal((await syncJob(job, { stateDir, resumeFrom: "latest" })).messagesRead, 0);

  // New versions of k0..k19: 15 live rows retired, the 5 keys Spark deleted come back as new rows.
  const second = batch(counter, 40, 20);
  await produceExactly(topic, second, counter);
  const report = await syncJob(job, { stateDir });
  assert.equal(report.messagesRead, 20);
  const figures = model.apply(second);
  assert.equal(figures.positionsDeleted, 15);
  assert.equal(report.tables[0]?.positionsDeleted, 15, "rows Spark deleted are not retired again");
  await readers.assertRows(ref, model.rows(["i"]), { columns: modelColumns(["i"]), orderBy: order });
  await withTable(job, "upgraded", async (table) => {
    const snapshot = currentSnapshot(table.metadata)!;
    assert.ok(Number(snapshot.summary["removed-position-delete-files"] ?? 0) >= 1, "scoped delete files removed");
    assert.equal((await previewRows(table, 100)).liveRows, model.live.size);
  });

  // An equality delete of i = 41 (k1's row now): a real Parquet file with the table's field ids
  // (the table's other columns null), as an engine of equality deletes (Flink) writes them.
  await withTable(job, "upgraded", async (table) => {
    const field = currentSchema(table.metadata).fields.find((f) => f.name === "i")!;
    const [written] = await writeDataFiles(table, arrowRows(table, [{ i: 41n }]));
    const file: OtherDeleteFile = { ...written!, content: FileContent.EQUALITY_DELETES, equalityIds: [field.id] };
    await new AddDeleteFiles(table, [file]).commit();
  });
  model.live.delete("k1");
  // PyIceberg reads no table that lists an equality delete file (its own limit), applied or not.
  const applyingEngines = async () => {
    for (const engine of ["duckdb", "spark"] as const) {
      const rows = await readers.rows(engine, ref, { columns: modelColumns(["i"]), orderBy: order });
      assert.deepEqual(rows, model.rows(["i"]), `${engine} reads the model`);
    }
  };
  await applyingEngines();

  const third = batch(counter, 60, 4);
  await produceExactly(topic, third, counter);
  await assert.rejects(syncJob(job, { stateDir }), (error: Error) => {
    assert.match(error.message, /equality delete file\(s\) written by another engine apply to its live data files/);
    assert.match(
      error.message,
      /rewrite_data_files\(table => '.*upgraded', options => map\('delete-file-threshold', '1'\)\)/,
    );
    return true;
  });
  // The way out the error names: the rewrite applies the equality delete to the files it deleted
  // from; it stays listed, but older than every live data file it applies to none.
  const [rewrite] = await readers.spark(
    `CALL rest.system.rewrite_data_files(table => '${ns}.upgraded', options => map('delete-file-threshold', '1'))`,
  );
  assert.ok(Number(rewrite?.rewritten_data_files_count) >= 1);
  await applyingEngines();
  assert.equal((await syncJob(job, { stateDir })).messagesRead, 4);
  model.apply(third);
  await applyingEngines();
});
