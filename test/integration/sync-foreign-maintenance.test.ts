// Another engine maintains a floe table: Spark's rewrite_data_files, rewrite_manifests and
// expire_snapshots(retain_last => 1) leave not one snapshot whose summary carries floe's Kafka
// offsets. The position survives as table properties written in each floe commit, so the next
// sync resumes exactly where the last one stopped, also once the consumer group is deleted
// (before, it fell back to the group's offsets, then to the log start: an append table landed
// every message again). A rollback past floe's commits leaves a position that describes rows the
// table no longer holds: the sync refuses, and `floe sync --resume-from` goes on where told.
// Tables are read back through DuckDB, PyIceberg and Spark against the real broker and REST catalog.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import type { Job } from "#src/job/job.ts";
import { OFFSETS_SUMMARY_KEY } from "#src/pipeline/snapshot-offsets.ts";
import { createTopic, deleteTopic, plainBroker, withAdmin } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { floe } from "../helpers/floe-cli.ts";
import { buildJob, type JobFileSpec, type StreamSection, writeJobFile } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import {
  AppendModel,
  type ModelMessage,
  modelColumns,
  OffsetCounter,
  produceExactly,
  UpsertModel,
} from "../helpers/sync-model.ts";
import { loadJobTable } from "../helpers/tables.ts";

const run = `${process.pid}_${Date.now()}`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-maintained-"));
const topics = {
  events: `maintained${run}_events`,
  accounts: `maintained${run}_accounts`,
  rolled: `maintained${run}_rolled`,
};
type Kind = keyof typeof topics;

function jobSpec(kind: Kind, stream: StreamSection): JobFileSpec {
  return {
    name: `maintained_${kind}_${run}`,
    kafka: { topic_pattern: `^${topics[kind]}$` },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    streams: { [topics[kind]]: { ...stream, table: kind } },
  };
}

function jobFor(kind: Kind, stream: StreamSection): Job {
  return buildJob(jobSpec(kind, stream), join(stateDir, `${kind}.yaml`));
}

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await Promise.all(Object.values(topics).map((t) => createTopic(t, 2)));
});
after(async () => {
  await readers?.close();
  for (const topic of Object.values(topics)) await deleteTopic(topic);
});

/** What a Spark user's cron does: compact, rewrite the manifests, keep only the last snapshot. */
async function sparkMaintain(job: Job, table: string): Promise<void> {
  const name = `${job.namespace}.${table}`;
  const [rewrite] = await readers.spark(
    `CALL rest.system.rewrite_data_files(table => '${name}', options => map('min-input-files','2'))`,
  );
  assert.ok(Number(rewrite?.rewritten_data_files_count) >= 2, "Spark compacted the table");
  await readers.spark(`CALL rest.system.rewrite_manifests(table => '${name}')`);
  // A day ahead whatever Spark's session time zone: every snapshot but the current one goes.
  const until = new Date(Date.now() + 86_400_000).toISOString().replace("T", " ").replace("Z", "");
  await readers.spark(
    `CALL rest.system.expire_snapshots(table => '${name}', older_than => TIMESTAMP '${until}', retain_last => 1)`,
  );
  const loaded = await loadJobTable(job, table);
  assert.equal(loaded.metadata.snapshots.length, 1, "one snapshot left");
  assert.equal(
    currentSnapshot(loaded.metadata)?.summary[OFFSETS_SUMMARY_KEY],
    undefined,
    "none records floe's offsets",
  );
  assert.ok(loaded.metadata.properties["floe.kafka.offsets"], "the table property does");
}

async function deleteGroup(group: string): Promise<void> {
  await withAdmin(plainBroker, (admin) => admin.deleteGroups({ groups: [group] }));
}

function batch(counter: OffsetCounter, from: number, n: number, key?: (i: number) => string): ModelMessage[] {
  return counter.assign(
    Array.from({ length: n }, (_, j) => {
      const i = from + j;
      const k = key?.(i);
      return { partition: k === undefined ? i % 2 : Number(k.slice(1)) % 2, key: k ?? null, value: { i } };
    }),
  );
}

const appendOrder = ["_kafka_partition", "_kafka_offset"];

test("append: after Spark compacts, rewrites manifests and expires every floe snapshot, the next syncs land only new messages, group deleted or not", async () => {
  const topic = topics.events;
  const job = jobFor("events", { mode: "append" });
  const ref = restTable(job.namespace, "events");
  const model = new AppendModel();
  const counter = new OffsetCounter();
  const step = async (from: number, n: number) => {
    const messages = batch(counter, from, n);
    await produceExactly(topic, messages, counter);
    const report = await syncJob(job, { stateDir });
    assert.equal(report.status, "complete");
    assert.equal(report.messagesRead, n, `only the ${n} new messages are read`);
    model.apply(messages);
    await readers.assertRows(ref, model.rows(["i"]), { columns: modelColumns(["i"]), orderBy: appendOrder });
  };
  await step(0, 100);
  await step(100, 50);
  await sparkMaintain(job, "events");
  await readers.assertRows(ref, model.rows(["i"]), { columns: modelColumns(["i"]), orderBy: appendOrder });
  await step(150, 30);
  await sparkMaintain(job, "events");
  await deleteGroup(job.consumerGroup);
  await step(180, 20);
});

test("upsert: the same maintenance, then new versions of some keys: one row per key, none landed again", async () => {
  const topic = topics.accounts;
  const job = jobFor("accounts", { mode: "upsert", dedup_keys: ["_kafka_key"] });
  const ref = restTable(job.namespace, "accounts");
  const model = new UpsertModel((m) => m.key, true);
  const counter = new OffsetCounter();
  const keyOf = (i: number) => `k${i % 40}`;
  const order = ["_kafka_partition", "_kafka_offset"];
  const step = async (from: number, n: number) => {
    const messages = batch(counter, from, n, keyOf);
    await produceExactly(topic, messages, counter);
    const report = await syncJob(job, { stateDir });
    assert.equal(report.status, "complete");
    assert.equal(report.messagesRead, n, `only the ${n} new messages are read`);
    const figures = model.apply(messages);
    assert.equal(report.tables[0]?.positionsDeleted, figures.positionsDeleted);
    await readers.assertRows(ref, model.rows(["i"]), { columns: modelColumns(["i"]), orderBy: order });
  };
  await step(0, 60);
  await step(60, 30);
  await sparkMaintain(job, "accounts");
  await step(90, 25);
  await sparkMaintain(job, "accounts");
  await deleteGroup(job.consumerGroup);
  await step(115, 25);
});

test("rollback past floe's commits: refused with the way out; --resume-from earliest, then latest, land as asked", async () => {
  const topic = topics.rolled;
  const jobFile = writeJobFile(join(stateDir, "rolled.yaml"), jobSpec("rolled", { mode: "append" }));
  const job = jobFor("rolled", { mode: "append" });
  const ref = restTable(job.namespace, "rolled");
  const counter = new OffsetCounter();
  const all: ModelMessage[] = [];
  const produce = async (from: number, n: number) => {
    const messages = batch(counter, from, n);
    await produceExactly(topic, messages, counter);
    all.push(...messages);
    return messages;
  };
  await produce(0, 40);
  await syncJob(job, { stateDir });
  await produce(40, 40);
  await syncJob(job, { stateDir });
  await sparkMaintain(job, "rolled");
  // The rows as of the rewrite: the 80 messages so far.
  const rewriteId = currentSnapshot((await loadJobTable(job, "rolled")).metadata)!.snapshotId;
  await produce(80, 20);
  await syncJob(job, { stateDir });
  await readers.spark(`CALL rest.system.rollback_to_snapshot('${job.namespace}.rolled', ${rewriteId})`);

  // In process: the error's class, kind and text.
  await assert.rejects(syncJob(job, { stateDir }), (error: unknown) => {
    assert.ok(
      error instanceof Error && error.name === "PositionUnknownError",
      `expected PositionUnknownError, got ${error}`,
    );
    assert.match(error.message, new RegExp(`${job.namespace}\\.rolled: its position .* no longer an ancestor`));
    assert.match(error.message, /--resume-from group .*--resume-from earliest .*--resume-from latest/);
    return true;
  });
  // As a user runs it: the same refusal, exit code 1, nothing landed.
  const cliState = join(stateDir, "cli");
  const refused = await floe(["sync", "--config", jobFile, "--state-dir", cliState]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /no longer an ancestor .*--resume-from/);
  const first80 = new AppendModel();
  first80.apply(all.slice(0, 80));
  await readers.assertRows(ref, first80.rows(["i"]), { columns: modelColumns(["i"]), orderBy: appendOrder });

  // From the log start: the 80 rows the table holds stay, and every message lands again beside them.
  const earliest = await floe([
    "sync",
    "--config",
    jobFile,
    "--state-dir",
    cliState,
    "--resume-from",
    "earliest",
    "--json",
  ]);
  assert.equal(earliest.code, 0, earliest.stderr);
  assert.equal(JSON.parse(earliest.stdout).messagesRead, 100);
  const model = new AppendModel();
  model.apply(all.slice(0, 80));
  model.apply(all);
  const rows = () =>
    model
      .rows(["i"])
      .sort(
        (a, b) =>
          Number(a._kafka_partition) - Number(b._kafka_partition) ||
          Number(a._kafka_offset) - Number(b._kafka_offset) ||
          Number(a.i) - Number(b.i),
      );
  await readers.assertRows(ref, rows(), { columns: modelColumns(["i"]), orderBy: [...appendOrder, "i"] });

  // Recorded: the next sync needs no flag and reads only what is new.
  model.apply(await produce(100, 10));
  const next = await syncJob(job, { stateDir });
  assert.equal(next.messagesRead, 10);
  await readers.assertRows(ref, rows(), { columns: modelColumns(["i"]), orderBy: [...appendOrder, "i"] });

  // Rolled back again, resumed from the end of the log: nothing already in the log is read, later messages are.
  await readers.spark(`CALL rest.system.rollback_to_snapshot('${job.namespace}.rolled', ${rewriteId})`);
  await produce(110, 6);
  const latest = await syncJob(job, { stateDir, resumeFrom: "latest" });
  assert.equal(latest.messagesRead, 0);
  const afterLatest = new AppendModel();
  afterLatest.apply(all.slice(0, 80));
  afterLatest.apply(await produce(116, 4));
  assert.equal((await syncJob(job, { stateDir })).messagesRead, 4);
  await readers.assertRows(ref, afterLatest.rows(["i"]), { columns: modelColumns(["i"]), orderBy: appendOrder });
});
