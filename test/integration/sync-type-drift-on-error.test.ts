// Type drift across syncs and commits, against the real broker and REST catalog, every table read
// back through DuckDB, PyIceberg and Spark and compared with a model of where each message must
// land (a row, a dead letter, skipped, or nowhere because the sync failed before it): ints then a
// decimal, across two syncs and across a commit boundary inside one sync, with on_error dlq, skip
// and fail: never a sync that fails forever (dlq, skip), never a lost message (dlq), and with fail
// a sync that names topic, partition, offset and field; and a replay after a crash between the
// dead-letter and the table commit.

import assert from "node:assert/strict";
import { test } from "node:test";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { commitGroupOffsets } from "#src/kafka/commit-offsets.ts";
import { KafkaCluster } from "#src/kafka/connection.ts";
import { kafkaConnectionOptions } from "#src/pipeline/connect.ts";
import { committedOffsets } from "#src/pipeline/snapshot-offsets.ts";
import { restTable } from "../../dev/readers.ts";
import {
  assertFailsAt,
  committedState,
  DriftModel,
  driftSuite,
  jobFor,
  json,
  LONG_DOUBLE,
  loadTable,
  newTopic,
  readers,
  stateDir,
  tableReport,
} from "../helpers/drift-sync.ts";
import { committingEvery } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";

driftSuite();

for (const onError of ["dlq", "skip", "fail"] as const) {
  test(`on_error ${onError}: ints then a decimal across two syncs`, async () => {
    const topic = await newTopic(`twosyncs_${onError}`);
    const { job, namespace } = jobFor(`twosyncs_${onError}`, topic, { mode: "append", on_error: onError });
    const model = new DriftModel(topic)
      .row(json({ id: 1, amount: 100 }), { id: 1n, amount: 100n })
      .row(json({ id: 2, amount: 200 }), { id: 2n, amount: 200n });
    await model.produce();
    await syncJob(job, { stateDir });
    await model.assertLanded(namespace, ["id", "amount"]);

    const decimal = json({ id: 3, amount: 99.19 });
    if (onError === "dlq") model.dead(decimal, "type-mismatch", LONG_DOUBLE);
    else model.unread(decimal);
    if (onError === "fail") model.unread(json({ id: 4, amount: 300 }));
    else model.row(json({ id: 4, amount: 300 }), { id: 4n, amount: 300n });
    await model.produce();

    if (onError === "fail") {
      await assertFailsAt(job, namespace, topic, `partition 0 offset 2: type-mismatch: ${LONG_DOUBLE}`);
    } else {
      const second = tableReport(await syncJob(job, { stateDir }), namespace);
      assert.deepEqual(
        [second.recordsAdded, second.deadLetters, second.skipped],
        onError === "dlq" ? [1, 1, 0] : [1, 0, 1],
      );
      const again = await syncJob(job, { stateDir });
      assert.equal(again.messagesRead, 0, "the next sync goes on from where this one ended");
      const table = (await loadTable(namespace, "t"))!;
      assert.deepEqual(committedOffsets(table.metadata, "t").get(topic), new Map([[0, 4n]]));
    }
    await model.assertLanded(namespace, ["id", "amount"]);
  });

  test(`on_error ${onError}: ints then a decimal across a commit boundary inside one sync`, async () => {
    // One read thread takes the longer partition 0 first; a commit after each fetched batch
    // creates the table with partition 0's ints before partition 1's decimal is read.
    const topic = await newTopic(`boundary_${onError}`, 2);
    const { job, namespace } = jobFor(`boundary_${onError}`, topic, { mode: "append", on_error: onError });
    const model = new DriftModel(topic);
    for (const id of [1, 2, 3]) model.row(json({ id, amount: id * 100 }), { id: BigInt(id), amount: BigInt(id * 100) });
    const decimal = json({ id: 4, amount: 99.19 });
    if (onError === "dlq") model.dead(decimal, "type-mismatch", LONG_DOUBLE, 1);
    else model.unread(decimal, 1);
    if (onError === "fail") model.unread(json({ id: 5, amount: 500 }), 1);
    else model.row(json({ id: 5, amount: 500 }), { id: 5n, amount: 500n }, 1);
    await model.produce();

    const everyMessage = committingEvery(job, 1);
    if (onError === "fail") {
      await assert.rejects(syncJob(everyMessage, { stateDir }), { name: "BadMessageError" });
      // The commits before the boundary stand; every rerun stops at the same message.
      await assertFailsAt(everyMessage, namespace, topic, `partition 1 offset 0: type-mismatch: ${LONG_DOUBLE}`, {}, 2);
    } else {
      const report = await syncJob(everyMessage, { stateDir });
      assert.equal(report.status, "complete");
      const t = tableReport(report, namespace);
      assert.deepEqual([t.recordsAdded, t.deadLetters, t.skipped], onError === "dlq" ? [4, 1, 0] : [4, 0, 1]);
    }
    await model.assertLanded(namespace, ["id", "amount"]);

    // The same messages in one commit: the batch that creates the column sees the decimal, and
    // the column is double (without a declaration, where commits fall decides the column's type).
    const { job: oneCommit, namespace: oneNamespace } = jobFor(`onecommit_${onError}`, topic, { mode: "append" });
    await syncJob(oneCommit, { stateDir });
    await readers.assertRows(
      restTable(oneNamespace, "t"),
      [
        { id: 1n, amount: 100 },
        { id: 2n, amount: 200 },
        { id: 3n, amount: 300 },
        { id: 4n, amount: 99.19 },
        { id: 5n, amount: 500 },
      ],
      { columns: ["id", "amount"], orderBy: ["id"] },
    );
  });
}

test("a replay after a crash between the dead-letter and the table commit loses no refused value, though its commits fall elsewhere", async () => {
  const topic = await newTopic("replay", 2);
  const { job, namespace } = jobFor("replay", topic, { mode: "append" });
  const model = new DriftModel(topic).row(json({ id: 0 }), { id: 0n, amount: null });
  await model.produce();
  await syncJob(job, { stateDir });
  const before = (await loadTable(namespace, "t"))!;
  const { table: snapshotId, group } = await committedState(job, namespace, topic, 2);
  // Partition 0 (read first by the one thread) has ints, partition 1 a decimal and a bad message.
  for (const id of [1, 2, 3]) model.row(json({ id, amount: id }), { id: BigInt(id), amount: BigInt(id) });
  model
    .dead(json({ id: 4, amount: 4.5 }), "type-mismatch", LONG_DOUBLE, 1)
    .dead("garbage", "not-json", `value is not JSON: Unexpected token 'g', "garbage" is not valid JSON`, 1);
  await model.produce();

  // The first attempt reads all in one commit batch (amount is double there) and commits the
  // dead letter; the crash before the table's commit is reproduced by putting the table (its
  // snapshot and its schema) and the group back as they were.
  await syncJob(job, { stateDir });
  const crashed = (await loadTable(namespace, "t"))!;
  await crashed.commit(
    [
      { type: "assert-table-uuid", uuid: crashed.metadata.tableUuid },
      { type: "assert-ref-snapshot-id", ref: "main", snapshotId: currentSnapshot(crashed.metadata)!.snapshotId },
    ],
    [
      { action: "set-current-schema", schemaId: before.metadata.currentSchemaId },
      { action: "set-snapshot-ref", refName: "main", snapshotId: snapshotId as bigint, type: "branch" },
    ],
  );
  const cluster = await KafkaCluster.connect(kafkaConnectionOptions(job.source));
  try {
    await commitGroupOffsets(cluster, job.consumerGroup, group);
  } finally {
    await cluster.close();
  }

  // The replay commits after each fetched batch: partition 0's ints make amount long, and the
  // decimal, below the dead-letter table's offsets, is written there now.
  const replay = tableReport(await syncJob(committingEvery(job, 1), { stateDir }), namespace);
  assert.deepEqual([replay.recordsAdded, replay.deadLetters], [3, 1]);
  await model.assertLanded(namespace, ["id", "amount"]);
});
