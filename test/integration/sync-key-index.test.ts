// The upsert key index is a cache of the table, never the truth: a sync
// must end with the same rows whatever state the index file is in. Against the REST catalog,
// an upsert stream (dedup on _kafka_key, tombstones delete) over 3 partitions is synced while
// the index is made stale (the file and journal of an earlier sync put back: a sync killed
// between its commit and saving the index), its journal is torn and overwritten, the table is compacted by Spark's rewrite_data_files (another
// writer: files removed and added, no floe offsets in its snapshot), the index is deleted,
// and it is overwritten with garbage. A sync after the first appends its changes to the journal
// and leaves the index file as it was. After every sync the table equals the model: values, key,
// partition, offset and _op_type (c for a key new to the table, u for one it had), and the
// report's records added and positions deleted are the model's.
import assert from "node:assert/strict";
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Engine, type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import type { KeyIndexActivity } from "../../src/pipeline/key-index-store.ts";
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
const savedJournal = join(stateDir, "saved-journal");

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

function journalFile(): string {
  return `${indexFile()}.journal`;
}

/** Copies the index file and its journal (when there is one) aside. */
function saveIndex(): void {
  copyFileSync(indexFile(), saved);
  rmSync(savedJournal, { force: true });
  if (existsSync(journalFile())) copyFileSync(journalFile(), savedJournal);
}

/** Puts back what saveIndex copied aside, the journal's absence included. */
function restoreIndex(): void {
  copyFileSync(saved, indexFile());
  rmSync(journalFile(), { force: true });
  if (existsSync(savedJournal)) copyFileSync(savedJournal, journalFile());
}

/**
 * One sync of 400 messages, checked against the model; `how` is how the sync brought the key
 * index to the table's snapshot (nothing for the first commit of a table).
 */
async function syncAndCheck(
  step: string,
  how: KeyIndexActivity["how"] | undefined,
  engines: readonly Engine[] = ["duckdb"],
) {
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
  assert.deepEqual(
    t.keyIndex?.map((a) => a.how),
    how === undefined ? [] : [how],
    `${step}: how the key index was brought to the table`,
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
  await syncAndCheck("first sync", undefined);
  saveIndex();
  const firstIndexBytes = readFileSync(indexFile());
  const firstJournalBytes = existsSync(journalFile()) ? readFileSync(journalFile()).length : 0;
  await syncAndCheck("second sync", "loaded");
  // The second commit's changes went to the journal; the index file is as the first sync wrote it.
  assert.deepEqual(readFileSync(indexFile()), firstIndexBytes, "the index file is not rewritten by the second sync");
  assert.ok(readFileSync(journalFile()).length > firstJournalBytes, "the second sync appended to the journal");
  // As if the second sync had been killed between its commit and saving the index.
  restoreIndex();
  await syncAndCheck("index one snapshot behind", "caught-up");

  // A frame that a crash cut short: the frames before it stand, the catch-up covers the rest.
  await syncAndCheck("journal of several frames", "loaded");
  truncateSync(journalFile(), readFileSync(journalFile()).length - 7);
  await syncAndCheck("journal torn", "caught-up");
  writeFileSync(journalFile(), Buffer.from("not a key index journal"));
  await syncAndCheck("journal overwritten with garbage", "caught-up");

  const [rewrite] = await readers.spark(
    `CALL rest.system.rewrite_data_files(table => '${namespace}.kv', options => map('min-input-files','2'))`,
  );
  assert.ok(
    Number(rewrite?.rewritten_data_files_count) >= 2,
    `Spark compacted: ${JSON.stringify(rewrite, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`,
  );
  await syncAndCheck("after Spark's rewrite_data_files", "caught-up", readers.engines);

  rmSync(indexFile());
  await syncAndCheck("index deleted", "rebuilt");
  writeFileSync(indexFile(), Buffer.from("not a key index"));
  await syncAndCheck("index overwritten with garbage", "rebuilt");
  // Saved before the compaction, several snapshots ago.
  restoreIndex();
  await syncAndCheck("index from before the compaction", "caught-up", readers.engines);
});
