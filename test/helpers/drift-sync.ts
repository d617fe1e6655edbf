// What the type-drift sync tests (test/integration/sync-type-drift-*.test.ts) share: a topic and
// a job per case over the real broker and REST catalog, a model of where each message must land
// (a row, a dead letter, or nowhere), read back through DuckDB, PyIceberg and Spark, and the
// check that a failed sync leaves the tables and the group's offsets as they were.
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
import type { SyncOptions, SyncReport } from "#src/pipeline/sync.ts";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { buildJob, type JobFileSpec, type StreamSection } from "./job-file.ts";
import { syncJob } from "./sync-job.ts";
import { type ModelMessage, OffsetCounter, produceExactly } from "./sync-model.ts";
import { tableIfExists } from "./tables.ts";

export const run = `${process.pid}_${Date.now()}`;
export const stateDir = mkdtempSync(join(tmpdir(), "floe-drift-"));
const topics: string[] = [];

/** The readers and the REST catalog, opened by the before() that driftSuite() registers. */
export let readers: Readers;
let catalog: Catalog;

/** Registers the test file's before() and after(): readers and catalog opened, then closed and the topics deleted. */
export function driftSuite(): void {
  before(async () => {
    readers = await startReaders();
    catalog = await loadCatalog({ type: "rest", uri: restCatalog.uri });
  });
  after(async () => {
    await catalog?.close();
    await readers?.close();
    for (const topic of topics) await deleteTopic(topic);
  });
}

export async function newTopic(name: string, partitions = 1): Promise<string> {
  const topic = `drift${run}_${name}`;
  await createTopic(topic, partitions);
  topics.push(topic);
  return topic;
}

/** A job (its own namespace and consumer group) over one topic into table `t`. */
export function jobFor(
  name: string,
  topic: string,
  stream: StreamSection,
  threads = 1,
): { job: Job; namespace: string } {
  const { spec, file } = jobSpec(name, topic, stream, threads);
  return { job: buildJob(spec, file), namespace: `drift_${name}_${run}_topics` };
}

export function jobSpec(name: string, topic: string, stream: StreamSection, threads: number) {
  const spec: JobFileSpec = {
    name: `drift_${name}_${run}`,
    kafka: { topic_pattern: `^${topic}$`, max_threads: threads },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    streams: { [topic]: { table: "t", ...stream } },
  };
  return { spec, file: join(stateDir, `${name}.yaml`) };
}

export type Row = Record<string, unknown>;

/**
 * Where each message of a topic must land. Values are given as the JSON text produced (some,
 * like 1e400, JSON.stringify cannot write), with the row they must read back as, or the dead
 * letter's kind and text; `unread` messages are produced but never land (the sync fails first).
 */
export class DriftModel {
  readonly topic: string;
  readonly #counter = new OffsetCounter();
  #pending: ModelMessage[] = [];
  readonly #rows: Row[] = [];
  readonly #deadLetters: Row[] = [];

  constructor(topic: string) {
    this.topic = topic;
  }

  row(value: string, expected: Row, partition = 0): this {
    const m = this.#message(value, partition);
    this.#rows.push({ ...expected, _kafka_partition: partition, _kafka_offset: m.offset });
    return this;
  }

  dead(value: string, kind: string, error: string, partition = 0): this {
    const m = this.#message(value, partition);
    this.#deadLetters.push({
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
    this.#message(value, partition);
    return this;
  }

  async produce(): Promise<void> {
    await produceExactly(this.topic, this.#pending, this.#counter);
    this.#pending = [];
  }

  /** The table and its dead-letter table, in every engine, equal the model. */
  async assertLanded(namespace: string, columns: string[]): Promise<void> {
    const orderBy = ["_kafka_partition", "_kafka_offset"];
    await readers.assertRows(restTable(namespace, "t"), sorted(this.#rows), {
      columns: [...columns, ...orderBy],
      orderBy,
    });
    if (this.#deadLetters.length === 0) {
      assert.equal(await loadTable(namespace, "t__dlq"), undefined, "no dead-letter table");
    } else {
      await readers.assertRows(restTable(namespace, "t__dlq"), sorted(this.#deadLetters), {
        columns: ["_kafka_partition", "_kafka_offset", "_kafka_value", "_error_kind", "_error"],
        orderBy,
      });
    }
  }

  #message(value: string, partition: number): ModelMessage {
    const [m] = this.#counter.assign([{ partition, key: null, value }]);
    this.#pending.push(m!);
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

export const json = (value: unknown) => JSON.stringify(value);

export function loadTable(namespace: string, name: string): Promise<Table | undefined> {
  return tableIfExists(catalog, namespace, name);
}

export function tableReport(report: SyncReport, namespace: string) {
  const t = report.tables.find((r) => r.table === `${namespace}.t`);
  assert.ok(t, `no report for ${namespace}.t`);
  return t;
}

/** What a failed sync must leave as it was: both tables' snapshots and the group's offsets. */
export async function committedState(job: Job, namespace: string, topic: string, partitions = 1) {
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
export async function assertFailsAt(
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

export const LONG_DOUBLE = 'field "amount": column type long, value type double';
