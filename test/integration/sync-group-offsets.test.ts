// The consumer group shows floe's progress (lag tools read it), and is committed after the
// tables. A sync killed between the two leaves the group behind the tables; the next sync reads
// from the tables' offsets (no duplicate) and must bring the group level with them, also
// when there is nothing new to read.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { openSqlCatalog } from "#src/iceberg/catalog/sql-catalog.ts";
import { Table } from "#src/iceberg/table.ts";
import { commitGroupOffsets, readGroupOffsets } from "#src/kafka/commit-offsets.ts";
import { KafkaCluster } from "#src/kafka/connection.ts";
import { committedOffsets } from "#src/pipeline/snapshot-offsets.ts";
import { bootstrapServers, createTopic, deleteTopic } from "../../dev/kafka.ts";
import { buildJob } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import { OffsetCounter, produceExactly } from "../helpers/sync-model.ts";

const PARTITIONS = 3;
const run = `${process.pid}_${Date.now()}`;
const topic = `groupoffsets${run}_app`;
const name = `groupoffsets_${run}`;
const group = `floe_${name}`;
const dir = mkdtempSync(join(tmpdir(), "floe-group-"));
const warehouse = join(dir, "warehouse");

const job = buildJob(
  {
    name,
    kafka: { consumer_group: group, topic_pattern: `^${topic}$`, security: { protocol: "PLAINTEXT" } },
    iceberg: { catalog: { type: "sql", warehouse } },
    streams: { [topic]: { mode: "append", table: "app" } },
  },
  join(dir, "job.yaml"),
);

let cluster: KafkaCluster;
before(async () => {
  cluster = await KafkaCluster.connect({ bootstrapServers: [bootstrapServers], security: { protocol: "PLAINTEXT" } });
  await createTopic(topic, PARTITIONS);
});
after(async () => {
  await cluster?.close();
  await deleteTopic(topic);
});

const text = (offsets: Map<number, bigint> | undefined) =>
  JSON.stringify([...(offsets ?? new Map())].sort(([a], [b]) => a - b).map(([p, o]) => [p, String(o)]));

async function tableOffsets() {
  const catalog = await openSqlCatalog({ warehouse, name: "floe" });
  try {
    const table = await Table.load(catalog, { namespace: [job.namespace], name: "app" });
    return committedOffsets(table.metadata, "app").get(topic);
  } finally {
    await catalog.close();
  }
}

async function groupOffsets() {
  return (await readGroupOffsets(cluster, group, [{ topic, partitions: PARTITIONS }])).get(topic);
}

test("a sync repairs a consumer group left behind the tables, with or without new messages", async () => {
  const counter = new OffsetCounter();
  const produceSome = (n: number) =>
    produceExactly(
      topic,
      counter.assign(Array.from({ length: n }, (_, i) => ({ partition: i % PARTITIONS, key: null, value: { i } }))),
      counter,
    );
  await produceSome(300);
  assert.equal((await syncJob(job, { stateDir: dir })).messagesRead, 300);
  const ends = new Map([0, 1, 2].map((p) => [p, counter.end(p)]));
  assert.equal(text(await tableOffsets()), text(ends));
  assert.equal(text(await groupOffsets()), text(ends));

  // As if the sync had been killed after its table commit, before its group commit.
  await commitGroupOffsets(cluster, group, new Map([[topic, new Map([0, 1, 2].map((p) => [p, 10n]))]]));
  const idle = await syncJob(job, { stateDir: dir });
  assert.equal(idle.messagesRead, 0, "the tables' offsets win: nothing is read again");
  assert.equal(text(await groupOffsets()), text(ends), "the group is level with the table again");

  // Behind on one partition only, with new messages on another.
  await commitGroupOffsets(cluster, group, new Map([[topic, new Map([[2, 5n]])]]));
  await produceExactly(topic, counter.assign([{ partition: 0, key: null, value: { i: -1 } }]), counter);
  const next = await syncJob(job, { stateDir: dir });
  assert.equal(next.messagesRead, 1);
  const newEnds = new Map([0, 1, 2].map((p) => [p, counter.end(p)]));
  assert.equal(text(await tableOffsets()), text(newEnds));
  assert.equal(text(await groupOffsets()), text(newEnds), "the group is level with the table again");
});
