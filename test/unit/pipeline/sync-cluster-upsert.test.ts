// Upsert syncs as members of the job's consumer group (the job's cluster:), in process: two
// members that retire rows of one data file in the same round leave one deletion vector for that
// file, holding both members' positions (the second merges the first's on its retry); and with
// `order_by: _kafka_timestamp` a key found in several partitions ends as the same row whether one
// sync landed every partition or members landed their shares in any order, in any rounds.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { readDeletedPositions } from "#src/iceberg/scan/deleted-positions.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { readManifestEntries, readManifestList } from "#src/iceberg/scan/read-manifests.ts";
import { EntryStatus, FileContent } from "#src/iceberg/spec/manifest.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import type { SyncOptions } from "#src/pipeline/sync-options.ts";
import { committingEvery } from "../../helpers/job-file.ts";
import { type SyncFixture, syncFixture } from "./fixture.ts";
import type { MemoryMessage } from "./memory-source.ts";

function membership(memberId: string, partitions: number[]): NonNullable<SyncOptions["membership"]> {
  return { memberId, generationId: 1, partitions: new Map([["events", partitions]]), commitOffsets: async () => {} };
}

/** Live DV entries of the table's current snapshot, by the data file each deletes from. */
async function liveDVsPerDataFile(f: SyncFixture): Promise<Map<string, number>> {
  const table = await Table.load(f.catalog, { namespace: [f.job.namespace], name: "events" });
  const counts = new Map<string, number>();
  for (const manifest of await readManifestList(table, currentSnapshot(table.metadata)!)) {
    for (const entry of await readManifestEntries(table, manifest)) {
      const file = entry.file;
      if (entry.status === EntryStatus.DELETED || file.content !== FileContent.POSITION_DELETES) continue;
      if (file.referencedDataFile === undefined) continue;
      counts.set(file.referencedDataFile, (counts.get(file.referencedDataFile) ?? 0) + 1);
    }
  }
  return counts;
}

const byId = (rows: Record<string, unknown>[]) =>
  rows.map((r) => `${r.id}=${r.v}`).sort((a, b) => a.localeCompare(b, "en", { numeric: true }));

test("two members that retire rows of one data file in the same round leave one DV for it, with both members' positions", async () => {
  const f = await syncFixture({ streams: { events: { mode: "upsert", dedup_keys: ["id"] } } });
  try {
    f.source.createTopic("events", 2);
    // One sync lands keys 0-9 from partition 0 and 10-19 from partition 1: one data file.
    f.source.produce(
      "events",
      Array.from({ length: 20 }, (_, id) => ({ value: { id, v: "first" }, partition: id < 10 ? 0 : 1 })),
    );
    const first = await f.sync();
    assert.equal(first.report.tables[0]?.dataFilesAdded, 1);
    // Updates of keys 0-4 (partition 0, member a) and 10-14 (partition 1, member b).
    f.source.produce("events", [
      ...Array.from({ length: 5 }, (_, id) => ({ value: { id, v: "a" }, partition: 0 })),
      ...Array.from({ length: 5 }, (_, i) => ({ value: { id: 10 + i, v: "b" }, partition: 1 })),
    ]);
    // Member b reads its partition; before its round commits, member a lands its own round.
    let aLanded = false;
    f.source.beforeBatch = async (_topic, partition) => {
      if (aLanded || partition !== 1) return;
      aLanded = true;
      const a = await f.sync({ membership: membership("member-a", [0]), stateDir: join(f.dir, "member-a") });
      assert.equal(a.report.tables[0]?.positionsDeleted, 5);
    };
    const b = await f.sync({ membership: membership("member-b", [1]), stateDir: join(f.dir, "member-b") });
    assert.ok(aLanded);
    const report = b.report.tables[0]!;
    assert.equal(report.positionsDeleted, 5);
    assert.ok(
      report.keyIndex?.some((k) => k.how === "caught-up"),
      `member b caught up from member a's commit: ${JSON.stringify(report.keyIndex)}`,
    );

    const dvs = await liveDVsPerDataFile(f);
    const firstFile = [...dvs.keys()];
    assert.equal(firstFile.length, 1, "one data file has deletes");
    assert.equal(dvs.get(firstFile[0]!), 1, "one live DV for that file");
    const table = await Table.load(f.catalog, { namespace: [f.job.namespace], name: "events" });
    const plan = await planFiles(table, currentSnapshot(table.metadata));
    const positions = await readDeletedPositions(table.io, plan.deletionVectors.get(firstFile[0]!)!.entry.file);
    assert.equal(positions.cardinality, 10, "both members' five positions");
    assert.deepEqual(
      byId(await f.rows("events")),
      byId(
        Array.from({ length: 20 }, (_, id) => ({
          id,
          v: id < 5 ? "a" : id >= 10 && id < 15 ? "b" : "first",
        })),
      ),
    );
  } finally {
    await f.close();
  }
});

/** Keys 0-29 in all of four partitions, with timestamps that go back and forth. */
function crossPartitionMessages(): MemoryMessage[] {
  const messages: MemoryMessage[] = [];
  let seed = 7;
  const next = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed;
  };
  for (let round = 0; round < 4; round++) {
    for (let id = 0; id < 30; id++) {
      const partition = next() % 4;
      // Few distinct timestamps: ties between partitions are common, and broken by partition.
      const timestamp = 1_700_000_000_000n + BigInt(next() % 6);
      messages.push({ value: { id, v: `r${round}p${partition}t${timestamp % 10n}` }, partition, timestamp });
    }
  }
  return messages;
}

/** The model: per key, its message with the greatest (timestamp, partition, offset). */
function winnersOf(messages: MemoryMessage[]): { id: number; v: string }[] {
  const offsets = [0, 0, 0, 0];
  const best = new Map<number, { key: [bigint, number, number]; v: string }>();
  for (const m of messages) {
    const offset = offsets[m.partition!]!++;
    const value = m.value as { id: number; v: string };
    const key: [bigint, number, number] = [m.timestamp!, m.partition!, offset];
    const held = best.get(value.id);
    const later =
      !held ||
      key[0] > held.key[0] ||
      (key[0] === held.key[0] && (key[1] > held.key[1] || (key[1] === held.key[1] && key[2] > held.key[2])));
    if (later) best.set(value.id, { key, v: value.v });
  }
  return [...best].map(([id, { v }]) => ({ id, v }));
}

test("order_by: _kafka_timestamp: a key in several partitions ends as its latest message, landed by one sync or by members in any order", async () => {
  const messages = crossPartitionMessages();
  const model = byId(winnersOf(messages));
  const scenarios: { name: string; land: (f: SyncFixture) => Promise<void> }[] = [
    { name: "one sync, one round", land: async (f) => void (await f.sync()) },
    {
      name: "one sync, rounds of 17 messages",
      land: async (f) => void (await f.sync({}, committingEvery(f.job, 17))),
    },
    {
      name: "members [3], [0], [2], [1] one after another",
      land: async (f) => {
        for (const p of [3, 0, 2, 1])
          await f.sync({ membership: membership(`m${p}`, [p]), stateDir: join(f.dir, `m${p}`) });
      },
    },
    {
      // The first lands partition 0 and creates the table (members racing to create it is a limit of its own).
      name: "member [0], then members [1,3] and [2] racing, rounds of 11",
      land: async (f) => {
        await f.sync({ membership: membership("zero", [0]), stateDir: join(f.dir, "zero") });
        const job = committingEvery(f.job, 11);
        await Promise.all([
          f.sync({ membership: membership("odd", [1, 3]), stateDir: join(f.dir, "odd") }, job),
          f.sync({ membership: membership("two", [2]), stateDir: join(f.dir, "two") }, job),
        ]);
      },
    },
  ];
  for (const { name, land } of scenarios) {
    const f = await syncFixture({
      streams: { events: { mode: "upsert", dedup_keys: ["id"], order_by: "_kafka_timestamp" } },
    });
    try {
      f.source.createTopic("events", 4).produce("events", messages);
      await land(f);
      assert.deepEqual(byId(await f.rows("events")), model, name);
      for (const [path, count] of await liveDVsPerDataFile(f)) assert.equal(count, 1, `${name}: ${path}`);
    } finally {
      await f.close();
    }
  }
});

test("a member whose round meets another member's newer row of a key plans the round again: the older row never lands", async () => {
  const f = await syncFixture({
    streams: { events: { mode: "upsert", dedup_keys: ["id"], order_by: "_kafka_timestamp" } },
  });
  try {
    const at = (ms: number) => 1_700_000_000_000n + BigInt(ms);
    f.source.createTopic("events", 2);
    f.source.produce("events", [{ value: { id: 1, v: "seed" }, partition: 0, timestamp: at(0) }]);
    await f.sync();
    // Key 1 again in both partitions: partition 0's is the later one (timestamp 20 against 10).
    f.source.produce("events", [
      { value: { id: 1, v: "newer" }, partition: 0, timestamp: at(20) },
      { value: { id: 1, v: "older" }, partition: 1, timestamp: at(10) },
      { value: { id: 2, v: "b" }, partition: 1, timestamp: at(10) },
    ]);
    let aLanded = false;
    f.source.beforeBatch = async (_topic, partition) => {
      if (aLanded || partition !== 1) return;
      aLanded = true;
      await f.sync({ membership: membership("member-a", [0]), stateDir: join(f.dir, "member-a") });
    };
    const b = await f.sync({ membership: membership("member-b", [1]), stateDir: join(f.dir, "member-b") });
    assert.ok(aLanded);
    assert.equal(b.report.tables[0]?.replans, 1);
    assert.equal(b.report.tables[0]?.recordsAdded, 1, "only key 2: key 1's older row was dropped on the second plan");
    assert.deepEqual(byId(await f.rows("events")), ["1=newer", "2=b"]);
    for (const [path, count] of await liveDVsPerDataFile(f)) assert.equal(count, 1, path);
  } finally {
    await f.close();
  }
});
