// A partition lost mid-sync, for real rather than through the signal: one of two topics is
// deleted at an exact moment of the sync (its event handler deletes it while the sync stands
// still), so what follows fails the way it does when the topic goes away:
// - during the read, its fetches fail and so does the group commit that names it. The sync must
//   not fail: what was read lands (all of the other topic, a prefix of the lost one, each ending
//   at the offsets its snapshot records), the report says partial with the read error and the
//   group error, and the next sync reads nothing twice.
// - after its table's commit, only the group commit meets it. The tables hold everything and the
//   other topic's group offsets are committed: the sync is complete, its report naming the topic
//   whose offsets had nowhere to go.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { openSqlCatalog } from "#src/iceberg/catalog/sql-catalog.ts";
import { Table } from "#src/iceberg/table.ts";
import { readGroupOffsets } from "#src/kafka/commit-offsets.ts";
import { committedOffsets } from "#src/pipeline/snapshot-offsets.ts";
import { connectCluster, createTopic, deleteTopic, deleteTopicNow } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { buildJob } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import { AppendModel, modelColumns, OffsetCounter, produceExactly, syncWorkspace } from "../helpers/sync-model.ts";

const { run, name, namespace, dir, warehouse, catalogRef } = syncWorkspace("topicloss");
type Which = "kept" | "lost";

/** Two topics, each landing in its own table, one of which a test deletes. */
function topicPair(moment: string) {
  const prefix = `topicloss${run}_${moment}_`;
  const topics = { kept: `${prefix}kept`, lost: `${prefix}lost` } as const;
  const tables = { kept: `${moment}_kept`, lost: `${moment}_lost` } as const;
  const group = `floe_${name}_${moment}`;
  const job = buildJob(
    {
      name,
      kafka: {
        consumer_group: group,
        topic_pattern: `^${prefix}(kept|lost)$`,
        security: { protocol: "PLAINTEXT" },
        max_threads: 2,
      },
      iceberg: { catalog: { type: "sql", warehouse } },
      streams: {
        [topics.kept]: { mode: "append", table: tables.kept },
        [topics.lost]: { mode: "append", table: tables.lost },
      },
    },
    join(dir, `${moment}.yaml`),
  );
  return { topics, tables, group, job };
}
const midRead = topicPair("read");
const afterCommit = topicPair("commit");

let readers: Readers;
before(async () => {
  readers = await startReaders({ engines: ["duckdb"] });
  for (const pair of [midRead, afterCommit])
    for (const topic of Object.values(pair.topics)) await createTopic(topic, 1);
});
after(async () => {
  await readers?.close();
  for (const pair of [midRead, afterCommit]) for (const topic of Object.values(pair.topics)) await deleteTopic(topic);
});

async function tableOffset(table: string, topic: string): Promise<bigint> {
  const catalog = await openSqlCatalog({ warehouse, name: "floe" });
  try {
    const loaded = await Table.load(catalog, { namespace: [namespace], name: table });
    return committedOffsets(loaded.metadata, table).get(topic)?.get(0) ?? 0n;
  } finally {
    await catalog.close();
  }
}

async function produceBoth(pair: ReturnType<typeof topicPair>, count: number) {
  const pad = "x".repeat(2000);
  const messages = {} as Record<Which, ReturnType<OffsetCounter["assign"]>>;
  for (const t of ["kept", "lost"] as const) {
    const counter = new OffsetCounter();
    messages[t] = counter.assign(
      Array.from({ length: count }, (_, i) => ({ partition: 0, key: null, value: { i, pad } })),
    );
    await produceExactly(pair.topics[t], messages[t], counter);
  }
  return messages;
}

/** Each table holds exactly the messages below the offset its snapshot records; returns how many. */
async function checkLanded(
  pair: ReturnType<typeof topicPair>,
  t: Which,
  messages: ReturnType<OffsetCounter["assign"]>,
): Promise<number> {
  const offset = await tableOffset(pair.tables[t], pair.topics[t]);
  const landed = messages.filter((m) => m.offset < offset);
  const model = new AppendModel();
  model.apply(landed);
  const rows = await readers.rows(
    "duckdb",
    { catalog: catalogRef, namespace, table: pair.tables[t] },
    { columns: modelColumns(["i"]), orderBy: ["_kafka_partition", "_kafka_offset"] },
  );
  assert.deepStrictEqual(rows, model.rows(["i"]), `${t}: exactly the messages below the table's offset`);
  return landed.length;
}

test("a topic deleted mid-read: what was read lands, the sync reports partial, nothing is read twice", async () => {
  const { topics, tables, job } = midRead;
  // 3000 messages of 2 KB: each partition takes several fetches of ~1 MiB.
  const messages = await produceBoth(midRead, 3000);
  let deleted = false;
  const report = await syncJob(job, {
    stateDir: dir,
    onEvent: (event) => {
      // At the lost topic's first batch, with more of it still to fetch.
      if (deleted || event.type !== "partition-progress" || event.topic !== topics.lost) return;
      if (event.nextOffset >= event.stopOffset) throw new Error("the lost topic was read in one batch: make it longer");
      deleteTopicNow(topics.lost);
      deleted = true;
    },
  });
  assert.ok(deleted);
  assert.equal(report.status, "partial");
  assert.equal(report.readStatus, "failed");
  assert.match(report.readError ?? "", new RegExp(`${topics.lost} partition 0`));
  assert.match(report.groupCommitError ?? "", /consumer group/);

  for (const t of ["kept", "lost"] as const) {
    const landed = await checkLanded(midRead, t, messages[t]);
    if (t === "kept") assert.equal(landed, 3000, "the other topic was read to the end");
    else assert.ok(landed < 3000, "the lost topic was read in part");
    const tableReport = report.tables.find((r) => r.table === `${namespace}.${tables[t]}`);
    assert.equal(tableReport?.recordsAdded, landed, `${t}: records added`);
    console.log(`${t}: ${landed} of 3000 messages landed`);
  }
  assert.equal(
    report.messagesRead,
    report.tables.reduce((sum, r) => sum + r.messagesRead, 0),
  );

  const next = await syncJob(job, { stateDir: dir });
  assert.equal(next.status, "complete");
  assert.equal(next.messagesRead, 0, "the kept topic's table offsets win over the group the failed commit left behind");
});

test("a topic deleted after its table's commit: everything landed, the other topic's group offsets are committed, the report names the topic", async () => {
  const { topics, group, job } = afterCommit;
  const messages = await produceBoth(afterCommit, 20);
  let committed = 0;
  const report = await syncJob(job, {
    stateDir: dir,
    onEvent: (event) => {
      // Both tables committed: the group commit comes next.
      if (event.type === "table-committed" && ++committed === 2) deleteTopicNow(topics.lost);
    },
  });
  assert.equal(committed, 2, "one commit round per table");
  assert.equal(report.readStatus, "complete");
  assert.equal(report.status, "complete", "every planned message is in its table");
  assert.match(report.groupCommitError ?? "", new RegExp(`topic ${topics.lost} no longer exists`));
  for (const t of ["kept", "lost"] as const) assert.equal(await checkLanded(afterCommit, t, messages[t]), 20);

  const cluster = await connectCluster();
  try {
    const offsets = await readGroupOffsets(cluster, group, [{ topic: topics.kept, partitions: 1 }]);
    assert.equal(offsets.get(topics.kept)?.get(0), 20n, "the kept topic's offsets reached the group");
  } finally {
    await cluster.close();
  }
  const next = await syncJob(job, { stateDir: dir });
  assert.equal(next.status, "complete");
  assert.equal(next.messagesRead, 0);
});
