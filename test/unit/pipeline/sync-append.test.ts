// Whole syncs in append mode, in process: an in-memory source, the embedded catalog, local files.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type SyncFixture, sortBy, syncFixture } from "./fixture.ts";

let f: SyncFixture;

before(async () => {
  f = await syncFixture({ kafka: { topic_pattern: "(clicks|views)" }, default_stream: { mode: "append" } });
  f.source.createTopic("clicks", 2).createTopic("views").createTopic("other");
});

after(() => f.close());

test("every message of every partition lands once, with its Kafka coordinates; the group gets the offsets", async () => {
  const clicks = Array.from({ length: 250 }, (_, i) => ({
    key: `k${i}`,
    value: { n: i, page: `p${i % 7}` },
    partition: i % 2,
  }));
  f.source.produce("clicks", clicks).produce("views", [{ value: { n: 1000 } }, { value: { n: 1001 } }]);
  const { report } = await f.sync();
  assert.equal(report.status, "complete");
  assert.equal(report.messagesRead, 252);
  assert.deepEqual(report.skippedTopics, [{ topic: "other", reason: "does not match topic_pattern" }]);
  assert.deepEqual(
    report.tables.map((t) => [t.table, t.mode, t.messagesRead, t.recordsAdded, t.dataFilesAdded, t.created]),
    [
      ["unit_topics.clicks", "append", 250, 250, 1, true],
      ["unit_topics.views", "append", 2, 2, 1, true],
    ],
  );
  const rows = sortBy(await f.rows("clicks"), "n");
  assert.equal(rows.length, 250);
  rows.forEach((row, i) => {
    assert.equal(row.n, BigInt(i));
    assert.equal(row.page, `p${i % 7}`);
    assert.equal(row._kafka_partition, i % 2);
    assert.equal(row._kafka_offset, BigInt(Math.floor(i / 2)));
    assert.equal(row._op_type, "c");
    assert.equal(Buffer.from(String(row._kafka_key), "base64").toString(), `k${i}`);
  });
  assert.deepEqual(
    f.source.groups.get("floe_unit"),
    new Map([
      [
        "clicks",
        new Map([
          [0, 125n],
          [1, 125n],
        ]),
      ],
      ["views", new Map([[0, 2n]])],
    ]),
  );
});

test("the next sync reads only what is new, and a sync with nothing new commits nothing", async () => {
  f.source.produce("views", [{ value: { n: 1002, extra: "x" } }]);
  const { report } = await f.sync();
  assert.equal(report.messagesRead, 1);
  const views = report.tables.find((t) => t.topic === "views")!;
  assert.deepEqual([views.recordsAdded, views.columnsAdded, views.created], [1, ["extra"], false]);
  assert.deepEqual(
    sortBy(await f.rows("views"), "n").map((r) => [r.n, r.extra]),
    [
      [1000n, null],
      [1001n, null],
      [1002n, "x"],
    ],
  );
  const before = (await f.catalog.loadTable({ namespace: ["unit_topics"], name: "views" })).metadata.snapshots.length;
  const groupCommits = f.source.groupCommits.length;
  const idle = await f.sync();
  assert.equal(idle.report.messagesRead, 0);
  assert.ok(idle.report.tables.every((t) => t.snapshotId === null));
  const afterIdle = (await f.catalog.loadTable({ namespace: ["unit_topics"], name: "views" })).metadata.snapshots;
  assert.equal(afterIdle.length, before, "no empty snapshot");
  assert.equal(f.source.groupCommits.length, groupCommits, "no group commit: the group holds every offset already");
});

test("the table's offsets win over the group's: a group left behind re-reads nothing", async () => {
  f.source.groups.get("floe_unit")!.set("views", new Map([[0, 0n]]));
  const { report } = await f.sync();
  assert.equal(report.messagesRead, 0);
  assert.equal((await f.rows("views")).length, 3);
  assert.equal(f.source.groups.get("floe_unit")?.get("views")?.get(0), 3n, "caught up");
  // Only the partition that was behind: the others' offsets are the group's already.
  assert.deepEqual(f.source.groupCommits.at(-1)?.offsets, new Map([["views", new Map([[0, 3n]])]]));
});
