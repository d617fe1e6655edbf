// Whole syncs into partitioned tables, in process against the embedded catalog: every data file
// holds one partition tuple (checked row by row with the transforms), an upsert whose key moves
// to another partition retires its old row with a DV of the old file's partition and spec,
// partition_by changed mid-stream evolves the spec and leaves old files as they were, compaction
// stays within a partition, and a partition_by on a missing column fails naming its place.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { partitionKey, planDataFileRewrite } from "#src/iceberg/commit/rewrite-data-files.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { readManifestList } from "#src/iceberg/scan/read-manifests.ts";
import type { PartitionValues } from "#src/iceberg/spec/manifest.ts";
import { currentSchema, currentSnapshot, specById } from "#src/iceberg/spec/table-metadata.ts";
import { applyTransform } from "#src/iceberg/spec/transform.ts";
import type { PrimitiveType } from "#src/iceberg/spec/types.ts";
import { Table } from "#src/iceberg/table.ts";
import { buildJob, type JobFileSpec } from "../../helpers/job-file.ts";
import { type SyncFixture, sortBy, syncFixture } from "./fixture.ts";
import { tableRows } from "./table-rows.ts";

let f: SyncFixture;
const DAY_MS = 86_400_000;
const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

const streams = (accountsPartitionBy: string[], eventsPartitionBy: string[]): JobFileSpec["streams"] => ({
  accounts: {
    mode: "upsert",
    dedup_keys: ["id"],
    columns: { updated_at: "timestamptz" },
    partition_by: accountsPartitionBy,
  },
  events: { mode: "append", partition_by: eventsPartitionBy },
  broken: { mode: "append", partition_by: ["bucket(4, nope)"] },
});
const ACCOUNTS = ["day(updated_at)", "bucket(4, id)", "truncate(2, name)"];

before(async () => {
  f = await syncFixture({ streams: streams(ACCOUNTS, ["hour(_kafka_timestamp)", "region"]) });
  f.source.createTopic("accounts", 2).createTopic("events").createTopic("broken");
});
after(() => f.close());

async function load(name: string): Promise<Table> {
  return Table.load(f.catalog, { namespace: [f.job.namespace], name });
}

/** Every live data file's rows: each row's transforms give its file's tuple. */
async function assertFilesHoldOneTuple(name: string): Promise<number> {
  const table = await load(name);
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  const schema = currentSchema(table.metadata);
  let files = 0;
  for (const [path, { entry, manifest }] of plan.dataFiles) {
    const spec = specById(table.metadata, manifest.partitionSpecId);
    const rows = await fileRows(table, path);
    for (const row of rows) {
      for (const field of spec.fields) {
        const source = schema.fields.find((s) => s.id === field.sourceId)!;
        const expected = applyTransform(
          field.transform,
          source.type as PrimitiveType,
          (row[source.name] ?? null) as never,
        );
        assert.deepEqual(entry.file.partition.get(field.fieldId) ?? null, expected, `${path}: ${field.name}`);
      }
    }
    files++;
  }
  return files;
}

async function fileRows(table: Table, path: string): Promise<Record<string, unknown>[]> {
  const { parquetReadObjects } = await import("hyparquet");
  const { zstdDecompressSync } = await import("node:zlib");
  const bytes = await table.io.read(path);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  // Raw values, as the transforms take them: timestamps as micros.
  return (await parquetReadObjects({
    file: buffer,
    compressors: { ZSTD: (input: Uint8Array) => zstdDecompressSync(input) },
    parsers: {
      timestampFromMilliseconds: (v: bigint) => v * 1000n,
      timestampFromMicroseconds: (v: bigint) => v,
      timestampFromNanoseconds: (v: bigint) => v,
      dateFromDays: (v: number) => v,
      stringFromBytes: (v: Uint8Array) => (v === undefined ? v : new TextDecoder().decode(v)),
    },
  })) as Record<string, unknown>[];
}

/** id -> [name, updated_at ms] of the latest message per key. */
const model = new Map<number, [string, number]>();
function produceAccounts(updates: [id: number, name: string, updatedAt: number][]) {
  f.source.produce(
    "accounts",
    updates.map(([id, name, at]) => ({ key: String(id), value: { id, name, updated_at: iso(at) }, partition: id % 2 })),
  );
  for (const [id, name, at] of updates) model.set(id, [name, at]);
}

async function assertAccountsModel() {
  const rows = sortBy(await f.rows("accounts"), "id");
  assert.deepEqual(
    rows.map((r) => [Number(r.id), r.name, Number((r.updated_at as Date).getTime?.() ?? r.updated_at)]),
    [...model].sort(([a], [b]) => a - b).map(([id, [name, at]]) => [id, name, at]),
  );
}

test("upsert into a partitioned table: a file per tuple, and a key updated on another day retires its old row", async () => {
  produceAccounts(Array.from({ length: 40 }, (_, i) => [i, ["alpha", "beta", "gamma"][i % 3]!, T0 + (i % 3) * DAY_MS]));
  await f.sync();
  await assertAccountsModel();
  const table = await load("accounts");
  assert.deepEqual(
    specById(table.metadata, table.metadata.defaultSpecId).fields.map((x) => [x.name, x.fieldId]),
    [
      ["updated_at_day", 1000],
      ["id_bucket", 1001],
      ["name_trunc", 1002],
    ],
  );
  const files = await assertFilesHoldOneTuple("accounts");
  assert.ok(files > 3, `several tuples, several files (${files})`);

  // Keys 0..9 move to a day and a name of another partition; 10 stays in its own.
  produceAccounts([
    ...Array.from({ length: 10 }, (_, i): [number, string, number] => [i, "zeta", T0 + 5 * DAY_MS]),
    [10, "beta", T0 + DAY_MS],
  ]);
  const { report } = await f.sync();
  const t = report.tables.find((x) => x.topic === "accounts")!;
  assert.equal(t.positionsDeleted, 11, "every old row retired, whichever partition it was in");
  await assertAccountsModel();
  await assertFilesHoldOneTuple("accounts");
  // The DVs carry their data file's partition and spec.
  const after = await load("accounts");
  const plan = await planFiles(after, currentSnapshot(after.metadata));
  assert.ok(plan.deletionVectors.size > 0);
  for (const [path, dv] of plan.deletionVectors) {
    const data = plan.dataFiles.get(path)!;
    assert.equal(dv.manifest.partitionSpecId, data.manifest.partitionSpecId);
    assert.deepEqual(nonNull(dv.entry.file.partition), nonNull(data.entry.file.partition));
  }
});

const nonNull = (m: PartitionValues) => [...m].filter(([, v]) => v !== null && v !== undefined);

test("compaction stays within a partition: each new file holds one tuple of its group's spec", async () => {
  // Many small commits: many small files per partition.
  for (let round = 0; round < 4; round++) {
    // New keys of the same few partitions each round; one key of the round before updated.
    produceAccounts([
      ...Array.from({ length: 12 }, (_, i): [number, string, number] => [
        100 + 12 * round + i,
        "nn",
        T0 + (i % 2) * DAY_MS,
      ]),
      [100 + 12 * Math.max(0, round - 1), "nn", T0],
    ]);
    await f.sync();
  }
  const table = await load("accounts");
  const before = await planFiles(table, currentSnapshot(table.metadata));
  const tuples = new Set(
    [...before.dataFiles.values()].map((l) =>
      JSON.stringify(nonNull(l.entry.file.partition), (_, v) => (typeof v === "bigint" ? `${v}` : v)),
    ),
  );
  const { groups } = await planDataFileRewrite(table, { minInputFiles: 2 });
  assert.ok(groups.length > 1);
  for (const group of groups) {
    const keys = new Set(group.map((l) => partitionKey(l.manifest.partitionSpecId, l.entry.file.partition)));
    assert.equal(keys.size, 1, "a rewrite group holds files of one spec and one tuple");
  }
  const result = await table.rewriteDataFiles({ minInputFiles: 2 });
  assert.ok(result.rewrittenDataFiles > 0, "something was compacted");
  await assertAccountsModel();
  const after = await load("accounts");
  const plan = await planFiles(after, currentSnapshot(after.metadata));
  const afterTuples = new Set(
    [...plan.dataFiles.values()].map((l) =>
      JSON.stringify(nonNull(l.entry.file.partition), (_, v) => (typeof v === "bigint" ? `${v}` : v)),
    ),
  );
  assert.deepEqual([...afterTuples].sort(), [...tuples].sort(), "the same partitions, none merged away");
  assert.ok(plan.dataFiles.size < before.dataFiles.size);
  await assertFilesHoldOneTuple("accounts");
  // The key index follows the compaction: keys in the rewritten files, moved to another day, are
  // retired from the new files.
  produceAccounts(Array.from({ length: 12 }, (_, i): [number, string, number] => [100 + i, "moved", T0 + 9 * DAY_MS]));
  const { report } = await f.sync();
  assert.equal(report.tables.find((x) => x.topic === "accounts")!.positionsDeleted, 12);
  await assertAccountsModel();
});

test("partition_by changed mid-stream: a new default spec for new files, old files keep theirs", async () => {
  const produce = (n: number, from: number) =>
    f.source.produce(
      "events",
      Array.from({ length: n }, (_, i) => ({
        value: { seq: from + i, region: ["eu", "us", "ap"][i % 3] },
        timestamp: BigInt(T0 + (i % 4) * 3_600_000),
      })),
    );
  produce(30, 0);
  await f.sync();
  const first = await load("events");
  assert.equal(first.metadata.defaultSpecId, 0);
  const filesBefore = await assertFilesHoldOneTuple("events");
  assert.equal(filesBefore, 12, "4 hours x 3 regions");

  const evolved = buildJob(
    {
      name: "unit",
      kafka: { bootstrap_servers: ["memory:9092"] },
      iceberg: { catalog: { type: "sql", warehouse: "./warehouse" } },
      streams: streams(ACCOUNTS, ["day(_kafka_timestamp)", "bucket(2, seq)"]),
    },
    join(f.dir, "job.yaml"),
  );
  produce(30, 30);
  await f.sync({}, evolved);
  const table = await load("events");
  assert.equal(table.metadata.defaultSpecId, 1);
  assert.deepEqual(
    specById(table.metadata, 1).fields.map((x) => [x.name, x.fieldId]),
    [
      ["_kafka_timestamp_day", 1002],
      ["seq_bucket_2", 1003],
    ],
  );
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  const bySpec = Map.groupBy(plan.dataFiles.values(), (l) => l.manifest.partitionSpecId);
  assert.equal(bySpec.get(0)?.length, 12, "the files of the first spec are left as they were");
  assert.equal(bySpec.get(1)?.length, 2, "one day x 2 buckets");
  await assertFilesHoldOneTuple("events");
  const manifests = await readManifestList(table, currentSnapshot(table.metadata)!);
  assert.deepEqual([...new Set(manifests.map((m) => m.partitionSpecId))].sort(), [0, 1]);
  const rows = await tableRows(f.catalog, f.job.namespace, "events");
  assert.deepEqual(
    rows.map((r) => Number(r.seq)).sort((a, b) => a - b),
    Array.from({ length: 60 }, (_, i) => i),
  );
  // The same partition_by again changes nothing.
  produce(3, 60);
  await f.sync({}, evolved);
  assert.equal((await load("events")).metadata.partitionSpecs.length, 2);
});

test("partition_by on a column the table does not have: the sync fails naming the entry and the table", async () => {
  f.source.produce("broken", [{ value: { a: 1 } }]);
  const { error } = await f.failingSync();
  assert.match(String(error), /streams\.broken\.partition_by\.0: no column nope in table unit_topics\.broken/);
});

test("partition_by on a field inside a struct: the sync fails saying floe partitions by top-level columns only", async () => {
  const own = await syncFixture({ streams: { nested: { mode: "append", partition_by: ["customer.region"] } } });
  own.source.createTopic("nested").produce("nested", [{ value: { customer: { region: "eu" } } }]);
  const { error } = await own.failingSync();
  await own.close();
  assert.match(
    String(error),
    /streams\.nested\.partition_by\.0: customer\.region is a field inside struct customer: floe partitions by top-level columns only in table unit_topics\.nested/,
  );
});
