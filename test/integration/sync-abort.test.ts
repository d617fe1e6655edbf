// A sync stopped mid-read: runSync's signal is aborted once a random
// sixth to two thirds of the planned messages are in, standing in for a broker loss (the shared broker cannot be stopped under
// other tests; a failed fetch takes the same path, read.ts stops every worker cleanly). What was
// read must land: the report says "partial", each table holds exactly a prefix of every
// partition, ending at the offsets its snapshot records; the next sync resumes there, with no
// gap and no duplicate, and ends with the rows of a sync that was never stopped. Values are
// ~2 KB so that each partition takes several fetches. SQLite catalog in a temporary directory.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { isNoSuch } from "#src/iceberg/catalog/catalog.ts";
import { openSqlCatalog } from "#src/iceberg/catalog/sql-catalog.ts";
import { Table } from "#src/iceberg/table.ts";
import { committedOffsets } from "#src/pipeline/snapshot-offsets.ts";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { buildJob } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import {
  AppendModel,
  type ModelMessage,
  modelColumns,
  OffsetCounter,
  produceExactly,
  Random,
  syncWorkspace,
  UpsertModel,
} from "../helpers/sync-model.ts";

const seed = Number(process.env.FLOE_SEED ?? Date.now() % 1_000_000);
const random = new Random(seed);
const PARTITIONS = 3;
const { run, name, namespace, dir, warehouse, stateDir, catalogRef } = syncWorkspace("abort");
const prefix = `abort${run}_`;
const topics = { app: `${prefix}app`, kv: `${prefix}kv` } as const;
type TableName = keyof typeof topics;
const tableNames = Object.keys(topics) as TableName[];
const columns: Record<TableName, string[]> = { app: ["seq"], kv: ["name", "n"] };

const job = buildJob(
  {
    name,
    kafka: {
      consumer_group: `floe_${name}`,
      topic_pattern: `^${prefix}(app|kv)$`,
      security: { protocol: "PLAINTEXT" },
      max_threads: 3,
    },
    iceberg: { catalog: { type: "sql", warehouse }, target_engines: ["duckdb", "spark"] },
    streams: {
      [topics.app]: { mode: "append", table: "app" },
      [topics.kv]: { mode: "upsert", dedup_keys: ["_kafka_key"], table: "kv" },
    },
  },
  join(dir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders({ engines: ["duckdb", "pyiceberg"] });
  for (const topic of Object.values(topics)) await createTopic(topic, PARTITIONS);
});
after(async () => {
  await readers?.close();
  for (const topic of Object.values(topics)) await deleteTopic(topic);
});

const pad = "x".repeat(2000);

async function tableOffsets(t: TableName): Promise<Map<number, bigint>> {
  const catalog = await openSqlCatalog({ warehouse, name: "floe" });
  try {
    const table = await Table.load(catalog, { namespace: [namespace], name: t }).catch((error: unknown) => {
      // A stream the aborted sync read nothing of has no table yet.
      if (isNoSuch(error, "table")) return undefined;
      throw error;
    });
    return (table && committedOffsets(table.metadata, t).get(topics[t])) ?? new Map();
  } finally {
    await catalog.close();
  }
}

async function assertModel(where: string, t: TableName, model: AppendModel | UpsertModel) {
  const expected = model.rows(columns[t]);
  for (const engine of readers.engines) {
    const rows = await readers.rows(
      engine,
      { catalog: catalogRef, namespace, table: t },
      { columns: modelColumns(columns[t]), orderBy: ["_kafka_partition", "_kafka_offset"] },
    );
    assert.deepStrictEqual(rows, expected, `${where}: ${engine} read other rows than the model from ${t}`);
  }
}

test(`a sync aborted mid-read commits what it read, reports partial, and the next sync resumes exactly (FLOE_SEED=${seed})`, async () => {
  const counters = { app: new OffsetCounter(), kv: new OffsetCounter() };
  const app = counters.app.assign(
    Array.from({ length: 3000 }, (_, i) => ({ partition: i % PARTITIONS, key: null, value: { seq: i, pad } })),
  );
  const kv = counters.kv.assign(
    Array.from({ length: 3000 }, () => {
      const k = random.int(300);
      const value = random.chance(0.1) ? null : { name: `kv${k}_${random.int(1000)}`, n: random.int(1e6), pad };
      return { partition: k % PARTITIONS, key: `k${k}`, value };
    }),
  );
  const messages: Record<TableName, ModelMessage[]> = { app, kv };
  await Promise.all(tableNames.map((t) => produceExactly(topics[t], messages[t], counters[t])));

  const abort = new AbortController();
  let planned = 0;
  const fraction = 1 / 6 + random.next() / 2;
  const first = await syncJob(job, {
    stateDir,
    signal: abort.signal,
    onEvent: (event) => {
      // Somewhere between a sixth and two thirds of the way: batches in, from several partitions.
      if (event.type === "planned") planned = Number(event.messagesToRead);
      else if (event.type === "partition-progress" && event.messagesRead >= planned * fraction) abort.abort();
    },
  });
  assert.equal(first.status, "partial");
  assert.equal(first.readStatus, "aborted");
  const models = { app: new AppendModel(), kv: new UpsertModel((m) => m.key, true) };
  let landed = 0;
  const firstOffsets = new Map<TableName, Map<number, bigint>>();
  for (const t of tableNames) {
    // The table's snapshot says where it stopped; it must hold exactly the messages below that.
    const offsets = await tableOffsets(t);
    firstOffsets.set(t, offsets);
    const read = messages[t].filter((m) => m.offset < (offsets.get(m.partition) ?? 0n));
    const figures = models[t].apply(read);
    const report = first.tables.find((r) => r.table === `${namespace}.${t}`);
    assert.ok(report, `no report for ${t}`);
    assert.equal(report.messagesRead, read.length, `${t}: messages read`);
    assert.equal(report.recordsAdded, figures.recordsAdded, `${t}: records added`);
    if (read.length > 0) await assertModel("after the aborted sync", t, models[t]);
    landed += read.length;
    console.log(
      `${t}: the aborted sync landed ${read.length} of ${messages[t].length} messages, up to offsets ${JSON.stringify(Object.fromEntries([...offsets].map(([p, o]) => [p, String(o)])))}`,
    );
  }
  assert.equal(first.messagesRead, landed, "every message read landed");
  assert.ok(landed < app.length + kv.length, "the abort stopped the read early");

  const second = await syncJob(job, { stateDir });
  assert.equal(second.status, "complete");
  assert.equal(second.messagesRead, app.length + kv.length - landed, "the next sync reads the rest, once");
  for (const t of tableNames) {
    const stopped = firstOffsets.get(t)!;
    const rest = messages[t].filter((m) => m.offset >= (stopped.get(m.partition) ?? 0n));
    const figures = models[t].apply(rest);
    const report = second.tables.find((r) => r.table === `${namespace}.${t}`);
    assert.ok(report, `no report for ${t}`);
    assert.deepEqual(
      [report.messagesRead, report.recordsAdded, report.positionsDeleted],
      [figures.messagesRead, figures.recordsAdded, figures.positionsDeleted],
      `${t}: report of the resuming sync`,
    );
    await assertModel("after the resuming sync", t, models[t]);
    const offsets = await tableOffsets(t);
    for (let p = 0; p < PARTITIONS; p++) assert.equal(offsets.get(p), counters[t].end(p), `${t} partition ${p}`);
  }
});
