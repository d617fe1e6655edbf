// Spark 4.0 / Iceberg 1.10 projecting a field inside a map's struct values (`attrs['u3'].tag`)
// on tables floe writes, against the same on a table Spark writes itself: both answer while the
// value struct has not evolved; once a field was added to it after files without it, both fail
// with the same exception (Spark's pruned read of an older file asks for the map's key column it
// pruned, apache/iceberg#14043), so docs/limits.md names it as Spark's limit. All three engines
// read floe's evolved table whole; DuckDB projects the field. When this test fails because Spark
// answers, the limit is gone: drop it from docs/limits.md and sync-nested-json.test.ts.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTopic, produce } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { buildJob } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `mapvals${process.pid}_${Date.now()}`;
const namespace = `${run}_topics`;
const dir = mkdtempSync(join(tmpdir(), "floe-map-values-"));
const topics = { plain: `${run}_plain`, evolved: `${run}_evolved` };

const job = buildJob(
  {
    name: run,
    kafka: { topic_pattern: `^${run}_(plain|evolved)$`, max_threads: 1 },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    streams: {
      [topics.plain]: { mode: "append", table: "plain", columns: { attrs: "map" } },
      [topics.evolved]: { mode: "append", table: "evolved", columns: { attrs: "map" } },
    },
  },
  join(dir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await createTopic(topics.plain, 1);
  await createTopic(topics.evolved, 1);
});
after(() => readers?.close());

const PRUNED_KEY = /\[attrs, key_value, key\] required binary key \(STRING\) = \d+ is not in the store/;
const projection = (table: string) => `SELECT id, attrs['u3'].tag AS tag FROM ${table} ORDER BY id`;

async function sparkError(query: string): Promise<string> {
  try {
    await readers.sql("spark", query);
  } catch (error) {
    return `${(error as Error).message}\n${(error as { pythonTraceback?: string }).pythonTraceback ?? ""}`;
  }
  assert.fail(`Spark answered ${query}: the limit in docs/limits.md is gone`);
}

test("a field inside a map's struct values: Spark projects it until the value struct evolves, on floe's table and on its own alike", async () => {
  const sync = async () => assert.equal((await syncJob(job, { stateDir: join(dir, "state") })).status, "complete");
  await produce(topics.plain, [
    { value: JSON.stringify({ id: 1, attrs: { u1: { n: 1, tag: "a" } } }) },
    { value: JSON.stringify({ id: 3, attrs: { u3: { n: 3, tag: "x" } } }) },
  ]);
  // The evolved table: tag is added to the value struct by the second sync's file.
  await produce(topics.evolved, [{ value: JSON.stringify({ id: 1, attrs: { u1: { n: 1 } } }) }]);
  await sync();
  await produce(topics.evolved, [{ value: JSON.stringify({ id: 3, attrs: { u3: { n: 3, tag: "x" } } }) }]);
  await sync();
  const projected = [
    { id: 1n, tag: null },
    { id: 3n, tag: "x" },
  ];
  assert.deepEqual(await readers.sql("spark", projection(`rest.${namespace}.plain`)), projected);
  assert.deepEqual(await readers.sql("duckdb", projection(`rest.${namespace}.evolved`)), projected);
  assert.match(await sparkError(projection(`rest.${namespace}.evolved`)), PRUNED_KEY);
  await readers.assertRows(
    restTable(namespace, "evolved"),
    [
      { id: 1n, attrs: [["u1", { n: 1n, tag: null }]] },
      { id: 3n, attrs: [["u3", { n: 3n, tag: "x" }]] },
    ],
    { columns: ["id", "attrs"], orderBy: ["id"] },
  );

  // The same schema and evolution in a table Spark writes itself.
  const own = `rest.${run}_spark.own`;
  await readers.sql("spark", `CREATE NAMESPACE IF NOT EXISTS rest.${run}_spark`);
  await readers.sql("spark", `CREATE TABLE ${own} (id bigint, attrs map<string, struct<n: bigint>>) USING iceberg`);
  await readers.sql("spark", `INSERT INTO ${own} VALUES (1, map('u1', named_struct('n', 1L)))`);
  await readers.sql("spark", `ALTER TABLE ${own} ADD COLUMN attrs.value.tag string`);
  await readers.sql("spark", `INSERT INTO ${own} VALUES (3, map('u3', named_struct('n', 3L, 'tag', 'x')))`);
  assert.match(await sparkError(projection(own)), PRUNED_KEY);
});
