// A run's record as the fold of its sync's events: running from the first event, its totals as
// commits land, ended with the outcome and the error's kind; the same record from the events
// replayed at once.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SyncEvent } from "#src/pipeline/events.ts";
import type { TableReport } from "#src/pipeline/write-binding.ts";
import { foldRunEvents, RunFold } from "#src/runtime/run-fold.ts";
import { tableReport } from "../../fixtures/table-report.ts";

const runId = "0190c0de-0000-7000-8000-000000000000";
const base = { runId };
const processInfo = { trigger: "schedule" as const, pid: 42, host: "h" };

function committed(at: number, over: Partial<TableReport>): SyncEvent {
  return {
    ...base,
    at,
    type: "table-committed",
    report: tableReport(over),
  };
}

const planned: SyncEvent = {
  ...base,
  at: 1010,
  type: "planned",
  tables: [{ topic: "orders", table: "ns.orders", mode: "append", exists: true }],
  partitions: [],
  messagesToRead: 30n,
  skippedTopics: [],
  lostMessages: [],
  recreatedTopics: [],
};

test("a run that completes: running, then its totals over commit rounds, then complete", () => {
  const fold = new RunFold(processInfo);
  const started = fold.apply({ ...base, at: 1000, type: "started", job: "j" });
  assert.equal(started.outcome, "running");
  assert.equal(started.startedAt, 1000);
  assert.equal(started.endedAt, null);
  assert.equal(started.job, "j");
  fold.apply(planned);
  fold.apply(committed(1100, { messagesRead: 20, bytesRead: 2000, recordsAdded: 18, deadLetters: 2 }));
  const mid = fold.apply(committed(1200, { messagesRead: 10, bytesRead: 1000, recordsAdded: 10, snapshotId: "2" }));
  assert.equal(mid.bytes, 3000);
  assert.equal(mid.deadLetters, 2);
  assert.equal(mid.tables[0]!.recordsAdded, 28);
  assert.equal(mid.tables[0]!.snapshotId, "2");
  const done = fold.apply({
    ...base,
    at: 1300,
    type: "finished",
    status: "complete",
    readStatus: "complete",
    messagesRead: 30,
    durationMs: 300,
  });
  assert.deepEqual(
    { outcome: done.outcome, messages: done.messages, endedAt: done.endedAt, durationMs: done.durationMs },
    { outcome: "complete", messages: 30, endedAt: 1300, durationMs: 300 },
  );
  assert.equal(done.error, null);
  assert.equal(done.pid, 42);
  assert.equal(done.trigger, "schedule");
});

test("a run that fails: the error's kind, what landed before it kept", () => {
  const events: SyncEvent[] = [
    { ...base, at: 1000, type: "started", job: "j" },
    planned,
    committed(1100, { messagesRead: 20, bytesRead: 2000, recordsAdded: 20 }),
    {
      ...base,
      at: 1500,
      type: "failed",
      error: { kind: "commit-conflict", retryable: true, name: "CommitConflictError", message: "moved" },
      durationMs: 500,
    },
  ];
  const record = foldRunEvents(events, processInfo)!;
  assert.equal(record.outcome, "failed");
  assert.equal(record.error?.kind, "commit-conflict");
  assert.equal(record.bytes, 2000);
  assert.equal(record.endedAt, 1500);
  assert.equal(foldRunEvents([], processInfo), undefined);
});

test("a run stopped early ends partial", () => {
  const record = foldRunEvents(
    [
      { ...base, at: 1, type: "started", job: "j" },
      { ...base, at: 2, type: "finished", status: "partial", readStatus: "aborted", messagesRead: 3, durationMs: 1 },
    ],
    processInfo,
  )!;
  assert.equal(record.outcome, "partial");
});
