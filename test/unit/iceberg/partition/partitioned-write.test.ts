// Partitioned writes into the embedded catalog: rows split per partition tuple into files whose
// entries carry the tuple and the spec id, manifests of that spec with partition summaries, the
// take of rows of every column layout, and partition evolution's metadata updates.
import assert from "node:assert/strict";
import { test } from "node:test";
import type * as arrow from "apache-arrow";
import { bindPartitionSpec, partitionSpecUpdates } from "#src/iceberg/commit/update-partition-spec.ts";
import { writeDataFileRows } from "#src/iceberg/data-writer.ts";
import { ColumnBatchBuilder } from "#src/iceberg/parquet/column-batch.ts";
import { partitionRows } from "#src/iceberg/parquet/partition-rows.ts";
import { takeRows } from "#src/iceberg/parquet/take-rows.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { readManifestList } from "#src/iceberg/scan/read-manifests.ts";
import type { Transform } from "#src/iceberg/spec/partition-spec.ts";
import type { Schema } from "#src/iceberg/spec/schema.ts";
import { decodeSingleValue, type SingleValue } from "#src/iceberg/spec/single-value.ts";
import { currentSnapshot, defaultSpec } from "#src/iceberg/spec/table-metadata.ts";
import { applyTransform } from "#src/iceberg/spec/transform.ts";
import { decimal, type NestedField, type PrimitiveType } from "#src/iceberg/spec/types.ts";
import { scratchCatalog } from "../../../helpers/scratch-catalog.ts";

const scratch = scratchCatalog("partitioned-write");

const fields: NestedField[] = [
  { id: 1, name: "id", required: false, type: "long" },
  { id: 2, name: "ts", required: false, type: "timestamptz" },
  { id: 3, name: "name", required: false, type: "string" },
  { id: 4, name: "region", required: false, type: "string" },
  { id: 5, name: "n", required: false, type: "int" },
  { id: 6, name: "amount", required: false, type: decimal(9, 2) },
  { id: 7, name: "day", required: false, type: "date" },
  {
    id: 8,
    name: "tags",
    required: false,
    type: { kind: "list", elementId: 9, elementRequired: false, element: "string" },
  },
  { id: 10, name: "u", required: false, type: "uuid" },
  { id: 11, name: "bin", required: false, type: "binary" },
];
const schema: Schema = { schemaId: 0, fields };
const DAY = 86_400_000_000n;

function rowsOf(count: number): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => ({
    id: BigInt(i * 7 - 20),
    ts: i % 9 === 0 ? null : 1_700_000_000_000_000n + BigInt(i % 3) * DAY - (i % 2 === 0 ? 0n : 1n),
    name: ["apple", "apricot", "banana", "ba", null, "😀😀x"][i % 6],
    region: i % 4 === 0 ? "eu" : "us",
    n: i % 5 === 0 ? null : i * 3 - 40,
    amount: BigInt(i * 13 - 100),
    day: 19_000 + (i % 40) - 20,
    tags: i % 3 === 0 ? null : [`t${i}`, `u${i % 2}`],
    u: i % 2 === 0 ? null : new Uint8Array(16).fill(i % 3),
    bin: Uint8Array.of(i % 2, i % 3, 7),
  }));
}

function build(records: readonly Record<string, unknown>[]): arrow.Table {
  const builder = new ColumnBatchBuilder(schema);
  for (const r of records) builder.appendRow(r);
  return builder.build();
}

const typeOf = (name: string) => fields.find((f) => f.name === name)!.type as PrimitiveType;
/** Row values in single-value form, the form of partition tuples. */
function singleValue(name: string, value: unknown): SingleValue | null {
  if (value === null || value === undefined) return null;
  if (name === "u") {
    const hex = Buffer.from(value as Uint8Array).toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  return value as SingleValue;
}

test("partitionRows: every row's tuple is the transforms of its values, each transform on each type", () => {
  const records = rowsOf(200);
  const table = build(records);
  const cases: [string, Transform][] = [
    ["ts", { kind: "day" }],
    ["ts", { kind: "hour" }],
    ["ts", { kind: "month" }],
    ["ts", { kind: "year" }],
    ["ts", { kind: "bucket", buckets: 5 }],
    ["id", { kind: "bucket", buckets: 16 }],
    ["id", { kind: "truncate", width: 10 }],
    ["id", { kind: "identity" }],
    ["n", { kind: "truncate", width: 7 }],
    ["n", { kind: "bucket", buckets: 3 }],
    ["name", { kind: "truncate", width: 2 }],
    ["name", { kind: "bucket", buckets: 8 }],
    ["name", { kind: "identity" }],
    ["amount", { kind: "truncate", width: 50 }],
    ["amount", { kind: "bucket", buckets: 6 }],
    ["day", { kind: "month" }],
    ["day", { kind: "day" }],
    ["day", { kind: "bucket", buckets: 4 }],
    ["u", { kind: "identity" }],
    ["u", { kind: "bucket", buckets: 4 }],
    ["bin", { kind: "truncate", width: 1 }],
    ["bin", { kind: "bucket", buckets: 4 }],
    ["bin", { kind: "identity" }],
  ];
  for (const [column, transform] of cases) {
    const spec = bindPartitionSpec(schema, [
      { column, transform },
      { column: "region", transform: { kind: "identity" } },
    ]);
    const split = partitionRows(spec, schema, table);
    const seen = new Set<number>();
    const keys = new Set<string>();
    split.rows.forEach((rows, g) => {
      const tuple = split.partitions[g]!;
      keys.add(
        JSON.stringify([...tuple.values()], (_, v) =>
          typeof v === "bigint" ? `${v}n` : v instanceof Uint8Array ? [...v] : v,
        ),
      );
      for (const r of rows) {
        seen.add(r);
        const expected = applyTransform(transform, typeOf(column), singleValue(column, records[r]![column]));
        assert.deepEqual(tuple.get(spec.fields[0]!.fieldId), expected, `${column} ${transform.kind} row ${r}`);
        assert.equal(tuple.get(spec.fields[1]!.fieldId), records[r]!.region);
      }
      assert.ok(
        rows.every((r, i) => i === 0 || rows[i - 1]! < r),
        "rows in table order",
      );
    });
    assert.equal(seen.size, records.length, `${column} ${transform.kind}: every row in one group`);
    assert.equal(keys.size, split.partitions.length, `${column} ${transform.kind}: each tuple one group`);
  }
});

test("takeRows: picked rows of every layout (nulls, lists, decimals, uuids, bytes) come out as they were", () => {
  const records = rowsOf(50);
  const table = build(records);
  const indices = Uint32Array.from([49, 0, 3, 3, 17, 8, 2]);
  const taken = takeRows(table, indices);
  assert.equal(taken.numRows, indices.length);
  const plain = (t: arrow.Table, i: number) =>
    JSON.stringify(t.get(i)?.toJSON(), (_, v) =>
      typeof v === "bigint" ? `${v}` : ArrayBuffer.isView(v) ? [...(v as Uint8Array)] : v,
    );
  for (const [i, r] of indices.entries()) assert.equal(plain(taken, i), plain(table, r), `row ${r}`);
  // A slice (a non-zero offset) takes from where the slice starts.
  const sliced = table.slice(10, 30);
  const fromSlice = takeRows(sliced, Uint32Array.of(0, 19, 5));
  for (const [i, r] of [0, 19, 5].entries()) assert.equal(plain(fromSlice, i), plain(table, 10 + r));
});

test("a partitioned table: one file per tuple carrying it, a manifest of the spec with partition summaries", async () => {
  const spec = bindPartitionSpec(schema, [
    { column: "ts", transform: { kind: "day" } },
    { column: "id", transform: { kind: "bucket", buckets: 4 } },
  ]);
  const table = await scratch.newTable({ fields, spec });
  assert.deepEqual(
    defaultSpec(table.metadata).fields.map((f) => [f.name, f.fieldId]),
    [
      ["ts_day", 1000],
      ["id_bucket", 1001],
    ],
  );
  const records = rowsOf(120);
  const written = await writeDataFileRows(table, build(records));
  const split = partitionRows(defaultSpec(table.metadata), schema, build(records));
  assert.equal(written.length, split.partitions.length, "one file per tuple at this size");
  const positions = new Set<number>();
  for (const { file, rows } of written) {
    assert.equal(Number(file.recordCount), rows.length);
    assert.equal(file.specId, 0);
    for (const r of rows) {
      positions.add(r);
      const ts = records[r]!.ts as bigint | null;
      assert.equal(file.partition.get(1000), ts === null ? null : applyTransform({ kind: "day" }, "timestamptz", ts));
      assert.equal(
        file.partition.get(1001),
        applyTransform({ kind: "bucket", buckets: 4 }, "long", records[r]!.id as bigint),
      );
    }
  }
  assert.equal(positions.size, records.length);
  await table
    .newFastAppend()
    .appendFile(...written.map((w) => w.file))
    .commit();
  const [manifest] = await readManifestList(table, currentSnapshot(table.metadata)!);
  assert.equal(manifest!.partitionSpecId, 0);
  const days = written.map((w) => w.file.partition.get(1000)).filter((d) => d !== null) as number[];
  const [daySummary, bucketSummary] = manifest!.partitions!;
  assert.equal(daySummary!.containsNull, true, "rows without a ts are the null partition");
  assert.equal(decodeSingleValue("date", daySummary!.lowerBound!), Math.min(...days));
  assert.equal(decodeSingleValue("date", daySummary!.upperBound!), Math.max(...days));
  assert.equal(bucketSummary!.containsNull, false);
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  for (const { file } of written) {
    const nonNull = (m: ReadonlyMap<number, unknown>) => [...m].filter(([, v]) => v !== null && v !== undefined);
    assert.deepEqual(
      nonNull(plan.dataFiles.get(file.filePath)!.entry.file.partition),
      nonNull(file.partition),
      "read back as written",
    );
  }
});

test("a tuple's rows past the target size are cut into several files, all of that tuple", async () => {
  const spec = bindPartitionSpec(schema, [{ column: "region", transform: { kind: "identity" } }]);
  const table = await scratch.newTable({ fields, spec });
  const records = rowsOf(4000);
  const written = await writeDataFileRows(table, build(records), { targetFileSizeBytes: 16 * 1024 });
  const byRegion = Map.groupBy(written, (w) => w.file.partition.get(1000));
  assert.deepEqual([...byRegion.keys()].sort(), ["eu", "us"]);
  assert.ok(byRegion.get("us")!.length > 1, "the us rows fill several files");
  for (const [region, files] of byRegion) {
    for (const { rows } of files) for (const r of rows) assert.equal(records[r]!.region, region);
  }
});

test("partition evolution: a new spec with reused field ids, the same spec again is no update, an earlier one comes back", async () => {
  const table = await scratch.newTable({ fields });
  const day = { column: "ts", transform: { kind: "day" } as Transform };
  const bucket = { column: "id", transform: { kind: "bucket", buckets: 8 } as Transform };
  await table.updateSpec([day]);
  assert.equal(table.metadata.defaultSpecId, 1);
  assert.equal(table.metadata.lastPartitionId, 1000);
  await table.updateSpec([day, bucket]);
  assert.equal(table.metadata.defaultSpecId, 2);
  assert.deepEqual(
    defaultSpec(table.metadata).fields.map((f) => [f.name, f.fieldId]),
    [
      ["ts_day", 1000],
      ["id_bucket_8", 1001],
    ],
  );
  assert.deepEqual(partitionSpecUpdates(table.metadata, [day, bucket]).updates, [], "already the default");
  const back = partitionSpecUpdates(table.metadata, [day]);
  assert.deepEqual(back.updates, [{ action: "set-default-spec", specId: 1 }], "an equivalent spec is reused");
  await table.updateSpec([]);
  assert.equal(table.metadata.defaultSpecId, 0, "back to unpartitioned");
  assert.equal(table.metadata.partitionSpecs.length, 3);
  // A commit built on an older default spec is refused by the catalog.
  const stale = partitionSpecUpdates({ ...table.metadata, defaultSpecId: 2 }, [day]);
  await assert.rejects(
    table.commit([{ type: "assert-table-uuid", uuid: table.metadata.tableUuid }, ...stale.requirements], stale.updates),
    /assert-default-spec-id failed/,
  );
});

test("bindPartitionSpec: a missing column and a transform that does not apply are errors naming the field", () => {
  assert.throws(
    () => bindPartitionSpec(schema, [{ column: "nope", transform: { kind: "identity" } }]),
    (e: Error & { index?: number }) => e.index === 0 && /no column nope/.test(e.message),
  );
  assert.throws(
    () =>
      bindPartitionSpec(schema, [
        { column: "id", transform: { kind: "identity" } },
        { column: "name", transform: { kind: "day" } },
      ]),
    (e: Error & { index?: number }) =>
      e.index === 1 && /day does not apply to column name of type string/.test(e.message),
  );
});
