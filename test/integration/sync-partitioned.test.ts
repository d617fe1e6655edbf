// Partitioned tables against the real broker and REST catalog, read back in DuckDB, PyIceberg and
// Spark against a model of the expected rows:
// - append tables partitioned by each transform (identity, year, month, day, hour, bucket,
//   truncate), on payload columns and on _kafka_timestamp;
// - an upsert table partitioned by day(updated_at) whose keys are updated on another day: the
//   old row of each key is retired although it lies in another partition;
// - partition_by changed mid-stream: a new spec for new files, the old files keep theirs;
// - maintenance (compaction, manifest rewrite, expiry, orphans) keeps every file in its
//   partition and spec;
// - a table Spark created partitioned: floe writes in its spec, each row in the tuple Spark
//   computes for the same values;
// - a filtered query that each engine plans on fewer files than the whole table: PyIceberg's
//   plan_files counts, DuckDB's "Total Files Read", and every file the filter excludes removed
//   from storage, so that an engine that did not prune by the partition tuple fails to read it.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadCatalog } from "#src/iceberg/catalog/load-catalog.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { currentSnapshot, specById } from "#src/iceberg/spec/table-metadata.ts";
import { applyTransform } from "#src/iceberg/spec/transform.ts";
import { Table } from "#src/iceberg/table.ts";
import { DEFAULT_MAINTENANCE, type MaintenancePolicy } from "#src/job/maintenance.ts";
import { maintainTable } from "#src/pipeline/maintain.ts";
import { createTopic, deleteTopic, produce } from "../../dev/kafka.ts";
import { type Readers, type Row, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { readerEnv } from "../../dev/services/readers.ts";
import type { JobFileData } from "../helpers/job-file.ts";
import { buildJob } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `${process.pid}_${Date.now()}`;
const prefix = `part${run}_`;
const name = `part_${run}`;
const namespace = `${name}_topics`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-partitioned-"));
const topics = {
  clicks: `${prefix}clicks`,
  accounts: `${prefix}accounts`,
  metrics: `${prefix}metrics`,
  pruned: `${prefix}pruned`,
  foreign: `${prefix}foreign`,
};

const CLICKS_FIRST = ["day(_kafka_timestamp)", "bucket(8, id)", "truncate(3, name)", "region"];
const CLICKS_EVOLVED = ["hour(at)", "bucket(4, id)"];

function jobOf(clicksPartitionBy: string[]) {
  const streams: JobFileData["streams"] = {
    [topics.clicks]: { mode: "append", table: "clicks", partition_by: clicksPartitionBy },
    [topics.accounts]: {
      mode: "upsert",
      dedup_keys: ["id"],
      table: "accounts",
      partition_by: ["day(updated_at)", "truncate(10, id)"],
    },
    [topics.metrics]: { mode: "append", table: "metrics", partition_by: ["year(at)", "month(at)", "identity(kind)"] },
    [topics.pruned]: { mode: "append", table: "pruned", partition_by: ["bucket(8, id)"] },
    // Created by Spark with a spec of its own; no partition_by: floe writes in the table's spec.
    [topics.foreign]: { mode: "append", table: "foreign" },
  };
  return buildJob(
    {
      name,
      kafka: { consumer_group: `floe_${name}`, topic_pattern: `^${prefix}.*$`, security: { protocol: "PLAINTEXT" } },
      iceberg: { catalog: { type: "rest", uri: restCatalog.uri }, target_engines: ["databricks", "duckdb", "spark"] },
      streams,
    },
    join(stateDir, "job.yaml"),
  );
}

let readers: Readers;
before(async () => {
  readers = await startReaders();
  for (const topic of Object.values(topics)) await createTopic(topic, 2);
  await readers.spark(`CREATE NAMESPACE IF NOT EXISTS rest.${namespace}`);
  await readers.spark(
    `CREATE TABLE rest.${namespace}.foreign (id bigint, n int, name string, at timestamp) USING iceberg
     PARTITIONED BY (bucket(16, id), bucket(7, n), truncate(3, name), truncate(10, n), hours(at))
     TBLPROPERTIES ('format-version' = '3')`,
  );
});
after(async () => {
  await readers?.close();
  for (const topic of Object.values(topics)) await deleteTopic(topic);
  rmSync(stateDir, { recursive: true, force: true });
});

const DAY = 86_400_000;
const T0 = Date.UTC(2025, 10, 28, 9, 30, 0);
const iso = (ms: number) => new Date(ms).toISOString();
/** A timestamptz as the readers return it: microseconds, UTC. */
const read = (ms: number) => iso(ms).replace(/\.(\d{3})Z$/, ".$1000Z");

const json = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x));
const models = { clicks: [] as Row[], accounts: new Map<number, Row>(), metrics: [] as Row[], pruned: [] as Row[] };

async function produceBatch(batch: number) {
  const clicks = Array.from({ length: 60 }, (_, i) => {
    const id = batch * 100 + i;
    const at = T0 + (i % 5) * 3_600_000 + batch * DAY;
    const value = {
      id,
      name: ["alpha", "alps", "beta", "betamax", "gamma"][i % 5]!,
      region: ["eu", "us", "ap"][i % 3]!,
      at: iso(at),
    };
    models.clicks.push({ id: BigInt(id), name: value.name, region: value.region, at: read(at) });
    return { key: `c${id}`, value: json(value), partition: i % 2 };
  });
  // Keys 0..29; each batch moves every key to another day (and batch 1 moves half to a new id range bucket).
  const accounts = Array.from({ length: 30 }, (_, i) => {
    const updated = T0 + ((i + batch * 3) % 7) * DAY;
    const value = { id: i, tier: `t${batch}`, updated_at: iso(updated) };
    models.accounts.set(i, { id: BigInt(i), tier: value.tier, updated_at: read(updated) });
    return { key: String(i), value: json(value), partition: i % 2 };
  });
  const metrics = Array.from({ length: 40 }, (_, i) => {
    const at = Date.UTC(2024 + (i % 2), (i * 5) % 12, 1 + (i % 27), 3);
    const value = { kind: i % 4 === 0 ? "cpu" : "mem", at: iso(at), v: batch * 1000 + i };
    models.metrics.push({ kind: value.kind, at: read(at), v: BigInt(value.v) });
    return { value: json(value), partition: i % 2 };
  });
  const pruned = Array.from({ length: 80 }, (_, i) => {
    const value = { id: batch * 80 + i, v: `v${batch}_${i}` };
    models.pruned.push({ id: BigInt(value.id), v: value.v });
    return { value: json(value), partition: i % 2 };
  });
  // Values whose partition tuple Spark computes too: negative ids and ints, multi-byte names,
  // instants before 1970.
  const foreign = Array.from({ length: 40 }, (_, i) => {
    const k = batch * 40 + i;
    const value = {
      id: (k * 7919 - 150) * (i % 2 === 0 ? 1 : -1),
      n: k * 37 - 700,
      name: ["été", "😀ab", "xy", "ice", "iceberg"][i % 5],
      at: iso(Date.UTC(1969, 11, 31, 22) + k * 1_900_000),
    };
    return { value: json(value), partition: i % 2 };
  });
  await Promise.all([
    produce(topics.foreign, foreign),
    produce(topics.clicks, clicks),
    produce(topics.accounts, accounts),
    produce(topics.metrics, metrics),
    produce(topics.pruned, pruned),
  ]);
}

const byOrder = (rows: Row[], keys: string[]) =>
  [...rows].sort((a, b) => {
    for (const k of keys) {
      const x = a[k] as string | bigint;
      const y = b[k] as string | bigint;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  });

async function assertModels(where: string) {
  await readers.assertRows(restTable(namespace, "clicks"), byOrder(models.clicks, ["id"]), {
    columns: ["id", "name", "region", "at"],
    orderBy: ["id"],
  });
  await readers.assertRows(restTable(namespace, "accounts"), byOrder([...models.accounts.values()], ["id"]), {
    columns: ["id", "tier", "updated_at"],
    orderBy: ["id"],
  });
  await readers.assertRows(restTable(namespace, "metrics"), byOrder(models.metrics, ["v"]), {
    columns: ["kind", "at", "v"],
    orderBy: ["v"],
  });
  await readers.assertRows(restTable(namespace, "pruned"), byOrder(models.pruned, ["id"]), {
    columns: ["id", "v"],
    orderBy: ["id"],
  });
  console.log(`${where}: every engine reads the model`);
}

async function loadTable(table: string): Promise<Table> {
  const catalog = await loadCatalog({ type: "rest", uri: restCatalog.uri, warehouse: restCatalog.warehouse } as never);
  return Table.load(catalog, { namespace: [namespace], name: table });
}

/** Spark's view of the live data files: their spec and partition tuple. */
async function sparkFiles(table: string): Promise<Row[]> {
  return readers.spark(`SELECT spec_id, partition, record_count FROM rest.${namespace}.${table}.data_files`);
}

test("each transform: partitioned append and upsert tables read back as the model in every engine", async () => {
  await produceBatch(0);
  const report = await syncJob(jobOf(CLICKS_FIRST), { stateDir });
  assert.equal(report.status, "complete");
  await assertModels("batch 0");
  const files = await sparkFiles("clicks");
  // day x 8 buckets x 3-letter prefixes x regions: every file is one tuple; Spark sees the partition struct.
  const tuples = new Set(files.map((f) => json(f.partition)));
  assert.equal(tuples.size, files.length, "one file per tuple");
  const first = files[0]!.partition as Record<string, unknown>;
  assert.deepEqual(Object.keys(first).sort(), ["_kafka_timestamp_day", "id_bucket", "name_trunc", "region"]);
  const metricsSpec = await readers.spark(`SELECT partition FROM rest.${namespace}.metrics.partitions`);
  assert.deepEqual(Object.keys(metricsSpec[0]!.partition as object).sort(), ["at_month", "at_year", "kind"]);
});

test("upsert: keys updated on another day retire their old rows in their old partitions", async () => {
  await produceBatch(1);
  const report = await syncJob(jobOf(CLICKS_FIRST), { stateDir });
  const accounts = report.tables.find((t) => t.table === `${namespace}.accounts`)!;
  assert.equal(accounts.positionsDeleted, 30, "every key's old row retired");
  assert.ok(accounts.deletionVectorsAdded > 1, "DVs in several partitions");
  await assertModels("batch 1");
  // The DVs carry the partition of the file they delete from (Spark's delete_files metadata).
  const dvs = await readers.spark(
    `SELECT d.partition AS dp, f.partition AS fp FROM rest.${namespace}.accounts.delete_files d JOIN rest.${namespace}.accounts.data_files f ON d.referenced_data_file = f.file_path`,
  );
  assert.ok(dvs.length > 0);
  for (const dv of dvs) assert.deepEqual(dv.dp, dv.fp);
});

test("partition_by changed mid-stream: new files in the new spec, old files as they were", async () => {
  const before = await sparkFiles("clicks");
  await produceBatch(2);
  const report = await syncJob(jobOf(CLICKS_EVOLVED), { stateDir });
  assert.equal(report.status, "complete");
  await assertModels("batch 2, clicks evolved");
  const table = await loadTable("clicks");
  assert.equal(table.metadata.defaultSpecId, 1);
  assert.deepEqual(
    specById(table.metadata, 1).fields.map((f) => f.name),
    ["at_hour", "id_bucket_4"],
  );
  const files = await sparkFiles("clicks");
  const old = files.filter((f) => f.spec_id === 0);
  assert.equal(old.length, before.length, "the files of spec 0 are all still there");
  const evolved = files.filter((f) => f.spec_id === 1);
  assert.ok(evolved.length >= 5, "5 hours x up to 4 buckets");
  // Each engine reads only the new rows through the new partition columns' predicate too.
  const since = read(T0 + 2 * DAY)
    .replace("T", " ")
    .replace("Z", "");
  for (const engine of ["duckdb", "spark"] as const) {
    const at = engine === "duckdb" ? '"at"' : "`at`";
    const rows = await readers.sql(
      engine,
      `SELECT count(*) AS n FROM rest.${namespace}.clicks WHERE ${at} >= TIMESTAMP '${since}'`,
    );
    assert.equal(Number(rows[0]!.n), 60, `${engine}: the third batch's rows`);
  }
});

test("maintenance on partitioned tables: compaction within each partition, expiry, orphans; every engine reads the model", async () => {
  const policy: MaintenancePolicy = {
    ...DEFAULT_MAINTENANCE,
    compaction: { ...DEFAULT_MAINTENANCE.compaction, minInputFiles: 2 },
    snapshots: { enabled: true, retainLast: 1, maxAgeMs: 0 },
    manifests: { enabled: true, maxCount: 1 },
    orphans: { enabled: true, olderThanMs: 0 },
  };
  for (const name of ["accounts", "clicks"]) {
    const before = await sparkFiles(name);
    const report = await maintainTable(await loadTable(name), policy);
    assert.ok((report.compaction?.dataFiles ?? 0) > 0, `${name}: files compacted`);
    const after = await sparkFiles(name);
    assert.ok(after.length < before.length, `${name}: ${before.length} files -> ${after.length}`);
    // No two partitions merged: the tuples (per spec) of the live files are those before, less
    // those whose rows were all deleted.
    const tuples = (files: Row[]) => new Set(files.map((f) => json([f.spec_id, f.partition])));
    for (const tuple of tuples(after)) assert.ok(tuples(before).has(tuple), `${name}: ${tuple} existed before`);
    const perTuple = Map.groupBy(after, (f) => json([f.spec_id, f.partition]));
    assert.ok([...perTuple.values()].every((g) => g.length >= 1));
  }
  await assertModels("after maintenance");
  const clicks = await sparkFiles("clicks");
  assert.deepEqual([...new Set(clicks.map((f) => f.spec_id))].sort(), [0, 1], "both specs' files stay in their spec");
});

test("a table Spark partitioned: floe writes in its spec, and each row's tuple is the one Spark computes", async () => {
  const table = await loadTable("foreign");
  assert.equal(table.metadata.partitionSpecs.length, 1, "no evolution without partition_by");
  // Spark inserts the same values floe wrote; its _partition must equal floe's row by row.
  const floeRows = await readers.spark(
    `SELECT id, n, name, at, _partition AS p FROM rest.${namespace}.foreign ORDER BY id, n`,
  );
  assert.equal(floeRows.length, 120);
  await readers.spark(
    `CREATE OR REPLACE TEMPORARY VIEW floe_written AS SELECT id, n, name, at FROM rest.${namespace}.foreign`,
  );
  // Spark's INSERT needs every column: the system columns floe added are null in its rows.
  const described = await readers.spark(`DESCRIBE TABLE rest.${namespace}.foreign`);
  const columns = described.slice(
    0,
    described.findIndex((c) => !c.col_name || String(c.col_name).startsWith("#")),
  );
  const select = columns.map((c) =>
    ["id", "n", "name", "at"].includes(String(c.col_name)) ? c.col_name : `CAST(NULL AS ${c.data_type})`,
  );
  await readers.spark(`INSERT INTO rest.${namespace}.foreign SELECT ${select.join(", ")} FROM floe_written`);
  const pairs = await readers.spark(
    `SELECT f.id, f._partition AS floe, s._partition AS spark
     FROM (SELECT *, _partition FROM rest.${namespace}.foreign WHERE _kafka_offset IS NOT NULL) f
     JOIN (SELECT *, _partition FROM rest.${namespace}.foreign WHERE _kafka_offset IS NULL) s
     ON f.id = s.id AND f.n = s.n`,
  );
  assert.equal(pairs.length, 120);
  for (const pair of pairs) assert.deepEqual(pair.floe, pair.spark, `id ${pair.id}`);
  // And Spark, pruning by those tuples, finds each of floe's rows by its bucketed key.
  for (const row of floeRows.slice(0, 10)) {
    const found = await readers.spark(
      `SELECT count(*) AS c FROM rest.${namespace}.foreign WHERE id = ${row.id} AND _kafka_offset IS NOT NULL`,
    );
    assert.equal(Number(found[0]!.c), 1, `id ${row.id}`);
  }
});

test("a filtered query reads fewer files than the whole table, in PyIceberg, DuckDB and Spark", async () => {
  const id = 7;
  const expected = models.pruned.filter((r) => r.id === BigInt(id));
  assert.equal(expected.length, 1);
  // PyIceberg: plan_files with and without the filter.
  const script = join(dirname(fileURLToPath(import.meta.url)), "readers", "plan_files.py");
  const pyicebergPlan = () =>
    JSON.parse(
      execFileSync(
        readerEnv.python,
        [
          script,
          json({
            uri: restCatalog.uri,
            warehouse: restCatalog.warehouse,
            table: `${namespace}.pruned`,
            filter: `id == ${id}`,
          }),
        ],
        { encoding: "utf8" },
      ),
    ) as { all: number; filtered: number; rows: number };
  const plan = pyicebergPlan();
  assert.ok(plan.all >= 8, `8 buckets over 3 syncs: ${plan.all} files`);
  assert.ok(plan.filtered > 0 && plan.filtered < plan.all, `PyIceberg plans ${plan.filtered} of ${plan.all} files`);
  assert.equal(plan.rows, 1);

  // DuckDB: its scan says how many files it read.
  const filesRead = async (where: string) => {
    const plan = await readers.sql("duckdb", `EXPLAIN ANALYZE SELECT max(v) FROM rest.${namespace}.pruned ${where}`);
    const text = plan.map((row) => Object.values(row).join("\n")).join("\n");
    const match = /Total Files Read: (\d+)/.exec(text);
    assert.ok(match, `no file count in DuckDB's plan: ${text}`);
    return Number(match[1]);
  };
  const duckAll = await filesRead("");
  const duckFiltered = await filesRead(`WHERE id = ${id}`);
  assert.equal(duckAll, plan.all, "DuckDB reads every file without a filter");
  assert.ok(duckFiltered < duckAll, `DuckDB reads ${duckFiltered} of ${duckAll} files`);

  // Remove every data file of another bucket. The ids of each file span the whole range, so only
  // the partition tuple tells an engine it may skip one.
  const table = await loadTable("pruned");
  const snapshot = await planFiles(table, currentSnapshot(table.metadata));
  const bucket = applyTransform({ kind: "bucket", buckets: 8 }, "long", BigInt(id));
  let removed = 0;
  for (const [path, { entry }] of snapshot.dataFiles) {
    if (entry.file.partition.get(1000) !== bucket) {
      await table.io.delete(path);
      removed++;
    }
  }
  assert.ok(removed >= 7, `${removed} files of other buckets removed`);
  const filtered = `SELECT id, v FROM rest.${namespace}.pruned WHERE id = ${id}`;
  // DuckDB keeps the files it read in memory (its external file cache): read them from storage.
  await readers.sql("duckdb", "SET enable_external_file_cache = false");
  for (const engine of ["duckdb", "spark"] as const) {
    assert.deepEqual(await readers.sql(engine, filtered), expected, `${engine} reads only the bucket of id ${id}`);
    // (count(*) alone is answered from the manifests' record counts: the values must be read.)
    await assert.rejects(
      readers.sql(engine, `SELECT max(v || 'x') AS m FROM rest.${namespace}.pruned`),
      `${engine}: a full scan needs the removed files`,
    );
  }
  const pyiceberg = pyicebergPlan();
  assert.equal(pyiceberg.rows, 1, "PyIceberg's filtered scan reads only the bucket's files");
});
