// Upserts whose batches span several data files (target_file_size_bytes at its 1 MiB minimum,
// values of incompressible bytes): the key index must map every row of every file to its
// message, so that later syncs retire the right positions in the right files.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { buildJob } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import {
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
const { run, name, namespace, dir, warehouse, stateDir, catalogRef } = syncWorkspace("multifile");
const topic = `multifile${run}_kv`;

const job = buildJob(
  {
    name,
    kafka: {
      consumer_group: `floe_${name}`,
      topic_pattern: `^${topic}$`,
      security: { protocol: "PLAINTEXT" },
      max_threads: 3,
    },
    iceberg: { catalog: { type: "sql", warehouse }, target_engines: ["duckdb"], target_file_size_bytes: 1048576 },
    streams: { [topic]: { mode: "upsert", dedup_keys: ["_kafka_key"], table: "kv" } },
  },
  join(dir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders({ engines: ["duckdb", "pyiceberg"] });
  await createTopic(topic, PARTITIONS);
});
after(async () => {
  await readers?.close();
  await deleteTopic(topic);
});

test(`upsert batches over several data files keep one row per key (FLOE_SEED=${seed})`, async () => {
  const counter = new OffsetCounter();
  const model = new UpsertModel((m) => m.key, true);
  for (let sync = 0; sync < 4; sync++) {
    const messages = counter.assign(
      Array.from({ length: 2500 }, () => {
        const k = random.int(3000);
        const value = random.chance(0.05) ? null : { n: random.int(1e6), blob: randomBytes(1200).toString("base64") };
        return { partition: k % PARTITIONS, key: `k${k}`, value };
      }),
    );
    await produceExactly(topic, messages, counter);
    const figures = model.apply(messages);
    const report = await syncJob(job, { stateDir });
    const t = report.tables[0]!;
    console.log(
      `sync ${sync + 1}: ${t.dataFilesAdded} data files, ${t.deletionVectorsAdded} DVs, ${t.recordsAdded} records, ${t.positionsDeleted} positions deleted`,
    );
    assert.deepEqual(
      [t.recordsAdded, t.positionsDeleted],
      [figures.recordsAdded, figures.positionsDeleted],
      `sync ${sync + 1}: report`,
    );
    if (sync === 0) assert.ok(t.dataFilesAdded > 1, "the first sync writes several files");
    for (const engine of readers.engines) {
      const rows = await readers.rows(
        engine,
        { catalog: catalogRef, namespace, table: "kv" },
        { columns: modelColumns(["n"]), orderBy: ["_kafka_partition", "_kafka_offset"] },
      );
      assert.deepStrictEqual(rows, model.rows(["n"]), `sync ${sync + 1}: ${engine}`);
    }
  }
});
