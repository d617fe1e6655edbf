// Bad messages into dead letters through a whole sync, against the real broker and the real REST
// catalog, read back through DuckDB: every bad-message kind lands in <table>__dlq in the same
// sync, raw key and value in base64, with partition, offset, timestamp, error kind and text,
// counted in the report, and the good messages around them land in the table; a replay after a
// crash between the dead-letter commit and the table commit adds no dead letter twice (the crash
// is reproduced by rolling the table and the group back to where they were before the table
// commit: exactly the state such a crash leaves).
import assert from "node:assert/strict";
import { test } from "node:test";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import type { Table } from "#src/iceberg/table.ts";
import { commitGroupOffsets, type TopicPartitionOffsets } from "#src/kafka/commit-offsets.ts";
import { committedOffsets } from "#src/pipeline/snapshot-offsets.ts";
import { createTopic, produce, type TestMessage } from "../../dev/kafka.ts";
import { restTable } from "../../dev/readers.ts";
import {
  b64,
  badMessagesSuite,
  confluentFramed,
  groupOffsets,
  jobFor,
  json,
  loadTable,
  notUtf8,
  readers,
  snapshotOf,
  stateDir,
  tableReport,
  withCluster,
} from "../helpers/bad-messages-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

badMessagesSuite();

test("every bad-message kind lands in <table>__dlq in the same sync, and the good messages around it in the table", async () => {
  const { job, namespace, topic } = jobFor("kinds", {
    events: { mode: "append" },
    users: { mode: "upsert", dedup_keys: ["id"] },
  });
  await createTopic(topic("events"));
  await createTopic(topic("users"));
  const events: TestMessage[] = [
    { key: "k0", value: json({ n: 0 }) },
    { key: "k1", value: "not json {" },
    { key: "k2", value: json({ n: 2 }) },
    { key: "k3", value: "[1, 2, 3]" },
    { key: null, value: notUtf8 },
    { key: "k5", value: confluentFramed },
    { key: "k6", value: '"a string"' },
    { key: "k7", value: json({ n: 7 }) },
    { key: "k8", value: "" },
  ];
  await produce(topic("events"), events);
  await produce(topic("users"), [
    { key: "u1", value: json({ id: 1, name: "ann" }) },
    { key: "u2", value: json({ name: "no id" }) },
    { key: "u3", value: json({ id: null, name: "null id" }) },
    { key: "u4", value: json({ id: { nested: 1 }, name: "object id" }) },
    { key: "u5", value: json({ id: 5, name: "bob" }) },
  ]);

  const report = await syncJob(job, { stateDir });
  assert.equal(report.status, "complete");
  assert.equal(report.messagesRead, events.length + 5);
  const e = tableReport(report, namespace, "events");
  assert.deepEqual([e.messagesRead, e.recordsAdded, e.deadLetters, e.skipped], [9, 3, 6, 0]);
  const u = tableReport(report, namespace, "users");
  assert.deepEqual([u.messagesRead, u.recordsAdded, u.deadLetters, u.skipped], [5, 2, 3, 0]);

  // The good messages, in the table.
  const rows = await readers.rows("duckdb", restTable(namespace, "events"), { columns: ["_kafka_offset", "n"] });
  assert.deepEqual(rows, [
    { _kafka_offset: 0n, n: 0n },
    { _kafka_offset: 2n, n: 2n },
    { _kafka_offset: 7n, n: 7n },
  ]);
  const users = await readers.rows("duckdb", restTable(namespace, "users"), { columns: ["id", "name"] });
  assert.deepEqual(users, [
    { id: 1n, name: "ann" },
    { id: 5n, name: "bob" },
  ]);

  // The bad ones, in the dead-letter table, raw and explained.
  const columns = ["_kafka_offset", "_kafka_partition", "_kafka_key", "_kafka_value", "_error_kind", "_error"];
  const dead = await readers.rows("duckdb", restTable(namespace, "events__dlq"), {
    columns,
    orderBy: ["_kafka_offset"],
  });
  const expectedKinds: [number, string, RegExp][] = [
    [1, "not-json", /not JSON/],
    [3, "not-object", /a JSON array, not a JSON object/],
    [4, "invalid-utf8", /not valid UTF-8/],
    [
      5,
      "confluent-framed-without-registry",
      /schema id 42\) and the stream reads JSON: set its format: avro, protobuf or json_schema/,
    ],
    [6, "not-object", /a JSON string, not a JSON object/],
    [8, "not-json", /empty/],
  ];
  assert.equal(dead.length, expectedKinds.length);
  expectedKinds.forEach(([offset, kind, text], i) => {
    const row = dead[i]!;
    const message = events[offset]!;
    assert.equal(row._kafka_offset, BigInt(offset));
    assert.equal(row._kafka_partition, 0);
    assert.equal(row._kafka_key, message.key === null ? null : b64(message.key as string));
    assert.equal(row._kafka_value, b64(message.value as string | Buffer), `offset ${offset}: raw value`);
    assert.equal(row._error_kind, kind, `offset ${offset}`);
    assert.match(String(row._error), text, `offset ${offset}`);
  });
  // The message timestamp and the write time are there, as timestamps.
  const [times] = await readers.sql(
    "duckdb",
    `SELECT count(*) AS n, min(_kafka_timestamp) IS NOT NULL AS ts, min(_floe_timestamp) >= min(_kafka_timestamp) AS after
     FROM rest.${namespace}.events__dlq WHERE _kafka_timestamp > TIMESTAMPTZ '2020-01-01'`,
  );
  assert.deepEqual(times, { n: 6n, ts: true, after: true });

  const deadUsers = await readers.rows("duckdb", restTable(namespace, "users__dlq"), {
    columns: ["_kafka_offset", "_kafka_key", "_error_kind", "_error"],
    orderBy: ["_kafka_offset"],
  });
  assert.deepEqual(
    deadUsers.map((r) => [r._kafka_offset, r._kafka_key, r._error_kind]),
    [
      [1n, b64("u2"), "missing-dedup-key"],
      [2n, b64("u3"), "missing-dedup-key"],
      [3n, b64("u4"), "missing-dedup-key"],
    ],
  );
  assert.match(String(deadUsers[0]!._error), /dedup key id/);

  // Both tables carry the offsets they absorbed; the group has them too.
  const table = (await loadTable(namespace, "events"))!;
  const deadTable = (await loadTable(namespace, "events__dlq"))!;
  assert.deepEqual(committedOffsets(table.metadata, "events").get(topic("events")), new Map([[0, 9n]]));
  assert.deepEqual(committedOffsets(deadTable.metadata, "events__dlq").get(topic("events")), new Map([[0, 9n]]));
  assert.deepEqual((await groupOffsets(job, topic("events"))).get(topic("events")), new Map([[0, 9n]]));

  // Nothing new: nothing read, no dead letter twice, and no empty snapshot in any table.
  const tables = ["events", "events__dlq", "users", "users__dlq"];
  const snapshots = await Promise.all(tables.map((name) => snapshotOf(namespace, name)));
  const again = await syncJob(job, { stateDir });
  assert.equal(again.messagesRead, 0);
  assert.deepEqual(
    again.tables.map((t) => t.snapshotId),
    [null, null],
  );
  assert.deepEqual(await Promise.all(tables.map((name) => snapshotOf(namespace, name))), snapshots);
  assert.equal(
    (await readers.rows("duckdb", restTable(namespace, "events__dlq"), { columns: ["_kafka_offset"] })).length,
    6,
  );
});

/** Moves the table's main branch back to `snapshotId`, as if the commits after it never happened. */
async function rollBack(table: Table, snapshotId: bigint): Promise<void> {
  await table.commit(
    [
      { type: "assert-table-uuid", uuid: table.metadata.tableUuid },
      { type: "assert-ref-snapshot-id", ref: "main", snapshotId: currentSnapshot(table.metadata)!.snapshotId },
    ],
    [{ action: "set-snapshot-ref", refName: "main", snapshotId, type: "branch" }],
  );
}

for (const mode of ["append", "upsert"] as const) {
  test(`${mode}: a replay after a crash between the dead-letter commit and the table commit adds no dead letter twice`, async () => {
    const { job, namespace, topic } = jobFor(`replay_${mode}`, {
      items: mode === "append" ? { mode: "append" } : { mode: "upsert", dedup_keys: ["id"] },
    });
    const t = topic("items");
    await createTopic(t);
    await produce(
      t,
      [1, 2, 3].map((id) => ({ key: `${id}`, value: json({ id, v: "first" }) })),
    );
    await syncJob(job, { stateDir });
    const before = (await loadTable(namespace, "items"))!;
    const beforeSnapshot = currentSnapshot(before.metadata)!.snapshotId;
    const beforeOffsets = committedOffsets(before.metadata, "items");
    assert.deepEqual(beforeOffsets.get(t), new Map([[0, 3n]]));

    // Two bad messages among new and updated rows.
    await produce(t, [
      { key: "2", value: json({ id: 2, v: "second" }) },
      { key: "x", value: "oops" },
      { key: "4", value: json({ id: 4, v: "first" }) },
      { key: "y", value: "[]" },
    ]);
    const second = await syncJob(job, { stateDir });
    assert.equal(tableReport(second, namespace, "items").deadLetters, 2);

    // The crash: the dead letters were committed, the table and the group were not.
    await rollBack((await loadTable(namespace, "items"))!, beforeSnapshot);
    await withCluster(job, (cluster) =>
      commitGroupOffsets(cluster, job.consumerGroup, beforeOffsets as TopicPartitionOffsets),
    );
    assert.deepEqual((await groupOffsets(job, t)).get(t), new Map([[0, 3n]]));

    const replay = await syncJob(job, { stateDir });
    const r = tableReport(replay, namespace, "items");
    assert.equal(r.messagesRead, 4, "the replay reads the messages the table had not absorbed");
    assert.equal(r.deadLetters, 0, "they are in the dead-letter table already");
    const dead = await readers.rows("duckdb", restTable(namespace, "items__dlq"), {
      columns: ["_kafka_offset", "_kafka_value"],
    });
    assert.deepEqual(dead, [
      { _kafka_offset: 4n, _kafka_value: b64("oops") },
      { _kafka_offset: 6n, _kafka_value: b64("[]") },
    ]);
    const rows = await readers.rows("duckdb", restTable(namespace, "items"), {
      columns: ["id", "v", "_kafka_offset"],
      orderBy: ["_kafka_offset"],
    });
    const expected =
      mode === "append"
        ? [
            { id: 1n, v: "first", _kafka_offset: 0n },
            { id: 2n, v: "first", _kafka_offset: 1n },
            { id: 3n, v: "first", _kafka_offset: 2n },
            { id: 2n, v: "second", _kafka_offset: 3n },
            { id: 4n, v: "first", _kafka_offset: 5n },
          ]
        : [
            { id: 1n, v: "first", _kafka_offset: 0n },
            { id: 3n, v: "first", _kafka_offset: 2n },
            { id: 2n, v: "second", _kafka_offset: 3n },
            { id: 4n, v: "first", _kafka_offset: 5n },
          ];
    assert.deepEqual(rows, expected);
    const after = (await loadTable(namespace, "items"))!;
    assert.deepEqual(committedOffsets(after.metadata, "items").get(t), new Map([[0, 7n]]));
    assert.deepEqual((await groupOffsets(job, t)).get(t), new Map([[0, 7n]]));
  });
}
