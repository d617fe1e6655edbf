// A long sync commits every table as soon as one of the job's commit: limits (messages or bytes
// read) is reached, each commit with the offsets reached so far, so that memory stays bounded and a sync that dies
// keeps what it committed.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { OFFSETS_SUMMARY_KEY } from "#src/pipeline/snapshot-offsets.ts";
import { committingEvery } from "../../helpers/job-file.ts";
import { eventTypes, type SyncFixture, sortBy, syncFixture } from "./fixture.ts";
import { tableSnapshots } from "./table-rows.ts";

let f: SyncFixture;

before(async () => {
  f = await syncFixture({ streams: { events: { mode: "append" }, keys: { mode: "upsert", dedup_keys: ["id"] } } });
  f.source.createTopic("events", 2).createTopic("keys");
  f.source.batchSize = 50;
});

after(() => f.close());

test("commits land every 100 messages, each table's snapshot carrying the offsets it had absorbed", async () => {
  f.source.produce(
    "events",
    Array.from({ length: 300 }, (_, i) => ({ value: { i }, partition: i % 2 })),
  );
  f.source.produce(
    "keys",
    Array.from({ length: 120 }, (_, i) => ({ value: { id: i % 30, i } })),
  );
  const { report, events } = await f.sync({}, committingEvery(f.job, 100));
  assert.equal(report.messagesRead, 420);
  // 420 messages in batches of 50: a commit round after every second batch, and one at the end.
  const rounds = events.filter((e) => e.type === "table-committed" && e.report.topic === "events");
  assert.ok(rounds.length >= 3, `${rounds.length} commit rounds of events`);
  assert.deepEqual(eventTypes(events).slice(0, 3), ["started", "planned", "partition-progress"]);
  assert.ok(
    eventTypes(events).filter((t) => t === "partition-progress").length >= 3,
    "reading goes on between commits",
  );

  const snapshots = await tableSnapshots(f.catalog, "unit_topics", "events");
  assert.equal(snapshots.length, rounds.length);
  let previous = -1n;
  for (const s of snapshots) {
    const offsets = JSON.parse(s.summary[OFFSETS_SUMMARY_KEY]!).events as Record<string, string>;
    const total = BigInt(offsets["0"] ?? 0) + BigInt(offsets["1"] ?? 0);
    assert.ok(total > previous, "each commit absorbs more");
    previous = total;
  }
  assert.equal(previous, 300n);
  const rows = sortBy(await f.rows("events"), "i");
  assert.deepEqual(
    rows.map((r) => Number(r.i)),
    Array.from({ length: 300 }, (_, i) => i),
  );
  // The upsert table: the last message per key, whichever commit it came in.
  assert.deepEqual(
    sortBy(await f.rows("keys"), "id").map((r) => [Number(r.id), Number(r.i)]),
    Array.from({ length: 30 }, (_, id) => [id, 90 + id]),
  );
  const keys = report.tables.find((t) => t.topic === "keys")!;
  assert.equal(keys.recordsAdded - keys.positionsDeleted, 30, "every row added beyond one per key was retired");
});

test("the job's commit.max_bytes commits a round once the keys and values read reach it", async () => {
  // Values of exactly 50 bytes, no key, fetched 10 at a time: 500 bytes a fetch, so a limit of
  // 1,000 bytes commits after every second fetch, 20 messages a round, whatever max_messages is.
  const value = { p: "x".repeat(42) };
  assert.equal(JSON.stringify(value).length, 50);
  const sized = await syncFixture({ streams: { sized: { mode: "append" } } });
  try {
    sized.source.createTopic("sized");
    sized.source.batchSize = 10;
    sized.source.produce(
      "sized",
      Array.from({ length: 200 }, () => ({ value })),
    );
    const job = { ...sized.job, commit: { ...sized.job.commit, maxMessages: 1_000_000, maxBytes: 1000 } };
    const { report } = await sized.sync({}, job);
    assert.equal(report.messagesRead, 200);
    const snapshots = await tableSnapshots(sized.catalog, "unit_topics", "sized");
    const absorbed = snapshots.map((s) => Number(JSON.parse(s.summary[OFFSETS_SUMMARY_KEY]!).sized["0"]));
    assert.deepEqual(
      absorbed,
      Array.from({ length: 10 }, (_, i) => 20 * (i + 1)),
    );

    // A lower max_messages than the bytes allow commits first.
    sized.source.produce(
      "sized",
      Array.from({ length: 30 }, () => ({ value })),
    );
    await sized.sync({}, committingEvery(job, 10));
    const more = await tableSnapshots(sized.catalog, "unit_topics", "sized");
    assert.deepEqual(
      more.slice(10).map((s) => Number(JSON.parse(s.summary[OFFSETS_SUMMARY_KEY]!).sized["0"])),
      [210, 220, 230],
    );
  } finally {
    await sized.close();
  }
});
