// A long sync commits every table at least every maxMessagesPerCommit messages read, each
// commit with the offsets reached so far, so that memory stays bounded and a sync that dies
// keeps what it committed.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { OFFSETS_SUMMARY_KEY } from "#src/pipeline/snapshot-offsets.ts";
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
  const { report, events } = await f.sync({ maxMessagesPerCommit: 100 });
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
