// A topic deleted and re-created under the same name between two syncs, against the real broker
// and REST catalog. Its offsets start again at 0, so the offsets the table recorded count the
// messages of another topic: re-created with more messages, resuming there silently skipped the
// new topic's first messages; with fewer, the sync failed ("offsets beyond the end of the log").
// The table records the topic id (KIP-516) with its offsets, so a changed id is a new topic, read
// from its log start whatever the table and the group say, and reported with both ids. The rows
// of the deleted topic stay: an append table holds both topics' messages, an upsert table the
// latest row per key over both. Tables are read back through DuckDB, PyIceberg and Spark.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { reportToText } from "#src/cli/report.ts";
import { loadCatalog } from "#src/iceberg/catalog/load-catalog.ts";
import { Table } from "#src/iceberg/table.ts";
import type { Job } from "#src/job/job.ts";
import { commitGroupOffsets, readGroupOffsets } from "#src/kafka/commit-offsets.ts";
import type { KafkaCluster } from "#src/kafka/connection.ts";
import { listTopicPartitions } from "#src/kafka/discover.ts";
import { KafkaSource } from "#src/kafka/kafka-source.ts";
import { catalogConfig } from "#src/pipeline/connect.ts";
import { planSync } from "#src/pipeline/plan-sync.ts";
import { committedPosition, type KafkaPosition } from "#src/pipeline/snapshot-offsets.ts";
import { connectCluster, createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, type Row, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { buildJob, type StreamSection } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import {
  AppendModel,
  deadLetterColumns,
  type ModelMessage,
  modelColumns,
  OffsetCounter,
  produceExactly,
  UpsertModel,
} from "../helpers/sync-model.ts";

const run = `${process.pid}_${Date.now()}`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-recreated-"));
const topics = { events: `recreated${run}_events`, accounts: `recreated${run}_accounts` };

function jobFor(kind: "events" | "accounts", stream: StreamSection): Job {
  const name = `recreated_${kind}_${run}`;
  return buildJob(
    {
      name,
      kafka: { topic_pattern: `^${topics[kind]}$` },
      iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
      streams: { [topics[kind]]: { ...stream, table: kind } },
    },
    join(stateDir, `${kind}.yaml`),
  );
}

let readers: Readers;
let cluster: KafkaCluster;
before(async () => {
  [readers, cluster] = await Promise.all([startReaders(), connectCluster()]);
});
after(async () => {
  await readers?.close();
  await cluster?.close();
  for (const topic of Object.values(topics)) await deleteTopic(topic);
});

async function topicId(topic: string): Promise<string> {
  const [found] = await listTopicPartitions(cluster, [topic]);
  assert.ok(found?.topicId, `${topic} has a topic id`);
  return found.topicId;
}

/** Deletes the topic and creates it again, once the broker has finished deleting it. */
async function recreate(topic: string, partitions: number): Promise<void> {
  await deleteTopic(topic);
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await createTopic(topic, partitions);
      return;
    } catch (error) {
      // The deletion is asynchronous on the broker: TOPIC_ALREADY_EXISTS until it is done.
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function tablePosition(job: Job, table: string): Promise<KafkaPosition> {
  const catalog = await loadCatalog(catalogConfig(job.destination));
  try {
    const loaded = await Table.load(catalog, { namespace: [job.namespace], name: table });
    return committedPosition(loaded.metadata, loaded.name);
  } finally {
    await catalog.close();
  }
}

const offsets = (o: Record<number, bigint>) => new Map(Object.entries(o).map(([p, n]) => [Number(p), n]));

/** Rows of both topics share partitions and offsets: `gen` (1 for the deleted topic, 2 for the new one) tells them apart. */
const orderBy = ["_kafka_partition", "_kafka_offset", "gen"];
function byPartitionOffsetGen(rows: Row[]): Row[] {
  const key = (r: Row) => [Number(r._kafka_partition), Number(r._kafka_offset), Number(r.gen)];
  return rows.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
  });
}

test("append: re-created with more messages, every message of the new topic lands, beside the old topic's rows", async () => {
  const topic = topics.events;
  const job = jobFor("events", { mode: "append" });
  const table = restTable(job.namespace, "events");
  const deadLetters = restTable(job.namespace, "events__dlq");
  const model = new AppendModel();
  const messages = (gen: number, perPartition: number, bad: readonly number[], counter: OffsetCounter) =>
    counter.assign(
      Array.from({ length: perPartition * 2 }, (_, i) => ({
        partition: i % 2,
        key: null,
        // Bad messages at low offsets: a dead-letter table that kept the old topic's offsets would skip them.
        value: bad.includes(i) ? `not json ${gen}.${i}` : { gen, i },
      })),
    );

  await createTopic(topic, 2);
  const oldCounter = new OffsetCounter();
  const old = messages(1, 50, [4, 41], oldCounter);
  await produceExactly(topic, old, oldCounter);
  const first = await syncJob(job, { stateDir });
  assert.equal(first.messagesRead, 100);
  assert.deepEqual(first.recreatedTopics, []);
  model.apply(old);
  const oldId = await topicId(topic);
  assert.deepEqual(await tablePosition(job, "events"), {
    offsets: new Map([[topic, offsets({ 0: 50n, 1: 50n })]]),
    topicIds: new Map([[topic, oldId]]),
  });

  await recreate(topic, 2);
  const newCounter = new OffsetCounter();
  const fresh = messages(2, 250, [0, 7, 99, 400], newCounter);
  await produceExactly(topic, fresh, newCounter);
  const newId = await topicId(topic);
  assert.notEqual(newId, oldId);
  // The group's offsets may name the new topic too (a sync's group commit that raced the
  // deletion): they are of the deleted topic all the same.
  await commitGroupOffsets(cluster, job.consumerGroup, new Map([[topic, offsets({ 0: 50n, 1: 50n })]]));

  const second = await syncJob(job, { stateDir });
  assert.equal(second.status, "complete");
  assert.equal(second.messagesRead, 500, "offsets 0..49 of each partition of the new topic are read too");
  assert.deepEqual(second.recreatedTopics, [
    { topic, table: `${job.namespace}.events`, previousTopicId: oldId, topicId: newId },
  ]);
  const figures = model.apply(fresh);
  assert.equal(second.tables[0]?.recordsAdded, figures.recordsAdded);
  assert.equal(second.tables[0]?.deadLetters, 4);
  assert.match(
    reportToText(second),
    new RegExp(
      `${topic}: deleted and re-created \\(topic id ${oldId} -> ${newId}\\); read from its log start\\. ` +
        `${job.namespace}\\.events recorded the deleted topic: its rows stay beside the new topic's`,
    ),
  );

  await readers.assertRows(table, byPartitionOffsetGen(model.rows(["gen", "i"])), {
    columns: modelColumns(["gen", "i"]),
    orderBy,
  });
  const deadLetterRows = model.deadLetterRows();
  assert.equal(deadLetterRows.length, 6, "2 bad messages of the deleted topic and 4 of the new one");
  await readers.assertRows(deadLetters, deadLetterRows, {
    columns: deadLetterColumns,
    orderBy: ["_kafka_partition", "_kafka_offset", "_kafka_value"],
  });
  for (const t of ["events", "events__dlq"]) {
    assert.deepEqual(await tablePosition(job, t), {
      offsets: new Map([[topic, offsets({ 0: 250n, 1: 250n })]]),
      topicIds: new Map([[topic, newId]]),
    });
  }
  assert.deepEqual(
    (await readGroupOffsets(cluster, job.consumerGroup, [{ topic, partitions: 2 }])).get(topic),
    offsets({ 0: 250n, 1: 250n }),
  );

  const idle = await syncJob(job, { stateDir });
  assert.equal(idle.messagesRead, 0);
  assert.deepEqual(idle.recreatedTopics, [], "the new id is the table's now");
});

test("upsert: re-created with fewer messages and partitions, a clean restart at the log start; old keys stay unless the new topic has them", async () => {
  const topic = topics.accounts;
  const job = jobFor("accounts", { mode: "upsert", dedup_keys: ["_kafka_key"] });
  const table = restTable(job.namespace, "accounts");
  const model = new UpsertModel((m) => m.key, true);

  await createTopic(topic, 2);
  const oldCounter = new OffsetCounter();
  const old = oldCounter.assign(
    Array.from({ length: 80 }, (_, i) => ({ partition: (i % 40) % 2, key: `k${i % 40}`, value: { gen: 1, i } })),
  );
  await produceExactly(topic, old, oldCounter);
  const first = await syncJob(job, { stateDir });
  assert.equal(first.messagesRead, 80);
  model.apply(old);
  const oldId = await topicId(topic);

  // One partition now, 25 messages: keys k0..k19 again (k3 twice), a tombstone for k5, and a new key.
  await recreate(topic, 1);
  const newCounter = new OffsetCounter();
  const fresh: ModelMessage[] = newCounter.assign([
    ...Array.from({ length: 20 }, (_, i) => ({ partition: 0, key: `k${i}`, value: { gen: 2, i } })),
    { partition: 0, key: "k3", value: { gen: 2, i: 100 } },
    { partition: 0, key: "k5", value: null },
    { partition: 0, key: "k99", value: { gen: 2, i: 99 } },
    { partition: 0, key: "k1", value: { gen: 2, i: 101 } },
    { partition: 0, key: "k2", value: { gen: 2, i: 102 } },
  ]);
  await produceExactly(topic, fresh, newCounter);
  const newId = await topicId(topic);

  // What `floe check` shows: the topic re-created, both partitions of the old offsets set aside.
  const catalog = await loadCatalog(catalogConfig(job.destination));
  try {
    const plan = await planSync(job, new KafkaSource(cluster), catalog);
    assert.deepEqual(plan.recreated, [
      { topic, table: `${job.namespace}.accounts`, previousTopicId: oldId, topicId: newId },
    ]);
    assert.deepEqual(
      plan.offsets.partitions.map((p) => [p.partition, p.startFrom, p.startOffset, p.stopOffset, p.tableOffset]),
      [[0, "log-start", 0n, 25n, null]],
    );
    assert.deepEqual(plan.offsets.ahead, []);
  } finally {
    await catalog.close();
  }

  const second = await syncJob(job, { stateDir });
  assert.equal(second.status, "complete");
  assert.equal(second.messagesRead, 25);
  assert.deepEqual(second.recreatedTopics, [
    { topic, table: `${job.namespace}.accounts`, previousTopicId: oldId, topicId: newId },
  ]);
  assert.match(reportToText(second), /its rows stay where the new topic has no message with their key/);
  model.topicRecreated();
  const figures = model.apply(fresh);
  const report = second.tables[0]!;
  assert.deepEqual(
    [report.recordsAdded, report.positionsDeleted],
    [figures.recordsAdded, figures.positionsDeleted],
    "the new topic's messages replace the old topic's rows by key",
  );
  const rows = byPartitionOffsetGen(model.rows(["gen", "i"]));
  assert.equal(rows.length, 40 - 1 + 1, "k0..k39 but k5, and k99");
  await readers.assertRows(table, rows, { columns: modelColumns(["gen", "i"]), orderBy });
  assert.deepEqual(await tablePosition(job, "accounts"), {
    offsets: new Map([[topic, offsets({ 0: 25n })]]),
    topicIds: new Map([[topic, newId]]),
  });

  const idle = await syncJob(job, { stateDir });
  assert.equal(idle.messagesRead, 0);
  assert.deepEqual(idle.recreatedTopics, []);
});
