// Declared columns, against the real broker and REST catalog, read back through DuckDB, PyIceberg
// and Spark: `columns: {amount: double}` gives the same tables whatever the commit interval, and
// `floe check` shows the columns of a sample and proposes the `columns:` to declare.
import assert from "node:assert/strict";
import { test } from "node:test";
import { currentSchema } from "#src/iceberg/spec/table-metadata.ts";
import {
  DriftModel,
  driftSuite,
  jobFor,
  jobSpec,
  json,
  loadTable,
  newTopic,
  readers,
  run,
  stateDir,
} from "../helpers/drift-sync.ts";
import { type FloeOutcome, floe as runFloe } from "../helpers/floe-cli.ts";
import { committingEvery, type StreamSection, writeJobFile } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";

driftSuite();

test("declared columns: {amount: double} give the same tables whatever the commit interval", async () => {
  const partitions = 3;
  const topic = await newTopic("declared", partitions);
  const model = new DriftModel(topic);
  // Every partition starts with ints, then decimals, whole decimals, a string that no double
  // column takes, and an undeclared field that appears late (so that its column id does not
  // depend on the order partitions are read in).
  for (let p = 0; p < partitions; p++) {
    for (let i = 0; i < 6; i++) {
      const id = p * 100 + i;
      if (i === 3) {
        model.dead(
          json({ id, amount: "lots" }),
          "type-mismatch",
          'field "amount": column type double, value type string',
          p,
        );
        continue;
      }
      const text = i === 0 ? `{"id":${id},"amount":${id}}` : i === 4 ? `{"id":${id},"amount":7.0}` : undefined;
      const amount = i === 0 ? id : i === 4 ? 7 : id + 0.25;
      const note = i === 5 ? `n${id}` : null;
      model.row(text ?? json({ id, amount, ...(note === null ? {} : { note }) }), { id: BigInt(id), amount, note }, p);
    }
  }
  await model.produce();

  const stream: StreamSection = { mode: "append", columns: { amount: "double" } };
  const variants: [string, number | undefined, number][] = [
    ["each", 1, 1],
    ["few", 4, 3],
    ["one", undefined, 3],
  ];
  const schemas: unknown[] = [];
  for (const [name, maxMessages, threads] of variants) {
    const { job, namespace } = jobFor(`declared_${name}`, topic, stream, threads);
    const report = await syncJob(maxMessages ? committingEvery(job, maxMessages) : job, { stateDir });
    assert.equal(report.status, "complete", name);
    await model.assertLanded(namespace, ["id", "amount", "note"]);
    const table = (await loadTable(namespace, "t"))!;
    schemas.push(currentSchema(table.metadata).fields.map((f) => [f.id, f.name, f.type]));
    if (name === "each") {
      const snapshots = await readers.sql("spark", `SELECT snapshot_id FROM rest.${namespace}.t.snapshots`);
      assert.ok(snapshots.length >= partitions, `${snapshots.length} commits: the boundaries are there`);
    }
  }
  assert.deepEqual(schemas[1], schemas[0]);
  assert.deepEqual(schemas[2], schemas[0]);
  assert.deepEqual((schemas[0] as unknown[][]).slice(8), [
    [9, "amount", "double"],
    [10, "id", "long"],
    [11, "note", "string"],
  ]);
});

function floe(args: string[]): Promise<FloeOutcome> {
  return runFloe(args, { timeoutMs: 120_000 });
}

test("floe check shows the columns of a sample and proposes the columns: that make every commit agree", async () => {
  const topic = await newTopic("check", 2);
  const model = new DriftModel(topic)
    .row(json({ id: 1, amount: 100, at: "2026-10-29T15:22:04Z" }), { id: 1n, amount: 100, at: "2026-10-29T15:22:04Z" })
    .row(json({ id: 2, amount: 300, at: "2026-10-30T08:00:00Z" }), { id: 2n, amount: 300, at: "2026-10-30T08:00:00Z" })
    .row(json({ id: 3, amount: 99.19, at: "2026-10-29" }), { id: 3n, amount: 99.19, at: "2026-10-29" }, 1);
  await model.produce();
  const { spec, file } = jobSpec("check", topic, { mode: "append" }, 1);
  writeJobFile(file, spec);

  const checked = await floe(["check", "--config", file, "--json"]);
  assert.equal(checked.code, 0, checked.stderr);
  const sample = JSON.parse(checked.stdout).topics[0].sample;
  assert.equal(sample.messages, 3);
  assert.deepEqual(
    sample.columns.map((c: { name: string; type: string; values: object }) => [c.name, c.type, c.values]),
    [
      ["id", "long", { long: 3 }],
      ["amount", "double", { long: 2, double: 1 }],
      ["at", "string", { timestamptz: 2, string: 1 }],
    ],
  );
  assert.deepEqual(sample.proposedColumns, { amount: "double", at: "string" });
  const shown = await floe(["check", "--config", file]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /columns from a sample of 3 messages:\n {4}id {6}long/);
  assert.match(shown.stdout, /\n {4}columns: \{amount: double, at: string\}\n/);

  // Declared as proposed, a sync that commits after every fetched batch lands every message.
  writeJobFile(file, {
    ...jobSpec("check", topic, { mode: "append", columns: { amount: "double", at: "string" } }, 1).spec,
    commit: { max_messages: 1 },
  });
  const synced = await floe(["sync", "--config", file, "--state-dir", stateDir]);
  assert.equal(synced.code, 0, synced.stderr);
  await model.assertLanded(`drift_check_${run}_topics`, ["id", "amount", "at"]);

  // Nothing left to read: the sample is the last messages, and the declared columns show as such.
  const again = JSON.parse((await floe(["check", "--config", file, "--json"])).stdout).topics[0].sample;
  assert.equal(again.messages, 3);
  assert.deepEqual(
    again.columns.map((c: { name: string; source: string }) => [c.name, c.source]),
    [
      ["amount", "declared"],
      ["at", "declared"],
      ["id", "table"],
    ],
  );
  assert.deepEqual(again.proposedColumns, {});
});
