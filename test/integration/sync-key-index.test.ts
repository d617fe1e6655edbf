// The upsert key index is a cache of the table, never the truth: a sync
// must end with the same rows whatever state the index file is in. Against the REST catalog,
// an upsert stream (dedup on _kafka_key, tombstones delete) over 3 partitions is synced while
// the index is made stale (the file of an earlier sync put back: a sync killed between its
// commit and saving the index), the table is compacted by Spark's rewrite_data_files (another
// writer: files removed and added, no floe offsets in its snapshot), the index is deleted,
// and it is overwritten with garbage. After every sync the table equals the model: values, key,
// partition, offset and _op_type (c for a key new to the table, u for one it had), and the
// report's records added and positions deleted are the model's.
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Engine, type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { buildJob } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import { modelColumns, OffsetCounter, produceExactly, Random, UpsertModel } from "../helpers/sync-model.ts";

const seed = Number(process.env.FLOE_SEED ?? Date.now() % 1_000_000);
const random = new Random(seed);
const PARTITIONS = 3;
const run = `${process.pid}_${Date.now()}`;
const topic = `keyindex${run}_kv`;
const name = `keyindex_${run}`;
const namespace = `${name}_topics`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-keyindex-"));
const saved = join(stateDir, "saved");

const job = buildJob(
  {
    name,
    kafka: {
      consumer_group: `floe_${name}`,
      topic_pattern: `^${topic}$`,
      security: { protocol: "PLAINTEXT" },
      max_threads: 3,
    },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri }, target_engines: ["duckdb", "spark"] },
    streams: { [topic]: { mode: "upsert", dedup_keys: ["_kafka_key"], table: "kv" } },
  },
  join(stateDir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await createTopic(topic, PARTITIONS);
});
after(async () => {
  await readers?.close();
  await deleteTopic(topic);
});

const counter = new OffsetCounter();
const model = new UpsertModel((m) => m.key, true);
const columns = ["name", "n"];

function indexFile(): string {
  const files = readdirSync(stateDir).filter((f) => f.endsWith(".keyindex"));
  assert.equal(files.length, 1, `one key index in ${stateDir}: ${files.join(", ")}`);
  return join(stateDir, files[0]!);
}

async function syncAndCheck(step: string, engines: readonly Engine[] = ["duckdb"]) {
  const messages = counter.assign(
    Array.from({ length: 400 }, () => {
      const k = random.int(150);
      const value = random.chance(0.15) ? null : { name: `kv${k}_${step}_${random.int(1000)}`, n: random.int(1e6) };
      return { partition: k % PARTITIONS, key: `k${k}`, value };
    }),
  );
  await produceExactly(topic, messages, counter);
  const figures = model.apply(messages);
  const report = await syncJob(job, { stateDir });
  assert.equal(report.status, "complete", step);
  const t = report.tables[0]!;
  assert.deepEqual(
    [t.messagesRead, t.recordsAdded, t.positionsDeleted],
    [figures.messagesRead, figures.recordsAdded, figures.positionsDeleted],
    `${step}: report (FLOE_SEED=${seed})`,
  );
  for (const engine of engines) {
    const rows = await readers.rows(engine, restTable(namespace, "kv"), {
      columns: modelColumns(columns),
      orderBy: ["_kafka_partition", "_kafka_offset"],
    });
    assert.deepStrictEqual(rows, model.rows(columns), `${step}: ${engine} (FLOE_SEED=${seed})`);
  }
}

test(`a stale, missing or corrupt key index, or a compaction by Spark, changes nothing in what a sync writes (FLOE_SEED=${seed})`, async () => {
  await syncAndCheck("first sync");
  copyFileSync(indexFile(), saved);
  await syncAndCheck("second sync");
  // As if the second sync had been killed between its commit and saving the index.
  copyFileSync(saved, indexFile());
  await syncAndCheck("index one snapshot behind");

  const [rewrite] = await readers.spark(
    `CALL rest.system.rewrite_data_files(table => '${namespace}.kv', options => map('min-input-files','2'))`,
  );
  assert.ok(
    Number(rewrite?.rewritten_data_files_count) >= 2,
    `Spark compacted: ${JSON.stringify(rewrite, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`,
  );
  await syncAndCheck("after Spark's rewrite_data_files", readers.engines);

  rmSync(indexFile());
  await syncAndCheck("index deleted");
  writeFileSync(indexFile(), Buffer.from("not a key index"));
  await syncAndCheck("index overwritten with garbage");
  // Saved before the compaction, four snapshots ago.
  copyFileSync(saved, indexFile());
  await syncAndCheck("index from before the compaction", readers.engines);
});
