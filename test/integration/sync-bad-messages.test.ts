// Bad messages and schema changes through a whole sync, against the
// real broker and the real REST catalog, read back through DuckDB:
// - every bad-message kind lands in <table>__dlq in the same sync, raw key and value in base64,
//   with partition, offset, timestamp, error kind and text, counted in the report; the good
//   messages around them land in the table;
// - a replay after a crash between the dead-letter commit and the table commit adds no dead
//   letter twice (the crash is reproduced by rolling the table and the group back to where they
//   were before the table commit: exactly the state such a crash leaves);
// - on_error: fail fails the sync naming topic, partition and offset, with nothing committed;
//   on_error: skip counts and moves on;
// - a value that does not fit its column is a dead letter naming field, column type and value
//   type (sync-type-drift.test.ts has the rest of that story); a new field is a new column in
//   the same sync; int and float columns widen.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { bootstrapServers, createTopic, produce, type TestMessage } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import type { Job } from "../../src/config/job.ts";
import { parseJob } from "../../src/config/load-job.ts";
import { SYSTEM_COLUMNS } from "../../src/decode/system-columns.ts";
import { type Catalog, NoSuchTableError } from "../../src/iceberg/catalog/catalog.ts";
import { loadCatalog } from "../../src/iceberg/catalog/load-catalog.ts";
import { unpartitioned } from "../../src/iceberg/spec/partition-spec.ts";
import { currentSchema, currentSnapshot } from "../../src/iceberg/spec/table-metadata.ts";
import { Table } from "../../src/iceberg/table.ts";
import { commitGroupOffsets, readGroupOffsets, type TopicPartitionOffsets } from "../../src/kafka/commit-offsets.ts";
import { KafkaCluster } from "../../src/kafka/connection.ts";
import { kafkaConnectionOptions } from "../../src/sync/connect.ts";
import { committedOffsets } from "../../src/sync/snapshot-offsets.ts";
import type { SyncReport } from "../../src/sync/sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `${process.pid}_${Date.now()}`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-bad-"));

let readers: Readers;
let catalog: Catalog;
before(async () => {
  readers = await startReaders({ engines: ["duckdb"] });
  catalog = await loadCatalog({ type: "rest", uri: restCatalog.uri });
});
after(async () => {
  await catalog?.close();
  await readers?.close();
});

/** A job over the topics `<case>_<name>` with the given stream settings (YAML flow mappings). */
function jobFor(
  name: string,
  streams: Record<string, string>,
): { job: Job; namespace: string; topic: (t: string) => string } {
  const jobName = `bad_${name}_${run}`;
  const topic = (t: string) => `bad${run}_${name}_${t}`;
  const job = parseJob(
    `
name: ${jobName}
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    topic_pattern: ^bad${run}_${name}_.*
    max_threads: 2
destination:
  iceberg:
    catalog: {type: rest, uri: ${restCatalog.uri}}
streams:
${Object.entries(streams)
  .map(([t, s]) => `  ${topic(t)}: {table: ${t}, ${s}}`)
  .join("\n")}
`,
    join(stateDir, `${name}.yaml`),
  );
  return { job, namespace: `${jobName}_topics`, topic };
}

const json = (value: unknown) => JSON.stringify(value);
const b64 = (data: string | Buffer) => Buffer.from(data).toString("base64");

function tableReport(report: SyncReport, namespace: string, table: string) {
  const t = report.tables.find((r) => r.table === `${namespace}.${table}`);
  assert.ok(t, `no report for ${table}: ${report.tables.map((r) => r.table).join(", ")}`);
  return t;
}

async function loadTable(namespace: string, name: string): Promise<Table | undefined> {
  try {
    return await Table.load(catalog, { namespace: [namespace], name });
  } catch (error) {
    if (error instanceof NoSuchTableError) return undefined;
    throw error;
  }
}

async function snapshotOf(namespace: string, name: string): Promise<bigint | undefined | "no table"> {
  const table = await loadTable(namespace, name);
  return table ? currentSnapshot(table.metadata)?.snapshotId : "no table";
}

async function withCluster<T>(job: Job, work: (cluster: KafkaCluster) => Promise<T>): Promise<T> {
  const cluster = await KafkaCluster.connect(kafkaConnectionOptions(job.source));
  try {
    return await work(cluster);
  } finally {
    await cluster.close();
  }
}

const groupOffsets = (job: Job, topic: string, partitions = 1) =>
  withCluster(job, (cluster) => readGroupOffsets(cluster, job.consumerGroup, [{ topic, partitions }]));

/** What a sync must leave behind when it fails: the tables' snapshots and the group's offsets. */
async function committedState(job: Job, namespace: string, topic: string, table: string, partitions = 1) {
  return {
    table: await snapshotOf(namespace, table),
    deadLetters: await snapshotOf(namespace, `${table}__dlq`),
    group: await groupOffsets(job, topic, partitions),
  };
}

/**
 * produce() one partition at a time: the helper's producer is not idempotent, and when a partition
 * answers "not leader" (a loaded broker, a new topic) it re-sends the whole request, so that the
 * partitions that had accepted it get their messages twice.
 */
async function producePerPartition(topic: string, messages: TestMessage[]): Promise<void> {
  for (const partition of new Set(messages.map((m) => m.partition ?? 0))) {
    await produce(
      topic,
      messages.filter((m) => (m.partition ?? 0) === partition),
    );
  }
}

const notUtf8 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]); // {"a":"\xff\xfe"}
const confluentFramed = Buffer.concat([Buffer.from([0, 0, 0, 0, 42]), Buffer.from([2, 6, 0x66, 0x6f, 0x6f])]);

test("every bad-message kind lands in <table>__dlq in the same sync, and the good messages around it in the table", async () => {
  const { job, namespace, topic } = jobFor("kinds", {
    events: "mode: append",
    users: "mode: upsert, dedup_keys: [id]",
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
      /schema id 42\) and the stream reads JSON: set its format: avro or protobuf/,
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
      items: mode === "append" ? "mode: append" : "mode: upsert, dedup_keys: [id]",
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

test("on_error: fail fails the sync at the first bad message, naming topic, partition and offset, with nothing committed", async () => {
  const { job, namespace, topic } = jobFor("fail", { strict: "mode: append, on_error: fail" });
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
  const { job, namespace, topic } = jobFor("failup", { strictup: "mode: upsert, dedup_keys: [id], on_error: fail" });
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
  const { job, namespace, topic } = jobFor("skip", { lax: "mode: upsert, dedup_keys: [id], on_error: skip" });
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

test("in the first sync, a value that does not fit the column its batch gives the field is a dead letter", async () => {
  const { job, namespace, topic } = jobFor("types", { prices: "mode: append" });
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
  const { job, namespace, topic } = jobFor("types2", { prices: "mode: upsert, dedup_keys: [id]" });
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
  const { job, namespace, topic } = jobFor("evolve", { people: "mode: append" });
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
  const { job, namespace, topic } = jobFor("widen", { counts: "mode: append" });
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
