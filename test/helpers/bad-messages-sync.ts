// What the bad-message sync tests (test/integration/sync-bad-messages-*.test.ts) share: a job per
// case over the real broker and REST catalog, DuckDB to read the tables back, and what a failed
// sync must leave as it was (the tables' snapshots and the group's offsets).
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import type { Catalog } from "#src/iceberg/catalog/catalog.ts";
import { loadCatalog } from "#src/iceberg/catalog/load-catalog.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import type { Table } from "#src/iceberg/table.ts";
import type { Job } from "#src/job/job.ts";
import { readGroupOffsets } from "#src/kafka/commit-offsets.ts";
import { KafkaCluster } from "#src/kafka/connection.ts";
import { kafkaConnectionOptions } from "#src/pipeline/connect.ts";
import type { SyncReport } from "#src/pipeline/sync.ts";
import { produce, type TestMessage } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { buildJob, type StreamSection } from "./job-file.ts";
import { tableIfExists } from "./tables.ts";

export const run = `${process.pid}_${Date.now()}`;
export const stateDir = mkdtempSync(join(tmpdir(), "floe-bad-"));

/** DuckDB and the REST catalog, opened by the before() that badMessagesSuite() registers. */
export let readers: Readers;
export let catalog: Catalog;

/** Registers the test file's before() and after(): DuckDB and the catalog opened, then closed. */
export function badMessagesSuite(): void {
  before(async () => {
    readers = await startReaders({ engines: ["duckdb"] });
    catalog = await loadCatalog({ type: "rest", uri: restCatalog.uri });
  });
  after(async () => {
    await catalog?.close();
    await readers?.close();
  });
}

/** A job over the topics `<case>_<name>` with the given stream settings, each into table <name>. */
export function jobFor(
  name: string,
  streams: Record<string, StreamSection>,
): { job: Job; namespace: string; topic: (t: string) => string } {
  const jobName = `bad_${name}_${run}`;
  const topic = (t: string) => `bad${run}_${name}_${t}`;
  const job = buildJob(
    {
      name: jobName,
      kafka: { topic_pattern: `^bad${run}_${name}_.*`, max_threads: 2 },
      iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
      streams: Object.fromEntries(Object.entries(streams).map(([t, s]) => [topic(t), { table: t, ...s }])),
    },
    join(stateDir, `${name}.yaml`),
  );
  return { job, namespace: `${jobName}_topics`, topic };
}

export const json = (value: unknown) => JSON.stringify(value);
export const b64 = (data: string | Buffer) => Buffer.from(data).toString("base64");

export function tableReport(report: SyncReport, namespace: string, table: string) {
  const t = report.tables.find((r) => r.table === `${namespace}.${table}`);
  assert.ok(t, `no report for ${table}: ${report.tables.map((r) => r.table).join(", ")}`);
  return t;
}

export function loadTable(namespace: string, name: string): Promise<Table | undefined> {
  return tableIfExists(catalog, namespace, name);
}

export async function snapshotOf(namespace: string, name: string): Promise<bigint | undefined | "no table"> {
  const table = await loadTable(namespace, name);
  return table ? currentSnapshot(table.metadata)?.snapshotId : "no table";
}

export async function withCluster<T>(job: Job, work: (cluster: KafkaCluster) => Promise<T>): Promise<T> {
  const cluster = await KafkaCluster.connect(kafkaConnectionOptions(job.source));
  try {
    return await work(cluster);
  } finally {
    await cluster.close();
  }
}

export const groupOffsets = (job: Job, topic: string, partitions = 1) =>
  withCluster(job, (cluster) => readGroupOffsets(cluster, job.consumerGroup, [{ topic, partitions }]));

/** What a sync must leave behind when it fails: the tables' snapshots and the group's offsets. */
export async function committedState(job: Job, namespace: string, topic: string, table: string, partitions = 1) {
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
export async function producePerPartition(topic: string, messages: TestMessage[]): Promise<void> {
  for (const partition of new Set(messages.map((m) => m.partition ?? 0))) {
    await produce(
      topic,
      messages.filter((m) => (m.partition ?? 0) === partition),
    );
  }
}

/** Not UTF-8: {"a":"\xff\xfe"}. */
export const notUtf8 = Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
/** A value in the Confluent wire format (magic byte, schema id 42), on a stream that reads JSON. */
export const confluentFramed = Buffer.concat([Buffer.from([0, 0, 0, 0, 42]), Buffer.from([2, 6, 0x66, 0x6f, 0x6f])]);
