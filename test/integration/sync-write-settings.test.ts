// The job file's write settings (compression, target_file_size_bytes) against the table's
// properties: what the job says wins, for the data files a sync writes (their Parquet footer's
// codec) and on the table (its write.* properties, which other engines' writes and compactions
// read); a job that no longer says it leaves the table's value in force. Real Kafka, the
// embedded catalog, and DuckDB, PyIceberg and Spark reading what the model says.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parquetMetadata } from "hyparquet";
import { currentSnapshot, planFiles, TableProperties } from "#src/iceberg/index.ts";
import type { Job } from "#src/job/job.ts";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { buildJob, type IcebergSection } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import { AppendModel, modelColumns, OffsetCounter, produceExactly, syncWorkspace } from "../helpers/sync-model.ts";
import { loadJobTable } from "../helpers/tables.ts";

const PARTITIONS = 2;
const { run, name, namespace, dir, warehouse, stateDir, catalogRef } = syncWorkspace("writesettings");
const topic = `writesettings${run}_events`;
const CODEC = TableProperties.WRITE_PARQUET_COMPRESSION_CODEC.key;
const SIZE = TableProperties.WRITE_TARGET_FILE_SIZE_BYTES.key;

/** The job, with `settings` (write settings of destination.iceberg) or none. */
type WriteSettingsSection = Pick<IcebergSection, "compression" | "target_file_size_bytes">;

function job(settings: WriteSettingsSection): Job {
  return buildJob(
    {
      name,
      kafka: { consumer_group: `floe_${name}`, topic_pattern: `^${topic}$`, security: { protocol: "PLAINTEXT" } },
      iceberg: { catalog: { type: "sql", warehouse }, ...settings },
      streams: { [topic]: { mode: "append", table: "events" } },
    },
    join(dir, "job.yaml"),
  );
}

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await createTopic(topic, PARTITIONS);
});
after(async () => {
  await readers?.close();
  await deleteTopic(topic);
});

/** The Parquet codecs of the data files each snapshot added, by snapshot id. */
async function codecsBySnapshot(j: Job): Promise<Map<bigint, Set<string>>> {
  const table = await loadJobTable(j, "events");
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  const codecs = new Map<bigint, Set<string>>();
  for (const { entry } of plan.dataFiles.values()) {
    const bytes = await table.io.read(entry.file.filePath);
    const footer = parquetMetadata(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer,
    );
    const set = codecs.get(entry.snapshotId!) ?? new Set<string>();
    for (const group of footer.row_groups) for (const chunk of group.columns) set.add(chunk.meta_data!.codec);
    codecs.set(entry.snapshotId!, set);
  }
  return codecs;
}

test("a job's compression and target file size win over the table's, and are recorded on it", async () => {
  const counter = new OffsetCounter();
  const model = new AppendModel();
  const syncs: { settings: WriteSettingsSection; codec: string; properties: Record<string, string> }[] = [
    // The table is created with the job's codec, and the default size recorded.
    { settings: { compression: "snappy" }, codec: "SNAPPY", properties: { [CODEC]: "snappy", [SIZE]: "134217728" } },
    // Edited in the job: new files get the new codec, the table's properties follow.
    {
      settings: { compression: "gzip", target_file_size_bytes: 2097152 },
      codec: "GZIP",
      properties: { [CODEC]: "gzip", [SIZE]: "2097152" },
    },
    // No longer in the job: the table's (the job's last) stays in force.
    { settings: {}, codec: "GZIP", properties: { [CODEC]: "gzip", [SIZE]: "2097152" } },
  ];
  const expected = new Map<bigint, string>();
  for (const [i, sync] of syncs.entries()) {
    const j = job(sync.settings);
    const messages = counter.assign(
      Array.from({ length: 400 }, (_, n) => ({
        partition: n % PARTITIONS,
        key: `k${n}`,
        value: { n: i * 1000 + n, note: `sync ${i} message ${n}` },
      })),
    );
    await produceExactly(topic, messages, counter);
    model.apply(messages);
    const report = await syncJob(j, { stateDir });
    const t = report.tables[0]!;
    assert.equal(t.recordsAdded, messages.length, `sync ${i + 1}: report`);
    expected.set(BigInt(t.snapshotId!), sync.codec);

    const table = await loadJobTable(j, "events");
    for (const [key, value] of Object.entries(sync.properties)) {
      assert.equal(table.metadata.properties[key], value, `sync ${i + 1}: ${key}`);
    }
    const codecs = await codecsBySnapshot(j);
    for (const [snapshot, codec] of expected) {
      assert.deepEqual([...(codecs.get(snapshot) ?? [])], [codec], `sync ${i + 1}: files of snapshot ${snapshot}`);
    }
    for (const engine of readers.engines) {
      // Spark's JDBC catalog over the SQLite file answered the second read with the first sync's
      // snapshot: Spark reads the metadata file the catalog points at, the others the catalog.
      const ref =
        engine === "spark"
          ? { metadataLocation: table.metadataLocation }
          : { catalog: catalogRef, namespace, table: "events" };
      const rows = await readers.rows(engine, ref, {
        columns: modelColumns(["n", "note"]),
        orderBy: ["_kafka_partition", "_kafka_offset"],
      });
      assert.deepStrictEqual(rows, model.rows(["n", "note"]), `sync ${i + 1}: ${engine}`);
    }
  }
});
