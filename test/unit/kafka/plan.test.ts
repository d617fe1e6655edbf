// Where a partition's read starts and stops, from its offsets: table first, then group, then log start.
import assert from "node:assert/strict";
import { test } from "node:test";
import { MessagesLostError, OffsetsAheadError, planPartition } from "#src/kafka/plan.ts";

const log = { logStartOffset: 10n, highWatermark: 100n, lastStableOffset: 100n };

test("a partition never read starts at the log start offset", () => {
  const { plan, lost, ahead } = planPartition("t", 0, { ...log, groupOffset: null, tableOffset: null });
  assert.equal(plan.startFrom, "log-start");
  assert.equal(plan.startOffset, 10n);
  assert.equal(plan.stopOffset, 100n);
  assert.equal(lost, undefined);
  assert.equal(ahead, undefined);
});

test("the group's offset is used when the table has none", () => {
  const { plan } = planPartition("t", 0, { ...log, groupOffset: 40n, tableOffset: null });
  assert.equal(plan.startFrom, "group");
  assert.equal(plan.startOffset, 40n);
});

test("the table's offset wins over the group's, behind or ahead of it", () => {
  for (const tableOffset of [30n, 60n]) {
    const { plan } = planPartition("t", 0, { ...log, groupOffset: 40n, tableOffset });
    assert.equal(plan.startFrom, "table");
    assert.equal(plan.startOffset, tableOffset);
    assert.equal(plan.stopOffset, 100n);
  }
});

test("a fully read partition has nothing to read", () => {
  const { plan } = planPartition("t", 0, { ...log, groupOffset: null, tableOffset: 100n });
  assert.equal(plan.startOffset, 100n);
  assert.equal(plan.stopOffset, 100n);
});

test("an open transaction stops the read at the last stable offset", () => {
  const { plan } = planPartition("t", 0, { ...log, lastStableOffset: 80n, groupOffset: null, tableOffset: 50n });
  assert.equal(plan.stopOffset, 80n);
  // Resuming between the last stable offset and the high watermark reads nothing, and is no anomaly.
  const between = planPartition("t", 0, { ...log, lastStableOffset: 80n, groupOffset: null, tableOffset: 90n });
  assert.equal(between.plan.startOffset, 90n);
  assert.equal(between.plan.stopOffset, 90n);
  assert.equal(between.ahead, undefined);
});

test("a resume offset below the log start reports the lost offsets and reads from the log start", () => {
  const { plan, lost } = planPartition("t", 2, { ...log, groupOffset: 3n, tableOffset: null });
  assert.equal(plan.startOffset, 10n);
  assert.equal(plan.stopOffset, 100n);
  assert.deepEqual(lost, {
    topic: "t",
    partition: 2,
    resumeOffset: 3n,
    startFrom: "group",
    logStartOffset: 10n,
    lost: 7n,
  });
  const error = new MessagesLostError([lost!]);
  assert.match(error.message, /^7 message\(s\) expired before they were read: t partition 2: 7/);
});

test("a resume offset past the high watermark reads nothing and is reported", () => {
  const { plan, ahead } = planPartition("t", 1, { ...log, groupOffset: null, tableOffset: 150n });
  assert.equal(plan.startOffset, 150n);
  assert.equal(plan.stopOffset, 150n);
  assert.deepEqual(ahead, { topic: "t", partition: 1, resumeOffset: 150n, startFrom: "table", highWatermark: 100n });
  assert.match(
    new OffsetsAheadError([ahead!]).message,
    /t partition 1: resume at 150 \(table offset\) but the log ends at 100/,
  );
});

test("a group member's plan holds only its assigned partitions, their losses and their offsets to read", async () => {
  const { assignedOnly } = await import("#src/kafka/plan.ts");
  const part = (partition: number, startOffset: bigint, stopOffset: bigint) => ({
    topic: "t",
    partition,
    ...log,
    groupOffset: null,
    tableOffset: null,
    startFrom: "log-start" as const,
    startOffset,
    stopOffset,
  });
  const plan = {
    consumerGroup: "g",
    partitions: [part(0, 10n, 100n), part(1, 10n, 50n), part(2, 20n, 100n)],
    lost: [{ topic: "t", partition: 1, resumeOffset: 5n, startFrom: "group" as const, logStartOffset: 10n, lost: 5n }],
    ahead: [],
    offsetsToRead: 210n,
  };
  const mine = assignedOnly(plan, new Map([["t", [1, 2]]]));
  assert.deepEqual(
    mine.partitions.map((p) => p.partition),
    [1, 2],
  );
  assert.equal(mine.offsetsToRead, 120n);
  assert.equal(mine.lost.length, 1);
  assert.equal(assignedOnly(plan, new Map([["t", [0]]])).lost.length, 0, "another member's loss is not this one's");
  assert.equal(assignedOnly(plan, new Map()).partitions.length, 0);
});
