// Values no column holds, against the real broker and REST catalog, read back through DuckDB,
// PyIceberg and Spark and compared with a model: a timestamptz column that gets a date, a dedup
// key written 1 and "1" (and the way out: declaring it string), integers beyond the long range,
// a value nested 10,000 levels deep, the numbers 1e400 and -1e400, and fields named like what
// every object inherits.

import assert from "node:assert/strict";
import { test } from "node:test";
import { restTable } from "../../dev/readers.ts";
import {
  assertFailsAt,
  DriftModel,
  driftSuite,
  jobFor,
  json,
  loadTable,
  newTopic,
  type Row,
  readers,
  stateDir,
  tableReport,
} from "../helpers/drift-sync.ts";
import { committingEvery } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";

driftSuite();

test("a timestamptz column that later receives a date: the date is a dead letter", async () => {
  const topic = await newTopic("timestamp");
  const { job, namespace } = jobFor("timestamp", topic, { mode: "append" });
  const model = new DriftModel(topic).row(json({ at: "2026-10-29T15:22:04Z" }), {
    at: "2026-10-29T15:22:04.000000Z",
  });
  await model.produce();
  await syncJob(job, { stateDir });
  model
    .dead(
      json({ at: "2026-10-29" }),
      "type-mismatch",
      'field "at": column type timestamptz, value type string (a timestamp needs a date, a time and a zone offset)',
    )
    .row(json({ at: "2026-10-30T01:00:00+02:00" }), { at: "2026-10-29T23:00:00.000000Z" });
  await model.produce();
  const report = await syncJob(job, { stateDir });
  assert.equal(report.status, "complete");
  await model.assertLanded(namespace, ["at"]);
});

test('a dedup key written 1 and then "1": a dead letter; declared string, both are one key', async () => {
  const topic = await newTopic("key");
  const { job, namespace } = jobFor("key", topic, { mode: "upsert", dedup_keys: ["id"] });
  const model = new DriftModel(topic).row(json({ id: 1, v: "a" }), { id: 1n, v: "a", _op_type: "c" });
  await model.produce();
  await syncJob(job, { stateDir });
  model
    .dead(json({ id: "1", v: "b" }), "type-mismatch", 'field "id": column type long, value type string')
    .row(json({ id: 2, v: "c" }), { id: 2n, v: "c", _op_type: "c" });
  await model.produce();
  await syncJob(job, { stateDir });
  await model.assertLanded(namespace, ["id", "v", "_op_type"]);

  // A declaration cannot change the table's column: the sync says so before it reads a message.
  const { job: contradicted } = jobFor("key", topic, { mode: "upsert", dedup_keys: ["id"], columns: { id: "string" } });
  await assert.rejects(syncJob(contradicted, { stateDir }), {
    name: "DeclaredColumnError",
    message: new RegExp(`^topic ${topic}, table t: column "id" declared under columns: the table has it as long`),
  });

  // The way out loses nothing: a new table whose key column is declared string takes both.
  const { job: declared, namespace: declaredNamespace } = jobFor("key_string", topic, {
    mode: "upsert",
    dedup_keys: ["id"],
    columns: { id: "string" },
  });
  const report = await syncJob(committingEvery(declared, 1), { stateDir });
  assert.equal(report.status, "complete");
  await readers.assertRows(
    restTable(declaredNamespace, "t"),
    [
      { id: "1", v: "b", _kafka_offset: 1n },
      { id: "2", v: "c", _kafka_offset: 2n },
    ],
    { columns: ["id", "v", "_kafka_offset"], orderBy: ["id"] },
  );
  assert.equal(await loadTable(declaredNamespace, "t__dlq"), undefined);
});

test("integers beyond the long range are dead letters; the longest longs land", async () => {
  const topic = await newTopic("huge");
  const { job, namespace } = jobFor("huge", topic, { mode: "append" });
  const beyond = (field: string, column: string, digits: number) =>
    `field "${field}": column type ${column}, value type integer beyond the long range ` +
    `(${digits} digits; a long holds -2^63 to 2^63-1): produce it as a string, or declare the column string`;
  const model = new DriftModel(topic)
    .row(json({ id: 1, n: 5 }), { id: 1n, n: 5n })
    .dead('{"id":2,"fresh":123456789012345678901234567890}', "out-of-range", beyond("fresh", "(new column)", 30));
  await model.produce();
  await syncJob(job, { stateDir });
  model
    .dead('{"id":3,"n":18446744073709551615}', "out-of-range", beyond("n", "long", 20))
    .dead('{"id":4,"n":-9223372036854775809}', "out-of-range", beyond("n", "long", 19))
    .row('{"id":5,"n":-9223372036854775808}', { id: 5n, n: -9223372036854775808n })
    .row('{"id":6,"n":9223372036854775807}', { id: 6n, n: 9223372036854775807n });
  await model.produce();
  await syncJob(job, { stateDir });
  await model.assertLanded(namespace, ["id", "n"]);
});

test("a value nested 10,000 levels deep is a dead letter, however it is parsed; with on_error: fail it names the message", async () => {
  const topic = await newTopic("deep");
  // Declared json: the nested values land as their JSON text, the depth limit holds all the same.
  const { job, namespace } = jobFor("deep", topic, { mode: "append", columns: { deep: "json" } });
  const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
  const tooDeep = 'field "deep" is nested more than 1000 levels deep';
  const model = new DriftModel(topic)
    .row(json({ id: 1, deep: [[1]] }), { id: 1n, deep: "[[1]]" })
    .dead(`{"id":2,"deep":${deep}}`, "too-deep", tooDeep)
    // A 16-digit number sends the message through JSON.parse's reviver, which recurses.
    .dead(`{"id":3,"big":1234567890123456789,"deep":${deep}}`, "too-deep", tooDeep)
    .dead(`{"id":4,"deep":${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`, "too-deep", tooDeep)
    .row(json({ id: 5, deep: { a: { b: [] } } }), { id: 5n, deep: '{"a":{"b":[]}}' });
  await model.produce();
  const report = await syncJob(job, { stateDir });
  assert.deepEqual([tableReport(report, namespace).recordsAdded, tableReport(report, namespace).deadLetters], [2, 3]);
  await model.assertLanded(namespace, ["id", "deep"]);

  const { job: strict, namespace: strictNamespace } = jobFor("deep_fail", topic, {
    mode: "append",
    on_error: "fail",
    columns: { deep: "json" },
  });
  await assertFailsAt(strict, strictNamespace, topic, `partition 0 offset 1: too-deep: ${tooDeep}`);
});

test("1e400, -1e400 and a 401-digit integer in a double column are dead letters, not infinities", async () => {
  const topic = await newTopic("infinite");
  // meta declared json: its nested numbers are checked as they are parsed, and land as JSON text.
  const { job, namespace } = jobFor("infinite", topic, { mode: "append", columns: { meta: "json" } });
  const beyond = (field: string, literal: string) =>
    `field "${field}": the number ${literal} is beyond the range of a double (about ±1.8e308, ` +
    "non-zero magnitudes from 5e-324): no Iceberg type holds it; produce it as a string";
  const model = new DriftModel(topic)
    .row(json({ id: 1, x: 1.5 }), { id: 1n, x: 1.5, meta: null })
    .dead('{"id":2,"x":1e400}', "out-of-range", beyond("x", "1e400"))
    .dead('{"id":3,"x":-1e400}', "out-of-range", beyond("x", "-1e400"))
    .dead('{"id":4,"meta":{"v":[1E+400]}}', "out-of-range", beyond("meta", "1E+400"))
    .dead('{"id":5,"x":1e-400}', "out-of-range", beyond("x", "1e-400"))
    .row(json({ id: 6, x: 2, meta: { v: [1] } }), { id: 6n, x: 2, meta: '{"v":[1]}' })
    // An integer of 401 digits is exact as JSON text, and beyond a double column's range.
    .dead(
      `{"id":7,"x":1${"0".repeat(400)}}`,
      "out-of-range",
      'field "x": column type double, value type integer beyond the long range (401 digits; a double holds about ' +
        "±1.8e308): produce it as a string, or declare the column string",
    )
    .row(`{"id":8,"meta":[1${"0".repeat(400)}]}`, { id: 8n, x: null, meta: `[1${"0".repeat(400)}]` });
  await model.produce();
  await syncJob(job, { stateDir });
  await model.assertLanded(namespace, ["id", "x", "meta"]);
});

test("fields named like what every object inherits (__proto__, constructor, toString) are columns like any other", async () => {
  const topic = await newTopic("inherited");
  const { job, namespace } = jobFor("inherited", topic, { mode: "append" });
  const row = (values: Row) => ({ ["__proto__"]: null, constructor: null, toString: null, ok: null, ...values });
  const model = new DriftModel(topic)
    .row('{"__proto__":1,"constructor":"c","toString":3}', row({ ["__proto__"]: 1n, constructor: "c", toString: 3n }))
    .row(json({ ok: 1 }), row({ ok: 1n }))
    .row(json({ constructor: "d" }), row({ constructor: "d" }));
  await model.produce();
  const report = await syncJob(job, { stateDir });
  assert.equal(report.status, "complete");
  await model.assertLanded(namespace, ["__proto__", "constructor", "toString", "ok"]);
});
