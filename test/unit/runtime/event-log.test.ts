// A sync's events as log lines: the level each kind of event gets and the fields it carries.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import type { SyncEvent } from "#src/pipeline/events.ts";
import { logEvent } from "#src/runtime/event-log.ts";
import { createLogger } from "#src/runtime/logger.ts";

test("progress is debug, plan and commits info, dead letters warn, a failure error with its kind", async () => {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const log = (await createLogger({ level: "debug", format: "json", destination })).child({ runId: "r" });
  const base = { runId: "r", at: 1 };
  const events: SyncEvent[] = [
    { ...base, type: "started", job: "j" },
    {
      ...base,
      type: "partition-progress",
      topic: "t",
      partition: 0,
      nextOffset: 5n,
      stopOffset: 9n,
      messages: 5,
      messagesRead: 5,
    },
    {
      ...base,
      type: "dead-letters",
      topic: "t",
      table: "ns.t__dlq",
      count: 2,
      reasons: { "not-json": 2 },
      snapshotId: "1",
    },
    {
      ...base,
      type: "failed",
      error: { kind: "commit-conflict", retryable: true, name: "CommitConflictError", message: "moved" },
      durationMs: 3,
    },
  ];
  for (const event of events) logEvent(log, event);
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg]),
    [
      [30, "run started"],
      [20, "read t/0 to 5 of 9"],
      [40, "2 dead letters into ns.t__dlq"],
      [50, "run failed (commit-conflict): moved"],
    ],
  );
  assert.ok(lines.every((l) => l.runId === "r"));
  assert.deepEqual(
    [lines[2]!.reasons, lines[3]!.kind, lines[3]!.retryable],
    [{ "not-json": 2 }, "commit-conflict", true],
  );
});

test("a run whose consumer group was left behind warns with the reason; one that committed it is info", async () => {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const l of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const log = await createLogger({ level: "info", format: "json", destination });
  const finished = {
    runId: "r",
    at: 1,
    type: "finished",
    status: "complete",
    readStatus: "complete",
    messagesRead: 7,
    durationMs: 12,
  } as const;
  logEvent(log, finished);
  logEvent(log, { ...finished, groupCommitError: "consumer group g: generation 3 ended" });
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg, l.groupCommitError]),
    [
      [30, "run complete: 7 messages in 12 ms", undefined],
      [
        40,
        "run complete: 7 messages in 12 ms; consumer group not updated: consumer group g: generation 3 ended (the tables' offsets win at the next run)",
        "consumer group g: generation 3 ended",
      ],
    ],
  );
});
