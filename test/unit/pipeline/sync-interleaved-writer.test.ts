// Another writer commits some partitions of a topic between two commit rounds of a sync. The
// sync's next claim must start from the offsets it itself committed, not from the table's: the
// table then holds the other writer's offsets of a partition the sync has read from where it
// started, and claiming from there would land those messages a second time.

import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ConcurrentSyncError } from "#src/pipeline/offset-claim.ts";
import { OFFSETS_SUMMARY_KEY } from "#src/pipeline/snapshot-offsets.ts";
import { runSync } from "#src/pipeline/sync.ts";
import { committingEvery } from "../../helpers/job-file.ts";
import { type SyncFixture, sortBy, syncFixture } from "./fixture.ts";
import { MemorySource } from "./memory-source.ts";
import { tableSnapshots } from "./table-rows.ts";

let f: SyncFixture;

before(async () => {
  f = await syncFixture({ streams: { events: { mode: "append" } } });
});

after(() => f.close());

const message = (partition: number, i: number) => ({ value: { p: partition, i }, partition });

test("a sync whose partition another writer committed meanwhile stops at its claim and lands nothing twice", async () => {
  f.source.createTopic("events", 2).produce(
    "events",
    [0, 1].flatMap((p) => Array.from({ length: 200 }, (_, i) => message(p, i))),
  );
  f.source.batchSize = 50;

  // The other writer: the same job over a cluster that, to it, holds the first 100 messages of
  // partition 1 and nothing past what the table holds of partition 0.
  const other = new MemorySource().createTopic("events", 2, f.source.topicId("events"));
  other.produce("events", [
    ...Array.from({ length: 100 }, (_, i) => message(0, i)),
    ...Array.from({ length: 100 }, (_, i) => message(1, i)),
  ]);
  let otherCommitted = false;
  // The sync reads partition 0 then partition 1, 50 messages a batch, and commits every 100:
  // once it has committed offsets 0-99 of partition 0, the other writer lands partition 1. The
  // sync reads on while a round commits, so the hook waits for that commit to be in the table.
  f.source.beforeBatch = async (_topic, partition, offset) => {
    if (otherCommitted || partition !== 0 || offset !== 100n) return;
    otherCommitted = true;
    await firstRoundCommitted();
    const report = await runSync(f.job, { source: other, catalog: f.catalog }, { stateDir: join(f.dir, "other") });
    assert.equal(report.messagesRead, 100, "the other writer reads partition 1 only");
  };

  const { error } = await f.failingSync({}, committingEvery(f.job, 100));
  assert.ok(otherCommitted);
  assert.ok(error instanceof ConcurrentSyncError, `expected a concurrent-sync error, got ${error}`);
  assert.match(error.message, /events/);

  // Partition 0 from the sync (both of its rounds before partition 1), partition 1's first 100
  // from the other writer; every message once.
  const rows = sortBy(await f.rows("events"), "i").sort((a, b) => Number(a.p) - Number(b.p));
  assert.deepEqual(
    rows.map((r) => [Number(r.p), Number(r.i)]),
    [...Array.from({ length: 200 }, (_, i) => [0, i]), ...Array.from({ length: 100 }, (_, i) => [1, i])],
  );
  const last = (await tableSnapshots(f.catalog, "unit_topics", "events")).at(-1)!;
  assert.deepEqual(JSON.parse(last.summary[OFFSETS_SUMMARY_KEY]!).events, { "0": "200", "1": "100" });

  // Run again: it resumes from the table's offsets and lands the rest of partition 1 once.
  f.source.beforeBatch = undefined;
  await f.sync();
  const again = sortBy(await f.rows("events"), "i").sort((a, b) => Number(a.p) - Number(b.p));
  assert.deepEqual(
    again.map((r) => [Number(r.p), Number(r.i)]),
    [0, 1].flatMap((p) => Array.from({ length: 200 }, (_, i) => [p, i])),
  );
});

/** Resolves once the table's last snapshot records offsets 0-99 of partition 0 (the sync's first round). */
async function firstRoundCommitted(): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const last = await tableSnapshots(f.catalog, "unit_topics", "events").then(
      (snapshots) => snapshots.at(-1),
      () => undefined,
    );
    const offsets = last && JSON.parse(last.summary[OFFSETS_SUMMARY_KEY] ?? "{}").events;
    if (offsets?.["0"] === "100") return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the sync's first round was never committed");
}
