// Schema changes through a whole sync, against the real broker and the real REST catalog, read
// back through DuckDB: a value that does not fit its column is a dead letter naming field, column
// type and value type (sync-type-drift-*.test.ts have the rest of that story); a new field is a
// new column in the same sync; int and float columns widen.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SYSTEM_COLUMNS } from "#src/decode/system-columns.ts";
import { unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import { currentSchema } from "#src/iceberg/spec/table-metadata.ts";
import { committedOffsets } from "#src/pipeline/snapshot-offsets.ts";
import { createTopic, produce } from "../../dev/kafka.ts";
import { restTable } from "../../dev/readers.ts";
import {
  badMessagesSuite,
  catalog,
  jobFor,
  json,
  loadTable,
  readers,
  stateDir,
  tableReport,
} from "../helpers/bad-messages-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

badMessagesSuite();

test("in the first sync, a value that does not fit the column its batch gives the field is a dead letter", async () => {
  const { job, namespace, topic } = jobFor("types", { prices: { mode: "append" } });
  const t = topic("prices");
  await createTopic(t);
  await produce(t, [{ value: json({ id: 1, amount: 5 }) }, { value: json({ id: 2, amount: "lots" }) }]);
  const report = tableReport(await syncJob(job, { stateDir }), namespace, "prices");
  assert.deepEqual([report.recordsAdded, report.deadLetters], [1, 1]);
  assert.deepEqual(await readers.rows("duckdb", restTable(namespace, "prices"), { columns: ["id", "amount"] }), [
    { id: 1n, amount: 5n },
  ]);
  assert.deepEqual(
    await readers.rows("duckdb", restTable(namespace, "prices__dlq"), {
      columns: ["_kafka_offset", "_error_kind", "_error"],
    }),
    [
      {
        _kafka_offset: 1n,
        _error_kind: "type-mismatch",
        _error:
          'field "amount": column type long, value type string (the column is new in this commit, and long so far)',
      },
    ],
  );
});

test("a value that does not fit the table's column is a dead letter in a later sync, beside other bad messages", async () => {
  const { job, namespace, topic } = jobFor("types2", { prices: { mode: "upsert", dedup_keys: ["id"] } });
  const t = topic("prices");
  await createTopic(t);
  await produce(t, [{ value: json({ id: 1, amount: 5 }) }]);
  await syncJob(job, { stateDir });
  await produce(t, [
    { value: json({ id: 2, amount: 7 }) },
    { value: "garbage" },
    { value: json({ id: 3, amount: "12 euros" }) },
  ]);
  const report = tableReport(await syncJob(job, { stateDir }), namespace, "prices");
  assert.deepEqual([report.recordsAdded, report.deadLetters], [1, 2]);
  assert.deepEqual(await readers.rows("duckdb", restTable(namespace, "prices"), { columns: ["id", "amount"] }), [
    { id: 1n, amount: 5n },
    { id: 2n, amount: 7n },
  ]);
  assert.deepEqual(
    await readers.rows("duckdb", restTable(namespace, "prices__dlq"), {
      columns: ["_kafka_offset", "_error_kind", "_error"],
    }),
    [
      {
        _kafka_offset: 2n,
        _error_kind: "not-json",
        _error: "value is not JSON: Unexpected token 'g', \"garbage\" is not valid JSON",
      },
      {
        _kafka_offset: 3n,
        _error_kind: "type-mismatch",
        _error: 'field "amount": column type long, value type string',
      },
    ],
  );
  const table = (await loadTable(namespace, "prices"))!;
  assert.deepEqual(committedOffsets(table.metadata, "prices").get(t), new Map([[0, 4n]]));
});

test("a new field becomes a new column in the same sync; earlier rows read null", async () => {
  const { job, namespace, topic } = jobFor("evolve", { people: { mode: "append" } });
  const t = topic("people");
  await createTopic(t);
  await produce(t, [{ value: json({ id: 1, name: "a" }) }]);
  await syncJob(job, { stateDir });

  await produce(t, [
    { value: json({ id: 2, name: "b" }) },
    { value: json({ id: 3, name: "c", score: 1.5, since: "2024-05-01T10:00:00Z" }) },
    { value: json({ id: 4, name: "d", score: 2 }) },
  ]);
  const report = await syncJob(job, { stateDir });
  assert.deepEqual(tableReport(report, namespace, "people").columnsAdded, ["score", "since"]);
  const table = (await loadTable(namespace, "people"))!;
  const fields = currentSchema(table.metadata).fields;
  assert.deepEqual(
    fields.filter((f) => f.name === "score" || f.name === "since").map((f) => [f.name, f.type]),
    [
      ["score", "double"],
      ["since", "timestamptz"],
    ],
  );
  assert.deepEqual(
    await readers.rows("duckdb", restTable(namespace, "people"), { columns: ["id", "score", "since"] }),
    [
      { id: 1n, score: null, since: null },
      { id: 2n, score: null, since: null },
      { id: 3n, score: 1.5, since: "2024-05-01T10:00:00.000000Z" },
      { id: 4n, score: 2, since: null },
    ],
  );
});

test("an int column widens to long and a float column to double, in the sync whose values need it", async () => {
  const { job, namespace, topic } = jobFor("widen", { counts: { mode: "append" } });
  const t = topic("counts");
  await createTopic(t);
  // A table made by another writer, with an int and a float column (floe itself makes long and double).
  if (!(await catalog.namespaceExists([namespace]))) await catalog.createNamespace([namespace]);
  await catalog.createTable(
    { namespace: [namespace], name: "counts" },
    {
      schema: {
        schemaId: 0,
        fields: [
          { id: 1, name: "qty", required: false, type: "int" },
          { id: 2, name: "ratio", required: false, type: "float" },
        ],
      },
      spec: unpartitioned,
      properties: {},
    },
  );
  await produce(t, [{ value: json({ qty: 7, ratio: 0.5 }) }, { value: json({ qty: 3_000_000_000, ratio: 0.1 }) }]);
  const report = await syncJob(job, { stateDir });
  assert.equal(tableReport(report, namespace, "counts").recordsAdded, 2);
  const table = (await loadTable(namespace, "counts"))!;
  const schema = currentSchema(table.metadata);
  assert.deepEqual(
    schema.fields.filter((f) => f.id <= 2).map((f) => [f.id, f.name, f.type]),
    [
      [1, "qty", "long"],
      [2, "ratio", "double"],
    ],
  );
  assert.ok(
    SYSTEM_COLUMNS.every((s) => schema.fields.some((f) => f.name === s.name)),
    "system columns added",
  );
  assert.deepEqual(await readers.rows("duckdb", restTable(namespace, "counts"), { columns: ["qty", "ratio"] }), [
    { qty: 7n, ratio: 0.5 },
    { qty: 3_000_000_000n, ratio: 0.1 },
  ]);
});
