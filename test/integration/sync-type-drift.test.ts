// Type drift and values no column holds, through whole syncs against the real broker and REST
// catalog, every table read back through DuckDB, PyIceberg and Spark and compared with a model
// of where each message must land (a row, a dead letter, skipped, or nowhere because the sync
// failed before it):
// - ints then a decimal, across two syncs and across a commit boundary inside one sync, with
//   on_error dlq, skip and fail: never a sync that fails forever (dlq, skip), never a lost
//   message (dlq), and with fail a sync that names topic, partition, offset and field;
// - declared `columns: {amount: double}`: the same tables whatever the commit interval;
// - a timestamptz column that gets a date, a dedup key written 1 and "1" (and the way out:
//   declaring it string), integers beyond the long range;
// - a value nested 10,000 levels deep, and the numbers 1e400 and -1e400: bad messages;
// - `floe check` shows the columns of a sample and proposes the `columns:` to declare.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { bootstrapServers, createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import type { Job } from "../../src/config/job.ts";
import { parseJob } from "../../src/config/load-job.ts";
import { type Catalog, NoSuchTableError } from "../../src/iceberg/catalog/catalog.ts";
import { loadCatalog } from "../../src/iceberg/catalog/load-catalog.ts";
import { currentSchema, currentSnapshot } from "../../src/iceberg/spec/table-metadata.ts";
import { Table } from "../../src/iceberg/table.ts";
import { commitGroupOffsets, readGroupOffsets } from "../../src/kafka/commit-offsets.ts";
import { KafkaCluster } from "../../src/kafka/connection.ts";
import { kafkaConnectionOptions } from "../../src/sync/connect.ts";
import { committedOffsets } from "../../src/sync/snapshot-offsets.ts";
import type { SyncOptions, SyncReport } from "../../src/sync/sync.ts";
import { type FloeOutcome, floe as runFloe } from "../helpers/floe-cli.ts";
import { syncJob } from "../helpers/sync-job.ts";
import { type ModelMessage, OffsetCounter, produceExactly } from "../helpers/sync-model.ts";

const run = `${process.pid}_${Date.now()}`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-drift-"));
const topics: string[] = [];

let readers: Readers;
let catalog: Catalog;
before(async () => {
  readers = await startReaders();
  catalog = await loadCatalog({ type: "rest", uri: restCatalog.uri });
});
after(async () => {
  await catalog?.close();
  await readers?.close();
  for (const topic of topics) await deleteTopic(topic);
});

async function newTopic(name: string, partitions = 1): Promise<string> {
  const topic = `drift${run}_${name}`;
  await createTopic(topic, partitions);
  topics.push(topic);
  return topic;
}

/** A job (its own namespace and consumer group) over one topic into table `t`. */
function jobFor(name: string, topic: string, stream: string, threads = 1): { job: Job; namespace: string } {
  const { text, file } = jobText(name, topic, stream, threads);
  return { job: parseJob(text, file), namespace: `drift_${name}_${run}_topics` };
}

function jobText(name: string, topic: string, stream: string, threads: number): { text: string; file: string } {
  const text = `
name: drift_${name}_${run}
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    topic_pattern: ^${topic}$
    max_threads: ${threads}
destination:
  iceberg:
    catalog: {type: rest, uri: ${restCatalog.uri}}
streams:
  ${topic}: {table: t, ${stream}}
`;
  return { text, file: join(stateDir, `${name}.yaml`) };
}

type Row = Record<string, unknown>;

/**
 * Where each message of a topic must land. Values are given as the JSON text produced (some,
 * like 1e400, JSON.stringify cannot write), with the row they must read back as, or the dead
 * letter's kind and text; `unread` messages are produced but never land (the sync fails first).
 */
class DriftModel {
  readonly topic: string;
  private readonly counter = new OffsetCounter();
  private pending: ModelMessage[] = [];
  private readonly rows: Row[] = [];
  private readonly deadLetters: Row[] = [];

  constructor(topic: string) {
    this.topic = topic;
  }

  row(value: string, expected: Row, partition = 0): this {
    const m = this.message(value, partition);
    this.rows.push({ ...expected, _kafka_partition: partition, _kafka_offset: m.offset });
    return this;
  }

  dead(value: string, kind: string, error: string, partition = 0): this {
    const m = this.message(value, partition);
    this.deadLetters.push({
      _kafka_partition: partition,
      _kafka_offset: m.offset,
      _kafka_value: Buffer.from(value).toString("base64"),
      _error_kind: kind,
      _error: error,
    });
    return this;
  }

  /** A message that lands nowhere: skipped, or behind a sync that fails. */
  unread(value: string, partition = 0): this {
    this.message(value, partition);
    return this;
  }

  async produce(): Promise<void> {
    await produceExactly(this.topic, this.pending, this.counter);
    this.pending = [];
  }

  /** The table and its dead-letter table, in every engine, equal the model. */
  async assertLanded(namespace: string, columns: string[]): Promise<void> {
    const orderBy = ["_kafka_partition", "_kafka_offset"];
    await readers.assertRows(restTable(namespace, "t"), sorted(this.rows), {
      columns: [...columns, ...orderBy],
      orderBy,
    });
    if (this.deadLetters.length === 0) {
      assert.equal(await loadTable(namespace, "t__dlq"), undefined, "no dead-letter table");
    } else {
      await readers.assertRows(restTable(namespace, "t__dlq"), sorted(this.deadLetters), {
        columns: ["_kafka_partition", "_kafka_offset", "_kafka_value", "_error_kind", "_error"],
        orderBy,
      });
    }
  }

  private message(value: string, partition: number): ModelMessage {
    const [m] = this.counter.assign([{ partition, key: null, value }]);
    this.pending.push(m!);
    return m!;
  }
}

function sorted(rows: Row[]): Row[] {
  return [...rows].sort(
    (a, b) =>
      (a._kafka_partition as number) - (b._kafka_partition as number) ||
      Number((a._kafka_offset as bigint) - (b._kafka_offset as bigint)),
  );
}

const json = (value: unknown) => JSON.stringify(value);

async function loadTable(namespace: string, name: string): Promise<Table | undefined> {
  try {
    return await Table.load(catalog, { namespace: [namespace], name });
  } catch (error) {
    if (error instanceof NoSuchTableError) return undefined;
    throw error;
  }
}

function tableReport(report: SyncReport, namespace: string) {
  const t = report.tables.find((r) => r.table === `${namespace}.t`);
  assert.ok(t, `no report for ${namespace}.t`);
  return t;
}

/** What a failed sync must leave as it was: both tables' snapshots and the group's offsets. */
async function committedState(job: Job, namespace: string, topic: string, partitions = 1) {
  const snapshot = async (name: string) => {
    const table = await loadTable(namespace, name);
    return table ? currentSnapshot(table.metadata)?.snapshotId : "no table";
  };
  const cluster = await KafkaCluster.connect(kafkaConnectionOptions(job.source));
  try {
    return {
      table: await snapshot("t"),
      deadLetters: await snapshot("t__dlq"),
      group: await readGroupOffsets(cluster, job.consumerGroup, [{ topic, partitions }]),
    };
  } finally {
    await cluster.close();
  }
}

/** The sync fails with on_error: fail at the message, naming it and its field, and leaves everything as it was. */
async function assertFailsAt(
  job: Job,
  namespace: string,
  topic: string,
  where: string,
  options: Partial<SyncOptions> = {},
  partitions = 1,
): Promise<void> {
  const state = await committedState(job, namespace, topic, partitions);
  for (let attempt = 0; attempt < 2; attempt++) {
    // Every rerun stops at the same message, until the operator deals with it.
    await assert.rejects(syncJob(job, { stateDir, ...options }), (error: Error) => {
      assert.equal(error.name, "BadMessageError");
      assert.equal(error.message, `${topic} ${where} (on_error: fail)`);
      return true;
    });
    assert.deepEqual(await committedState(job, namespace, topic, partitions), state, "nothing committed");
  }
}

const LONG_DOUBLE = 'field "amount": column type long, value type double';

for (const onError of ["dlq", "skip", "fail"] as const) {
  test(`on_error ${onError}: ints then a decimal across two syncs`, async () => {
    const topic = await newTopic(`twosyncs_${onError}`);
    const { job, namespace } = jobFor(`twosyncs_${onError}`, topic, `mode: append, on_error: ${onError}`);
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
    const { job, namespace } = jobFor(`boundary_${onError}`, topic, `mode: append, on_error: ${onError}`);
    const model = new DriftModel(topic);
    for (const id of [1, 2, 3]) model.row(json({ id, amount: id * 100 }), { id: BigInt(id), amount: BigInt(id * 100) });
    const decimal = json({ id: 4, amount: 99.19 });
    if (onError === "dlq") model.dead(decimal, "type-mismatch", LONG_DOUBLE, 1);
    else model.unread(decimal, 1);
    if (onError === "fail") model.unread(json({ id: 5, amount: 500 }), 1);
    else model.row(json({ id: 5, amount: 500 }), { id: 5n, amount: 500n }, 1);
    await model.produce();

    const options = { maxMessagesPerCommit: 1 };
    if (onError === "fail") {
      await assert.rejects(syncJob(job, { stateDir, ...options }), { name: "BadMessageError" });
      // The commits before the boundary stand; every rerun stops at the same message.
      await assertFailsAt(job, namespace, topic, `partition 1 offset 0: type-mismatch: ${LONG_DOUBLE}`, options, 2);
    } else {
      const report = await syncJob(job, { stateDir, ...options });
      assert.equal(report.status, "complete");
      const t = tableReport(report, namespace);
      assert.deepEqual([t.recordsAdded, t.deadLetters, t.skipped], onError === "dlq" ? [4, 1, 0] : [4, 0, 1]);
    }
    await model.assertLanded(namespace, ["id", "amount"]);

    // The same messages in one commit: the batch that creates the column sees the decimal, and
    // the column is double (without a declaration, where commits fall decides the column's type).
    const { job: oneCommit, namespace: oneNamespace } = jobFor(`onecommit_${onError}`, topic, "mode: append");
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
  const { job, namespace } = jobFor("replay", topic, "mode: append");
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
  const replay = tableReport(await syncJob(job, { stateDir, maxMessagesPerCommit: 1 }), namespace);
  assert.deepEqual([replay.recordsAdded, replay.deadLetters], [3, 1]);
  await model.assertLanded(namespace, ["id", "amount"]);
});

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

  const stream = "mode: append, columns: {amount: double}";
  const variants: [string, Partial<SyncOptions>, number][] = [
    ["each", { maxMessagesPerCommit: 1 }, 1],
    ["few", { maxMessagesPerCommit: 4 }, 3],
    ["one", {}, 3],
  ];
  const schemas: unknown[] = [];
  for (const [name, options, threads] of variants) {
    const { job, namespace } = jobFor(`declared_${name}`, topic, stream, threads);
    const report = await syncJob(job, { stateDir, ...options });
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

test("a timestamptz column that later receives a date: the date is a dead letter", async () => {
  const topic = await newTopic("timestamp");
  const { job, namespace } = jobFor("timestamp", topic, "mode: append");
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
  const { job, namespace } = jobFor("key", topic, "mode: upsert, dedup_keys: [id]");
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
  const { job: contradicted } = jobFor("key", topic, "mode: upsert, dedup_keys: [id], columns: {id: string}");
  await assert.rejects(syncJob(contradicted, { stateDir }), {
    name: "DeclaredColumnError",
    message: new RegExp(`^topic ${topic}, table t: column "id" declared under columns: the table has it as long`),
  });

  // The way out loses nothing: a new table whose key column is declared string takes both.
  const { job: declared, namespace: declaredNamespace } = jobFor(
    "key_string",
    topic,
    "mode: upsert, dedup_keys: [id], columns: {id: string}",
  );
  const report = await syncJob(declared, { stateDir, maxMessagesPerCommit: 1 });
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
  const { job, namespace } = jobFor("huge", topic, "mode: append");
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
  const { job, namespace } = jobFor("deep", topic, "mode: append");
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

  const { job: strict, namespace: strictNamespace } = jobFor("deep_fail", topic, "mode: append, on_error: fail");
  await assertFailsAt(strict, strictNamespace, topic, `partition 0 offset 1: too-deep: ${tooDeep}`);
});

test("1e400, -1e400 and a 401-digit integer in a double column are dead letters, not infinities", async () => {
  const topic = await newTopic("infinite");
  const { job, namespace } = jobFor("infinite", topic, "mode: append");
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
  const { job, namespace } = jobFor("inherited", topic, "mode: append");
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
  const { text, file } = jobText("check", topic, "mode: append", 1);
  writeFileSync(file, text);

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
  const declared = jobText("check", topic, "mode: append, columns: {amount: double, at: string}", 1);
  writeFileSync(file, declared.text);
  const synced = await floe(["sync", "--config", file, "--max-messages-per-commit", "1", "--state-dir", stateDir]);
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
