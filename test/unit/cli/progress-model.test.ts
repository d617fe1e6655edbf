// The sync's progress per topic as the terminal shows it: the fold of the events, the rate over
// a window and the time left, the bar and the lines. The clock is the events' own.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  bar,
  formatDuration,
  formatRate,
  messageRate,
  progressLines,
  RATE_WINDOW_MS,
  SyncProgress,
  secondsLeft,
} from "#src/cli/progress-model.ts";
import type { SyncEvent } from "#src/pipeline/events.ts";
import { tableReport } from "../../fixtures/table-report.ts";

const T0 = 1_800_000_000_000;
const runId = "run";

function planned(partitions: { topic: string; partition: number; start: bigint; stop: bigint }[]): SyncEvent {
  const topics = [...new Set(partitions.map((p) => p.topic))];
  return {
    type: "planned",
    runId,
    at: T0,
    tables: topics.map((topic) => ({ topic, table: `ns.${topic}`, mode: "append", exists: false })),
    partitions: partitions.map((p) => ({
      topic: p.topic,
      partition: p.partition,
      logStartOffset: 0n,
      highWatermark: p.stop,
      lastStableOffset: p.stop,
      groupOffset: null,
      tableOffset: null,
      startFrom: "log-start",
      startOffset: p.start,
      stopOffset: p.stop,
    })),
    messagesToRead: partitions.reduce((s, p) => s + p.stop - p.start, 0n),
    skippedTopics: [],
    lostMessages: [],
    recreatedTopics: [],
  };
}

function progress(at: number, topic: string, partition: number, nextOffset: bigint, messages: number): SyncEvent {
  return {
    type: "partition-progress",
    runId,
    at,
    topic,
    partition,
    nextOffset,
    stopOffset: 0n,
    messages,
    messagesRead: 0,
  };
}

function committed(at: number, topic: string): SyncEvent {
  return { type: "table-committed", runId, at, report: tableReport({ topic, created: true, durationMs: 1 }) };
}

test("per topic: offsets read of offsets to read over its partitions, messages, rate and time left", () => {
  const p = new SyncProgress();
  assert.equal(p.planned, false);
  p.apply(
    planned([
      { topic: "orders", partition: 0, start: 100n, stop: 600n },
      { topic: "orders", partition: 1, start: 0n, stop: 500n },
      { topic: "users", partition: 0, start: 7n, stop: 7n },
    ]),
  );
  assert.equal(p.planned, true);
  let [orders, users] = p.topics(T0);
  assert.deepEqual(
    [orders!.toRead, orders!.offsetsRead, orders!.messages, orders!.state, orders!.rate, orders!.secondsLeft],
    [1000, 0, 0, "reading", undefined, undefined],
  );
  assert.deepEqual([users!.toRead, users!.secondsLeft], [0, 0]);

  // 200 messages in the first second, then 300 more by 2 s: 250/s, 500 offsets left = 2 s.
  p.apply(progress(T0 + 1000, "orders", 0, 300n, 200));
  p.apply(progress(T0 + 2000, "orders", 1, 300n, 300));
  [orders] = p.topics(T0 + 2000);
  assert.deepEqual([orders!.offsetsRead, orders!.messages, orders!.rate, orders!.secondsLeft], [500, 500, 250, 2]);
  // Nothing new for 3 more seconds: the rate falls, measured up to now.
  [orders] = p.topics(T0 + 5000);
  assert.equal(orders!.rate, 100);
  assert.equal(orders!.secondsLeft, 5);

  // The rest read: committing until its table commit, then committed, then done.
  p.apply(progress(T0 + 6000, "orders", 0, 600n, 500));
  p.apply(progress(T0 + 6000, "orders", 1, 500n, 500));
  [orders] = p.topics(T0 + 6000);
  assert.deepEqual(
    [orders!.offsetsRead, orders!.messages, orders!.state, orders!.secondsLeft],
    [1000, 1000, "committing", 0],
  );
  p.apply(committed(T0 + 6100, "orders"));
  assert.equal(p.topics(T0 + 6100)[0]!.state, "committed");
  p.apply({
    type: "finished",
    runId,
    at: T0 + 6200,
    status: "complete",
    readStatus: "complete",
    messagesRead: 1000,
    durationMs: 6200,
  });
  assert.deepEqual(
    p.topics(T0 + 6200).map((t) => t.state),
    ["done", "done"],
  );
});

test("a commit in the middle of the read (bounded commits) does not mark the topic committed", () => {
  const p = new SyncProgress();
  p.apply(planned([{ topic: "a", partition: 0, start: 0n, stop: 100n }]));
  p.apply(progress(T0 + 10, "a", 0, 50n, 50));
  p.apply(committed(T0 + 20, "a"));
  assert.equal(p.topics(T0 + 20)[0]!.state, "reading");
});

test("a run that stopped early (Ctrl-C): the topics not read to their end show it", () => {
  const p = new SyncProgress();
  p.apply(
    planned([
      { topic: "a", partition: 0, start: 0n, stop: 10n },
      { topic: "b", partition: 0, start: 0n, stop: 10n },
    ]),
  );
  p.apply(progress(T0 + 10, "a", 0, 10n, 10));
  p.apply(progress(T0 + 10, "b", 0, 4n, 4));
  p.apply({
    type: "finished",
    runId,
    at: T0 + 20,
    status: "partial",
    readStatus: "aborted",
    messagesRead: 14,
    durationMs: 20,
  });
  const topics = p.topics(T0 + 20);
  assert.deepEqual(
    topics.map((t) => t.state),
    ["done", "stopped"],
  );
  assert.match(progressLines(topics, 200)[1]!, /40% {2}4 \/ 10 {2}stopped early; what was read landed$/);
});

test("a failed run marks the topics not committed yet as failed", () => {
  const p = new SyncProgress();
  p.apply(
    planned([
      { topic: "a", partition: 0, start: 0n, stop: 10n },
      { topic: "b", partition: 0, start: 0n, stop: 10n },
    ]),
  );
  p.apply(progress(T0 + 10, "a", 0, 10n, 10));
  p.apply(committed(T0 + 20, "a"));
  p.apply({
    type: "failed",
    runId,
    at: T0 + 30,
    error: { kind: "kafka", message: "x", retryable: true } as never,
    durationMs: 30,
  });
  assert.deepEqual(
    p.topics(T0 + 30).map((t) => t.state),
    ["committed", "failed"],
  );
});

test("the rate is measured over the last window, from the last sample before it", () => {
  const samples = [
    { at: 0, messages: 0 },
    { at: 1000, messages: 1_000_000 },
    { at: 20_000, messages: 1_000_000 + 19_000 },
  ];
  // Over the whole span: dominated by the burst.
  assert.equal(Math.round(messageRate(samples, 20_000)!), 50_950);
  const p = new SyncProgress();
  p.apply(planned([{ topic: "a", partition: 0, start: 0n, stop: 10_000_000n }]));
  for (const s of samples.slice(1)) p.apply(progress(T0 + s.at, "a", 0, BigInt(s.messages), s.messages));
  p.apply(progress(T0 + 20_000 + RATE_WINDOW_MS, "a", 0, 1_029_000n, 1_029_000));
  // The window keeps the sample at 20 s as its start: 10,000 messages in 10 s.
  assert.equal(p.topics(T0 + 20_000 + RATE_WINDOW_MS)[0]!.rate, 1000);
  assert.equal(messageRate([{ at: 5, messages: 1 }], 10), undefined);
  assert.equal(
    messageRate(
      [
        { at: 5, messages: 1 },
        { at: 5, messages: 2 },
      ],
      5,
    ),
    undefined,
  );
});

test("time left, durations, rates and bars as text", () => {
  assert.equal(secondsLeft(0, undefined), 0);
  assert.equal(secondsLeft(10, undefined), undefined);
  assert.equal(secondsLeft(10, 0), undefined);
  assert.equal(secondsLeft(10, 3), 4);
  assert.deepEqual([0, 65, 720, 3723, undefined].map(formatDuration), ["0:00", "1:05", "12:00", "1:02:03", "--:--"]);
  assert.deepEqual([undefined, 850.4, 1234, 12_400, 2_500_000].map(formatRate), [
    "-/s",
    "850/s",
    "1.2k/s",
    "12k/s",
    "2.5M/s",
  ]);
  assert.equal(bar(0, 10, 4), "░░░░");
  assert.equal(bar(5, 10, 4), "██░░");
  assert.equal(bar(10, 10, 4), "████");
  assert.equal(bar(11, 10, 4), "████");
  assert.equal(bar(0, 0, 4), "████");
});

test("lines: names padded to one width, the bar, percent, messages of offsets, rate and time left; cut to the terminal", () => {
  const lines = progressLines(
    [
      { topic: "orders", toRead: 1000, offsetsRead: 500, messages: 500, state: "reading", rate: 250, secondsLeft: 2 },
      {
        topic: "customers",
        toRead: 48,
        offsetsRead: 48,
        messages: 48,
        state: "committed",
        rate: undefined,
        secondsLeft: 0,
      },
      { topic: "empty", toRead: 0, offsetsRead: 0, messages: 0, state: "done", rate: undefined, secondsLeft: 0 },
    ],
    200,
  );
  assert.deepEqual(lines, [
    `orders     ${"█".repeat(12)}${"░".repeat(12)}  50%  500 / 1,000  250/s  0:02 left`,
    `customers  ${"█".repeat(24)} 100%  48 / 48  committed`,
    `empty      ${"█".repeat(24)} 100%  0 / 0  up to date`,
  ]);
  const narrow = progressLines(
    [{ topic: "orders", toRead: 10, offsetsRead: 1, messages: 1, state: "reading", rate: 1, secondsLeft: 9 }],
    30,
  );
  assert.equal([...narrow[0]!].length, 30);
});
