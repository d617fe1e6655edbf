// `_floe_id` through the real broker, schema registry and REST catalog, read by DuckDB, PyIceberg
// and Spark. A table floe creates holds it as fixed[16], the first 16 bytes of SHA-256 over the
// key's JSON array: every engine reads those bytes, filters on them (PyIceberg pruning files by
// their bounds, Spark decoding the bounds), and recomputes them from the key column with the
// expressions docs/job-file.md gives. A table created with a string `_floe_id` (floe's form
// before) keeps getting 32 hex digits, and in both forms an upsert keyed on a field of a decoded
// key, which only `_floe_id` holds, finds its rows again after its key index is rebuilt from it.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { FLOE_ID, SYSTEM_COLUMNS } from "#src/decode/system-columns.ts";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import { typeToString } from "#src/iceberg/spec/types.ts";
import { produce } from "../../dev/kafka.ts";
import { restTable } from "../../dev/readers.ts";
import { jsonSchemaValue, registerSchema } from "../../dev/registry.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { pyicebergEqualBytes } from "../helpers/pyiceberg-read.ts";
import { registrySuite, report, tableSchema } from "../helpers/registry-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const suite = registrySuite();
const { run, topics, stateDir, jobFor } = suite;

/** What `_floe_id` holds for a key of one value: the first 16 bytes of SHA-256 over `[<value>]`. */
const digest = (value: number | string) =>
  createHash("sha256")
    .update(JSON.stringify([value]))
    .digest()
    .subarray(0, 16);
const hex = (value: number | string) => digest(value).toString("hex");

const pyiceberg = { type: "rest", uri: restCatalog.uri, warehouse: restCatalog.warehouse };

test("a new table holds _floe_id as fixed[16]: DuckDB, PyIceberg and Spark read the bytes, filter on them and recompute them from the key", async () => {
  const topic = await topics.create("events");
  const first = [1, 2, 3].map((id) => ({ id, s: `k${id}` }));
  const second = [4, 5, 1].map((id) => ({ id, s: `k${id}` }));
  await produce(
    topic,
    first.map((r) => ({ key: String(r.id), value: JSON.stringify(r) })),
  );
  const name = `${run}_events`;
  const namespace = `${name}_topics`;
  // Append mode with dedup keys: every row carries the hash of its id.
  const job = jobFor(name, { [topic]: { mode: "append", dedup_keys: ["id"], table: "events" } });
  assert.equal((await syncJob(job, { stateDir })).status, "complete");
  await produce(
    topic,
    second.map((r) => ({ key: String(r.id), value: JSON.stringify(r) })),
  );
  assert.equal((await syncJob(job, { stateDir })).status, "complete");

  const field = (await tableSchema(namespace, "events")).fields.find((f) => f.name === FLOE_ID)!;
  assert.equal(typeToString(field.type), "fixed[16]");
  const rows = [...first, ...second];
  await suite.readers.assertRows(
    restTable(namespace, "events"),
    rows.map((r, offset) => ({ _kafka_offset: BigInt(offset), id: BigInt(r.id), _floe_id: digest(r.id) })),
    { columns: ["_kafka_offset", "id", FLOE_ID], orderBy: ["_kafka_offset"] },
  );

  // Recomputed from the key column: DuckDB's and Spark's expressions give the stored bytes.
  const table = `rest.${namespace}.events`;
  assert.deepEqual(
    await suite.readers.sql(
      "duckdb",
      `SELECT count(*) AS n, count(*) FILTER (WHERE _floe_id = unhex(sha256(to_json([id]))[1:32])) AS same FROM ${table}`,
    ),
    [{ n: 6n, same: 6n }],
  );
  assert.deepEqual(
    await suite.readers.sql(
      "spark",
      `SELECT count(*) AS n, count_if(_floe_id = unhex(substr(sha2(to_json(array(id)), 256), 1, 32))) AS same FROM ${table}`,
    ),
    [{ n: 6n, same: 6n }],
  );
  // A string key, the same way.
  assert.deepEqual(await suite.readers.sql("duckdb", `SELECT lower(hex(unhex(sha256(to_json(['k1']))[1:32]))) AS h`), [
    { h: hex("k1") },
  ]);

  // A point lookup by _floe_id: the rows of id 1 (one per sync), in each engine.
  assert.deepEqual(
    await suite.readers.sql(
      "duckdb",
      `SELECT _kafka_offset FROM ${table} WHERE _floe_id = unhex('${hex(1)}') ORDER BY 1`,
    ),
    [{ _kafka_offset: 0n }, { _kafka_offset: 5n }],
  );
  assert.deepEqual(
    await suite.readers.sql("spark", `SELECT _kafka_offset FROM ${table} WHERE _floe_id = X'${hex(4)}'`),
    [{ _kafka_offset: 3n }],
  );
  // PyIceberg prunes the data files by the bounds floe wrote: one file per sync, each kept only
  // when the id lies between its lower and upper bound (the 16 bytes, unsigned order).
  const files = [first, second].map((rs) => rs.map((r) => digest(r.id)).sort(Buffer.compare));
  for (const id of [1, 2, 5, 9]) {
    const wanted = digest(id);
    const kept = files.filter((f) => Buffer.compare(f[0]!, wanted) <= 0 && Buffer.compare(wanted, f.at(-1)!) <= 0);
    const read = await pyicebergEqualBytes(pyiceberg, `${namespace}.events`, ["_kafka_offset"], {
      column: FLOE_ID,
      hex: hex(id),
    });
    assert.deepEqual(
      read.rows.map((r) => Number(r._kafka_offset)).sort(),
      rows.flatMap((r, offset) => (r.id === id ? [offset] : [])),
      `pyiceberg: rows of id ${id}`,
    );
    assert.equal(read.files, kept.length, `pyiceberg: files planned for id ${id}`);
  }
  // Spark decodes the bounds of each data file as the fixed[16] bytes.
  const bounds = await suite.readers.sql(
    "spark",
    `SELECT readable_metrics._floe_id.lower_bound AS lower, readable_metrics._floe_id.upper_bound AS upper
       FROM ${table}.files ORDER BY record_count, lower`,
  );
  assert.deepEqual(
    bounds.map((b) => [(b.lower as Buffer).toString("hex"), (b.upper as Buffer).toString("hex")]).sort(),
    files.map((f) => [f[0]!.toString("hex"), f.at(-1)!.toString("hex")]).sort(),
  );
});

/**
 * Upserts keyed on a field of a JSON Schema key, which only `_floe_id` holds: accounts 1 and 2,
 * then, with the key index gone (rebuilt from `_floe_id`), an update of 1 and a new 3.
 */
async function upsertByKeyField(label: string, createBefore?: (namespace: string, table: string) => Promise<void>) {
  const topic = await topics.create(label);
  const keyId = await registerSchema(
    `${topic}-key`,
    { type: "object", properties: { id: { type: "integer" } }, required: ["id"] },
    { schemaType: "JSON" },
  );
  const valueId = await registerSchema(
    `${topic}-value`,
    { type: "object", properties: { balance: { type: "number" }, owner: { type: "string" } } },
    { schemaType: "JSON" },
  );
  const message = (id: number, owner: string, balance: number) => ({
    key: jsonSchemaValue(keyId, { id }),
    value: jsonSchemaValue(valueId, { owner, balance }),
  });
  const name = `${run}_${label}`;
  const namespace = `${name}_topics`;
  await createBefore?.(namespace, label);
  const job = jobFor(name, {
    [topic]: {
      mode: "upsert",
      format: "json_schema",
      key_format: "json_schema",
      dedup_keys: ["_kafka_key.id"],
      table: label,
    },
  });
  await produce(topic, [message(1, "Ada", 10), message(2, "Bo", 5), message(1, "Ada", 11)]);
  const firstSync = await syncJob(job, { stateDir });
  assert.equal(report(firstSync, label).recordsAdded, 2);
  await produce(topic, [message(1, "Ada", 12.5), message(3, "Cy", 1)]);
  // A state folder of its own: no key index, so it is rebuilt from the table's `_floe_id` column.
  const second = await syncJob(job, { stateDir: mkdtempSync(join(tmpdir(), "floe-floe-id-")) });
  const t = report(second, label);
  assert.deepEqual([t.recordsAdded, t.positionsDeleted], [2, 1], `${label}: the update of 1 retired its old row`);
  return { namespace, table: label };
}

const accounts = (id: (n: number) => unknown) => [
  { owner: "Ada", balance: 12.5, _floe_id: id(1) },
  { owner: "Bo", balance: 5, _floe_id: id(2) },
  { owner: "Cy", balance: 1, _floe_id: id(3) },
];

test("an upsert keyed on a decoded key's field rebuilds its key index from the fixed[16] _floe_id", async () => {
  const { namespace, table } = await upsertByKeyField("keyed");
  const field = (await tableSchema(namespace, table)).fields.find((f) => f.name === FLOE_ID)!;
  assert.equal(typeToString(field.type), "fixed[16]");
  await suite.readers.assertRows(restTable(namespace, table), accounts(digest), {
    columns: ["owner", "balance", FLOE_ID],
    orderBy: ["owner"],
  });
});

test("a table created with a string _floe_id keeps getting hex ids, and its key index rebuilds from them", async () => {
  const { namespace, table } = await upsertByKeyField("legacy", async (ns, name) => {
    // The table as floe created it before: every system column, `_floe_id` a string.
    const catalog = await connectRestCatalog({ uri: restCatalog.uri, warehouse: restCatalog.warehouse });
    await catalog.createNamespace([ns]);
    await catalog.createTable(
      { namespace: [ns], name },
      {
        schema: {
          schemaId: 0,
          fields: SYSTEM_COLUMNS.map((c) => (c.name === FLOE_ID ? { ...c, type: "string" as const } : c)),
        },
        spec: unpartitioned,
      },
    );
  });
  const field = (await tableSchema(namespace, table)).fields.find((f) => f.name === FLOE_ID)!;
  assert.equal(typeToString(field.type), "string", "the table's form stays");
  await suite.readers.assertRows(restTable(namespace, table), accounts(hex), {
    columns: ["owner", "balance", FLOE_ID],
    orderBy: ["owner"],
  });
});
