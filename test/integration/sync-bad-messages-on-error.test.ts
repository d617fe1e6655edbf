// on_error through a whole sync, against the real broker and the real REST catalog, read back
// through DuckDB: fail fails the sync naming topic, partition and offset, with nothing committed
// (append, and an upsert message without its dedup key); skip counts and moves on.
import assert from "node:assert/strict";
import { test } from "node:test";
import { committedOffsets } from "#src/pipeline/snapshot-offsets.ts";
import { createTopic, produce } from "../../dev/kafka.ts";
import { restTable } from "../../dev/readers.ts";
import {
  badMessagesSuite,
  committedState,
  confluentFramed,
  groupOffsets,
  jobFor,
  json,
  loadTable,
  producePerPartition,
  readers,
  snapshotOf,
  stateDir,
  tableReport,
} from "../helpers/bad-messages-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

badMessagesSuite();

test("on_error: fail fails the sync at the first bad message, naming topic, partition and offset, with nothing committed", async () => {
  const { job, namespace, topic } = jobFor("fail", { strict: { mode: "append", on_error: "fail" } });
  const t = topic("strict");
  await createTopic(t, 2);
  await producePerPartition(t, [
    { value: json({ n: 1 }), partition: 0 },
    { value: json({ n: 2 }), partition: 1 },
  ]);
  await syncJob(job, { stateDir });
  const state = await committedState(job, namespace, t, "strict", 2);
  assert.equal(typeof state.table, "bigint");
  assert.equal(state.deadLetters, "no table");
  assert.deepEqual(
    state.group.get(t),
    new Map([
      [0, 1n],
      [1, 1n],
    ]),
  );

  await producePerPartition(t, [
    { value: json({ n: 3 }), partition: 1 },
    { value: Buffer.from([0xc3, 0x28]), partition: 1 },
    { value: json({ n: 5 }), partition: 1 },
    { value: json({ n: 4 }), partition: 0 },
  ]);
  for (let attempt = 0; attempt < 2; attempt++) {
    // It fails again, at the same message, until the producer's mistake is dealt with.
    await assert.rejects(syncJob(job, { stateDir }), (error: Error) => {
      assert.equal(error.name, "BadMessageError");
      assert.match(error.message, new RegExp(`${t} partition 1 offset 2: invalid-utf8`));
      return true;
    });
    assert.deepEqual(await committedState(job, namespace, t, "strict", 2), state, "nothing committed");
  }
  const rows = await readers.rows("duckdb", restTable(namespace, "strict"), { columns: ["n"] });
  assert.deepEqual(rows, [{ n: 1n }, { n: 2n }]);
});

test("on_error: fail on an upsert stream: a message without its dedup key fails the sync with nothing committed", async () => {
  const { job, namespace, topic } = jobFor("failup", {
    strictup: { mode: "upsert", dedup_keys: ["id"], on_error: "fail" },
  });
  const t = topic("strictup");
  await createTopic(t);
  await produce(t, [{ value: json({ id: 1 }) }]);
  await syncJob(job, { stateDir });
  const state = await committedState(job, namespace, t, "strictup");
  await produce(t, [{ value: json({ id: 2 }) }, { value: json({ other: 3 }) }]);
  await assert.rejects(syncJob(job, { stateDir }), new RegExp(`${t} partition 0 offset 2: missing-dedup-key`));
  assert.deepEqual(await committedState(job, namespace, t, "strictup"), state);
  assert.deepEqual(await readers.rows("duckdb", restTable(namespace, "strictup"), { columns: ["id"] }), [{ id: 1n }]);
});

test("on_error: skip counts the bad messages, writes no dead letter, and lands the good ones", async () => {
  const { job, namespace, topic } = jobFor("skip", { lax: { mode: "upsert", dedup_keys: ["id"], on_error: "skip" } });
  const t = topic("lax");
  await createTopic(t);
  await produce(t, [
    { value: json({ id: 1 }) },
    { value: "nope" },
    { value: json({ name: "no id" }) },
    { value: confluentFramed },
    { value: json({ id: 2 }) },
  ]);
  const report = await syncJob(job, { stateDir });
  const r = tableReport(report, namespace, "lax");
  assert.deepEqual([r.messagesRead, r.recordsAdded, r.deadLetters, r.skipped], [5, 2, 0, 3]);
  assert.equal(await snapshotOf(namespace, "lax__dlq"), "no table");
  assert.deepEqual(await readers.rows("duckdb", restTable(namespace, "lax"), { columns: ["id"] }), [
    { id: 1n },
    { id: 2n },
  ]);
  assert.deepEqual((await groupOffsets(job, t)).get(t), new Map([[0, 5n]]));

  // Only bad messages: no row, but the table still records that it is past them.
  await produce(t, [{ value: "still nope" }, { value: json({ id: null }) }]);
  const second = tableReport(await syncJob(job, { stateDir }), namespace, "lax");
  assert.deepEqual([second.messagesRead, second.recordsAdded, second.skipped], [2, 0, 2]);
  const table = (await loadTable(namespace, "lax"))!;
  assert.deepEqual(committedOffsets(table.metadata, "lax").get(t), new Map([[0, 7n]]));
});
