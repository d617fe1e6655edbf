// A sync as a stream of typed events: their order, what each carries, the report as their fold,
// and the classified error of a failed run. Whole syncs in process.

import assert from "node:assert/strict";
import { test } from "node:test";
import type { SyncEvent } from "#src/pipeline/events.ts";
import { foldSyncEvents } from "#src/pipeline/sync-report.ts";
import { committingEvery } from "../../helpers/job-file.ts";
import { eventTypes, syncFixture } from "./fixture.ts";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type Of<T extends SyncEvent["type"]> = Extract<SyncEvent, { type: T }>;
const only = <T extends SyncEvent["type"]>(events: SyncEvent[], type: T) =>
  events.filter((e): e is Of<T> => e.type === type);

test("a run: started, planned, progress per batch, each topic committed (its dead letters first), finished; one run id", async () => {
  const f = await syncFixture({ streams: { a: { mode: "append" }, b: { mode: "upsert", dedup_keys: ["id"] } } });
  try {
    f.source.batchSize = 10;
    f.source.createTopic("a", 2).createTopic("b");
    f.source.produce(
      "a",
      Array.from({ length: 30 }, (_, i) => ({ value: { i }, partition: i % 2 })),
    );
    f.source.produce("b", [{ value: { id: 1 } }, { value: "bad" }, { value: { id: 2 } }]);
    const { report, events } = await f.sync();

    assert.deepEqual(eventTypes(events), [
      "started",
      "planned",
      "partition-progress",
      "table-committed",
      "dead-letters",
      "table-committed",
      "finished",
    ]);
    const [runId] = new Set(events.map((e) => e.runId));
    assert.equal(new Set(events.map((e) => e.runId)).size, 1);
    assert.match(runId!, UUID_V7);
    assert.equal(report.runId, runId);
    for (let i = 1; i < events.length; i++) assert.ok(events[i]!.at >= events[i - 1]!.at, "in time order");

    const [planned] = only(events, "planned");
    assert.deepEqual(planned!.tables, [
      { topic: "a", table: "unit_topics.a", mode: "append", exists: false },
      { topic: "b", table: "unit_topics.b", mode: "upsert", exists: false },
    ]);
    assert.equal(planned!.messagesToRead, 33n);
    assert.deepEqual(
      planned!.partitions.map((p) => [p.topic, p.partition, p.startOffset, p.stopOffset, p.startFrom]),
      [
        ["a", 0, 0n, 15n, "log-start"],
        ["a", 1, 0n, 15n, "log-start"],
        ["b", 0, 0n, 3n, "log-start"],
      ],
    );

    // Progress: per partition, offsets up to the stop offset, counts that only grow.
    const progress = only(events, "partition-progress");
    const last = new Map<string, Of<"partition-progress">>();
    let total = 0;
    for (const p of progress) {
      const key = `${p.topic}:${p.partition}`;
      const before = last.get(key);
      assert.ok(!before || (p.nextOffset > before.nextOffset && p.messages > before.messages));
      assert.ok(p.nextOffset <= p.stopOffset);
      assert.ok(p.messagesRead > total);
      total = p.messagesRead;
      last.set(key, p);
    }
    assert.deepEqual(
      [...last.values()].map((p) => [p.topic, p.partition, p.nextOffset, p.messages]),
      [
        ["a", 0, 15n, 15],
        ["a", 1, 15n, 15],
        ["b", 0, 3n, 3],
      ],
    );
    assert.equal(total, 33);

    const commits = only(events, "table-committed").map((e) => e.report);
    assert.deepEqual(
      commits.map((c) => [c.topic, c.recordsAdded, c.deadLetters, typeof c.snapshotId]),
      [
        ["a", 30, 0, "string"],
        ["b", 2, 1, "string"],
      ],
    );
    const [finished] = only(events, "finished");
    assert.deepEqual([finished!.status, finished!.readStatus, finished!.messagesRead], ["complete", "complete", 33]);

    // The report is the fold of the events, whoever folds them.
    assert.deepEqual(foldSyncEvents(events), report);
    assert.equal(foldSyncEvents(events.slice(0, 3))!.status, "running");
  } finally {
    await f.close();
  }
});

test("the run id can be given (a scheduler's), and bounded commits fold into one report per table", async () => {
  const f = await syncFixture({ streams: { a: { mode: "append" } } });
  try {
    f.source.batchSize = 5;
    f.source.createTopic("a").produce(
      "a",
      Array.from({ length: 23 }, (_, i) => ({ value: { i } })),
    );
    const { report, events } = await f.sync({ runId: "run-42" }, committingEvery(f.job, 5));
    assert.ok(events.every((e) => e.runId === "run-42"));
    assert.equal(only(events, "table-committed").length, 5);
    assert.deepEqual(
      report.tables.map((t) => [t.recordsAdded, t.dataFilesAdded, t.created]),
      [[23, 5, true]],
    );
    assert.deepEqual(foldSyncEvents(events), report);
  } finally {
    await f.close();
  }
});

test("a failure before the plan: started, then failed with the error's kind; nothing is committed", async () => {
  const f = await syncFixture({ kafka: { topic_pattern: "orders.*" } });
  try {
    f.source.createTopic("payments");
    const { error, events } = await f.failingSync();
    assert.equal((error as Error).name, "TopicSelectionError");
    assert.deepEqual(eventTypes(events), ["started", "failed"]);
    const [failed] = only(events, "failed");
    assert.deepEqual([failed!.error.kind, failed!.error.retryable], ["config", false]);
    assert.match(
      failed!.error.message,
      /topic_pattern orders\.\* selects none of the 1 topics on the cluster: payments/,
    );
    assert.equal(foldSyncEvents(events)!.status, "failed");
  } finally {
    await f.close();
  }
});

test("messages expired unread: the plan names them, the run fails as data-loss, and goes on when the loss is accepted", async () => {
  const f = await syncFixture({ streams: { a: { mode: "append" } } });
  try {
    f.source.createTopic("a").produce(
      "a",
      Array.from({ length: 10 }, (_, i) => ({ value: { i } })),
    );
    await f.sync();
    f.source.produce(
      "a",
      Array.from({ length: 10 }, (_, i) => ({ value: { i: 10 + i } })),
    );
    f.source.deleteRecords("a", 0, 14n);
    const { error, events } = await f.failingSync();
    assert.equal((error as Error).name, "MessagesLostError");
    assert.deepEqual(eventTypes(events), ["started", "planned", "failed"]);
    const [planned] = only(events, "planned");
    assert.deepEqual(
      planned!.lostMessages.map((l) => [l.partition, l.resumeOffset, l.logStartOffset, l.lost]),
      [[0, 10n, 14n, 4n]],
    );
    assert.equal(only(events, "failed")[0]!.error.kind, "data-loss");

    const accepted = await f.sync({ acceptDataLoss: true });
    assert.equal(accepted.report.status, "complete");
    assert.equal(accepted.report.lostMessages.length, 1);
    assert.equal((await f.rows("a")).length, 16, "10, then 14-19");
  } finally {
    await f.close();
  }
});

test("a read that fails mid-way or is aborted: finished partial, what was read landed, the next sync resumes", async () => {
  const f = await syncFixture({ streams: { a: { mode: "append" } } });
  try {
    f.source.batchSize = 4;
    f.source.createTopic("a", 2).produce(
      "a",
      Array.from({ length: 40 }, (_, i) => ({ value: { i }, partition: i % 2 })),
    );
    f.source.failReads.set("a:1", 8n);
    const broken = await f.sync();
    assert.deepEqual([broken.report.status, broken.report.readStatus], ["partial", "failed"]);
    assert.match(broken.report.readError ?? "", /reading a partition 1 at offset 8: the broker went away/);
    assert.equal(broken.events.at(-1)!.type, "finished");
    assert.equal((await f.rows("a")).length, 28, "partition 0 whole, partition 1 up to offset 8");

    f.source.failReads.clear();
    const abort = new AbortController();
    f.source.produce(
      "a",
      Array.from({ length: 20 }, (_, i) => ({ value: { i: 40 + i }, partition: 0 })),
    );
    const aborted = await f.sync({
      signal: abort.signal,
      onEvent: (e) => {
        if (e.type === "partition-progress") abort.abort();
      },
    });
    assert.deepEqual([aborted.report.status, aborted.report.readStatus], ["partial", "aborted"]);
    assert.equal(aborted.report.messagesRead, 4);

    const rest = await f.sync();
    assert.equal(rest.report.status, "complete");
    assert.equal((await f.rows("a")).length, 60, "every message once");
    assert.deepEqual(new Set((await f.rows("a")).map((r) => Number(r.i))).size, 60);
  } finally {
    await f.close();
  }
});
