// Syncs as members of the job's consumer group (the job's cluster:), in process: each plans,
// reads and acknowledges only its assigned partitions, its group commit goes through the member
// (never the admin commit), its snapshots name it; two members with disjoint partitions both land
// in one table, and a zombie (a member whose partition another one landed meanwhile) is refused
// by the offset claim.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import { currentSchema } from "#src/iceberg/spec/table-metadata.ts";
import type { TopicPartitionOffsets } from "#src/kafka/commit-offsets.ts";
import { ConcurrentSyncError, GENERATION_SUMMARY_KEY, MEMBER_SUMMARY_KEY } from "#src/pipeline/offset-claim.ts";
import { runSync } from "#src/pipeline/sync.ts";
import type { SyncOptions } from "#src/pipeline/sync-options.ts";
import { type SyncFixture, syncFixture } from "./fixture.ts";
import { tableSnapshots } from "./table-rows.ts";

let f: SyncFixture;

before(async () => {
  f = await syncFixture({ streams: { events: { mode: "append" } } });
  f.source.createTopic("events", 4);
});

after(() => f.close());

const produce = (perPartition: number, from = 0) =>
  f.source.produce(
    "events",
    [0, 1, 2, 3].flatMap((p) =>
      Array.from({ length: perPartition }, (_, i) => ({ value: { p, i: from + i }, partition: p })),
    ),
  );

function member(memberId: string, generationId: number, partitions: number[], topic = "events") {
  const commits: TopicPartitionOffsets[] = [];
  const membership: NonNullable<SyncOptions["membership"]> = {
    memberId,
    generationId,
    partitions: new Map([[topic, partitions]]),
    commitOffsets: async (offsets) => {
      commits.push(offsets);
    },
  };
  return { membership, commits };
}

const landed = async () =>
  (await f.rows("events")).map((r) => `${r.p}/${r.i}`).sort((a, b) => a.localeCompare(b, "en", { numeric: true }));

test("two members land their own partitions of one table; the group hears of each through its member", async () => {
  produce(30);
  const a = member("member-a", 1, [0, 1]);
  const b = member("member-b", 1, [2, 3]);
  const first = await f.sync({ membership: a.membership });
  assert.equal(first.report.messagesRead, 60);
  const planned = first.events.find((e) => e.type === "planned");
  assert.deepEqual(
    planned?.type === "planned" ? planned.partitions.map((p) => p.partition) : [],
    [0, 1],
    "only the member's partitions are planned",
  );
  assert.deepEqual(a.commits, [
    new Map([
      [
        "events",
        new Map([
          [0, 30n],
          [1, 30n],
        ]),
      ],
    ]),
  ]);
  assert.equal(f.source.groups.get("floe_unit"), undefined, "no admin commit of the group's offsets");
  await f.sync({ membership: b.membership });
  assert.deepEqual(b.commits, [
    new Map([
      [
        "events",
        new Map([
          [2, 30n],
          [3, 30n],
        ]),
      ],
    ]),
  ]);
  const rows = await landed();
  assert.equal(rows.length, 120);
  assert.equal(new Set(rows).size, 120, "every message once");
  const snapshots = await tableSnapshots(f.catalog, f.job.namespace, "events");
  assert.deepEqual(
    snapshots.map((s) => [s.summary[MEMBER_SUMMARY_KEY], s.summary[GENERATION_SUMMARY_KEY]]),
    [
      ["member-a", "1"],
      ["member-b", "1"],
    ],
  );
});

test("a zombie whose partition the next owner landed while it read is refused, and lands nothing twice", async () => {
  produce(20, 30);
  const zombie = member("member-a", 1, [0, 1]);
  const owner = member("member-b", 2, [0, 1, 2, 3]);
  // The zombie has read its first batch when the next owner, in generation 2, lands everything.
  let landedByOwner = false;
  f.source.beforeBatch = async (_topic, partition) => {
    if (landedByOwner || partition !== 1) return;
    landedByOwner = true;
    await runSync(
      f.job,
      { source: f.source, catalog: f.catalog },
      { stateDir: join(f.dir, "owner"), membership: owner.membership },
    );
  };
  const { error } = await f.failingSync({ membership: zombie.membership });
  f.source.beforeBatch = undefined;
  assert.ok(landedByOwner);
  assert.ok(error instanceof ConcurrentSyncError, `expected a concurrent-sync error, got ${error}`);
  assert.deepEqual(zombie.commits, [], "the zombie acknowledged nothing");
  const rows = await landed();
  assert.equal(rows.length, 200);
  assert.equal(new Set(rows).size, 200, "every message once");
});

test("two members that planned on a table with no position of the topic both land: the first to commit records the topic, the other's partitions are still where it started", async () => {
  const fresh = await syncFixture({ streams: { orders: { mode: "append" } } });
  try {
    fresh.source.createTopic("orders", 2);
    const produceOrders = (from: number) =>
      fresh.source.produce(
        "orders",
        [0, 1].flatMap((p) => Array.from({ length: 10 }, (_, i) => ({ value: { p, i: from + i }, partition: p }))),
      );
    // The table exists, empty, with no position of the topic (made up front, as a user may make a
    // table for another engine): a first sync lands a batch and commits the group's offsets, then
    // the table is made again with the schema it got. The members start from the group's offsets.
    produceOrders(0);
    await fresh.sync();
    const loaded = await fresh.catalog.loadTable({ namespace: [fresh.job.namespace], name: "orders" });
    await fresh.catalog.dropTable({ namespace: [fresh.job.namespace], name: "orders" });
    await fresh.catalog.createTable(
      { namespace: [fresh.job.namespace], name: "orders" },
      { schema: currentSchema(loaded.metadata), spec: unpartitioned, properties: {} },
    );
    produceOrders(10);
    const a = member("member-a", 1, [0], "orders");
    const b = member("member-b", 1, [1], "orders");
    // a has planned from no position and read its batch when b lands its own partition first.
    let landedByB = false;
    fresh.source.beforeBatch = async () => {
      if (landedByB) return;
      landedByB = true;
      await runSync(
        fresh.job,
        { source: fresh.source, catalog: fresh.catalog },
        { stateDir: join(fresh.dir, "b"), membership: b.membership },
      );
    };
    const { report } = await fresh.sync({ membership: a.membership });
    fresh.source.beforeBatch = undefined;
    assert.ok(landedByB);
    assert.equal(report.messagesRead, 10);
    assert.deepEqual(a.commits, [new Map([["orders", new Map([[0, 20n]])]])]);
    assert.deepEqual(b.commits, [new Map([["orders", new Map([[1, 20n]])]])]);
    const rows = (await fresh.rows("orders")).map((r) => `${r.p}/${r.i}`);
    assert.equal(rows.length, 20);
    assert.equal(new Set(rows).size, 20, "every message of the second batch once");
  } finally {
    fresh.close();
  }
});
