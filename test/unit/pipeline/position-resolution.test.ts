// Where a sync resumes when the snapshots that recorded floe's position are gone or no longer
// ancestors: the rules of positionAt over hand-built metadata, then whole syncs on the embedded
// SQLite catalog (the position also kept as table properties in the snapshot's own commit; a
// table with rows and no trusted position refused until --resume-from says where to go on).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { SnapshotProducer } from "#src/iceberg/commit/snapshot-producer.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { MAIN_BRANCH } from "#src/iceberg/spec/snapshot.ts";
import { currentSnapshot, type TableMetadata } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import { classifyError } from "#src/pipeline/classify-error.ts";
import { ConcurrentSyncError, claimOffsets } from "#src/pipeline/offset-claim.ts";
import {
  OFFSETS_PROPERTY,
  OFFSETS_SUMMARY_KEY,
  PositionUnknownError,
  positionAt,
  RECORDED_BY_PROPERTY,
  RECORDED_SEQUENCE_PROPERTY,
  TOPIC_IDS_PROPERTY,
  untrustedPosition,
} from "#src/pipeline/snapshot-offsets.ts";
import { type SyncFixture, sortBy, syncFixture } from "./fixture.ts";

interface Snap {
  id: number;
  parent?: number;
  seq: number;
  summary?: Record<string, string>;
}

function metadata(current: number | undefined, snaps: Snap[], properties: Record<string, string> = {}): TableMetadata {
  return {
    refs: current === undefined ? {} : { main: { snapshotId: BigInt(current), type: "branch" } },
    ...(current === undefined ? {} : { currentSnapshotId: BigInt(current) }),
    properties,
    lastSequenceNumber: BigInt(Math.max(0, ...snaps.map((s) => s.seq))),
    snapshots: snaps.map((s) => ({
      snapshotId: BigInt(s.id),
      ...(s.parent === undefined ? {} : { parentSnapshotId: BigInt(s.parent) }),
      sequenceNumber: BigInt(s.seq),
      summary: { operation: "append", "total-records": "10", ...s.summary },
    })),
  } as unknown as TableMetadata;
}

const offsets = (n: number) => ({ [OFFSETS_SUMMARY_KEY]: JSON.stringify({ t: { "0": String(n) } }) });
const props = (n: number, by: number, seq: number) => ({
  [OFFSETS_PROPERTY]: JSON.stringify({ t: { "0": String(n) } }),
  [TOPIC_IDS_PROPERTY]: "{}",
  [RECORDED_BY_PROPERTY]: String(by),
  [RECORDED_SEQUENCE_PROPERTY]: String(seq),
});
const at = (m: TableMetadata) => positionAt(m, currentSnapshot(m), "t");
const offsetOf = (m: TableMetadata) => at(m).position.offsets.get("t")?.get(0);

test("the newest ancestor's summary wins over the table properties", () => {
  // A rollback to an older floe snapshot: its summary tells what the table holds now.
  const m = metadata(
    1,
    [
      { id: 1, seq: 1, summary: offsets(10) },
      { id: 2, parent: 1, seq: 2, summary: offsets(20) },
    ],
    props(20, 2, 2),
  );
  assert.equal(at(m).source, "summary");
  assert.equal(offsetOf(m), 10n);
  assert.equal(untrustedPosition(m, "t"), undefined);
});

test("the table properties are trusted once their recording snapshot was expired", () => {
  // Spark's rewrite_data_files then expire_snapshots(retain_last => 1): only the replace snapshot is left.
  const m = metadata(3, [{ id: 3, seq: 3, summary: { operation: "replace" } }], props(20, 2, 2));
  assert.equal(at(m).source, "property");
  assert.equal(at(m).recordedById, 2n);
  assert.equal(offsetOf(m), 20n);
  assert.equal(untrustedPosition(m, "t"), undefined);
});

test("properties recorded by a snapshot still in the metadata but not an ancestor (a rollback) are not trusted", () => {
  const m = metadata(
    1,
    [
      { id: 1, seq: 1 },
      { id: 2, parent: 1, seq: 2, summary: offsets(20) },
    ],
    props(20, 2, 2),
  );
  assert.equal(at(m).source, "untrusted");
  assert.equal(at(m).position.offsets.size, 0);
  assert.match(untrustedPosition(m, "t") ?? "", /snapshot 2, which is no longer an ancestor of the current snapshot 1/);
});

test("properties of an expired snapshot whose sequence number the ancestry skips over are not trusted", () => {
  // Rolled back to 1, then 2 expired, then another writer committed 3 on 1.
  const rolledBack = metadata(
    3,
    [
      { id: 1, seq: 1 },
      { id: 3, parent: 1, seq: 3 },
    ],
    props(20, 2, 2),
  );
  assert.equal(at(rolledBack).source, "untrusted");
  assert.match(untrustedPosition(rolledBack, "t") ?? "", /sequence number 2/);
  // The chain cut after the recording snapshot (expired with everything older): trusted.
  const expired = metadata(
    4,
    [
      { id: 3, parent: 2, seq: 3 },
      { id: 4, parent: 3, seq: 4 },
    ],
    props(20, 2, 2),
  );
  assert.equal(at(expired).source, "property");
});

test("a table with live rows and no recorded position is untrusted; an empty one is not", () => {
  assert.match(untrustedPosition(metadata(1, [{ id: 1, seq: 1 }]), "t") ?? "", /holds 10 live row/);
  const emptied = metadata(1, [{ id: 1, seq: 1, summary: { "total-records": "4", "total-position-deletes": "4" } }]);
  assert.equal(untrustedPosition(emptied, "t"), undefined);
  assert.equal(untrustedPosition(metadata(undefined, []), "t"), undefined);
});

let f: SyncFixture;

before(async () => {
  f = await syncFixture({ streams: { events: { mode: "append" }, foreign: { mode: "append" } } });
});

after(() => f.close());

const load = (name: string) => Table.load(f.catalog, { namespace: [f.job.namespace], name });
const messages = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => ({ value: { i: from + i }, partition: 0 }));
const values = async (table: string) => sortBy(await f.rows(table), "i").map((r) => Number(r.i));
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

test("each floe commit records its position as table properties in the snapshot's own commit", async () => {
  f.source.createTopic("events").produce("events", messages(0, 5));
  await f.sync();
  f.source.produce("events", messages(5, 8));
  await f.sync();
  const table = await load("events");
  const current = currentSnapshot(table.metadata)!;
  assert.equal(table.metadata.properties[RECORDED_BY_PROPERTY], current.snapshotId.toString());
  assert.equal(table.metadata.properties[RECORDED_SEQUENCE_PROPERTY], current.sequenceNumber.toString());
  assert.equal(table.metadata.properties[OFFSETS_PROPERTY], current.summary[OFFSETS_SUMMARY_KEY]);
  assert.deepEqual(JSON.parse(table.metadata.properties[TOPIC_IDS_PROPERTY]!), {
    events: f.source.topicId("events"),
  });
});

test("a table with foreign rows and no position is refused, resumed where told, then rolled back and refused again", async () => {
  // A table another engine created and filled: the same columns as floe's, one data file of 5 rows.
  const events = await load("events");
  const { dataFiles } = await planFiles(events, currentSnapshot(events.metadata));
  const first = [...dataFiles.values()].map((d) => d.entry.file).find((d) => d.recordCount === 5n)!;
  const foreign = new Table(
    f.catalog,
    await f.catalog.createTable(
      { namespace: [f.job.namespace], name: "foreign" },
      { schema: events.metadata.schemas.at(-1)!, spec: events.metadata.partitionSpecs[0]! },
    ),
  );
  const foreignSnapshot = await foreign.newFastAppend().appendFile(first).commit();
  f.source.createTopic("foreign").produce("foreign", messages(100, 110));
  f.source.groups.set(f.job.consumerGroup, new Map([["foreign", new Map([[0, 4n]])]]));

  const refused = await f.failingSync();
  assert.ok(refused.error instanceof PositionUnknownError, `expected PositionUnknownError, got ${refused.error}`);
  assert.match(refused.error.message, /unit_topics\.foreign: the table holds 5 live row\(s\)/);
  assert.match(refused.error.message, /--resume-from group/);
  assert.deepEqual(
    { kind: classifyError(refused.error).kind, retryable: classifyError(refused.error).retryable },
    { kind: "position-unknown", retryable: false },
  );
  assert.deepEqual(await values("foreign"), range(0, 5), "nothing landed");

  // Told to resume from the group: offsets 4.. of the topic, then recorded, so no flag is needed again.
  await f.sync({ resumeFrom: "group" });
  assert.deepEqual(await values("foreign"), [...range(0, 5), ...range(104, 110)]);
  f.source.produce("foreign", messages(110, 112));
  await f.sync();
  assert.deepEqual(await values("foreign"), [...range(0, 5), ...range(104, 112)]);

  // Rolled back to the foreign snapshot: floe's property is recorded by a snapshot no longer an ancestor.
  const table = await load("foreign");
  await table.commit(
    [{ type: "assert-table-uuid", uuid: table.metadata.tableUuid }],
    [{ action: "set-snapshot-ref", refName: MAIN_BRANCH, snapshotId: foreignSnapshot.snapshotId, type: "branch" }],
  );
  const rolledBack = await f.failingSync();
  assert.ok(rolledBack.error instanceof PositionUnknownError);
  assert.match(rolledBack.error.message, /no longer an ancestor of the current snapshot/);

  // Resumed from the end of the log: nothing read, the position recorded by an empty commit.
  await f.sync({ resumeFrom: "latest" });
  assert.deepEqual(await values("foreign"), range(0, 5));
  f.source.produce("foreign", messages(112, 114));
  await f.sync();
  assert.deepEqual(await values("foreign"), [...range(0, 5), 112, 113]);

  // And from the log start: every message of the topic once more beside the foreign rows.
  const again = await load("foreign");
  await again.commit(
    [{ type: "assert-table-uuid", uuid: again.metadata.tableUuid }],
    [{ action: "set-snapshot-ref", refName: MAIN_BRANCH, snapshotId: foreignSnapshot.snapshotId, type: "branch" }],
  );
  await f.sync({ resumeFrom: "earliest" });
  assert.deepEqual(await values("foreign"), [...range(0, 5), ...range(100, 114)]);
  // The events table kept its position throughout: the flag changes only untrusted tables.
  assert.deepEqual(await values("events"), range(0, 8));
});

test("the commit-time claim resolves the parent's position as planning does: another writer's offsets in the properties alone still conflict", async () => {
  // What claimOffsets registers on a producer, captured: the parent check and the recorded position.
  const checks: ((base: TableMetadata, parent: unknown) => void | Promise<void>)[] = [];
  const properties: ((base: TableMetadata, parent: unknown) => Record<string, string>)[] = [];
  const producer = {
    snapshotId: 99n,
    validate(check: (typeof checks)[number]) {
      checks.push(check);
      return this;
    },
    setFromParent() {
      return this;
    },
    setTablePropertiesFromParent(p: (typeof properties)[number]) {
      properties.push(p);
      return this;
    },
    set() {
      return this;
    },
  };
  const startedFrom = { offsets: new Map([["t", new Map([[0, 20n]])]]), topicIds: new Map<string, string>() };
  claimOffsets(producer as unknown as SnapshotProducer, {
    table: "ns.t",
    job: "j",
    startedFrom,
    read: new Map([["t", new Map([[0, 30n]])]]),
    topicIds: new Map(),
  });
  // Every floe snapshot expired; the properties say partition 0 is at 20, as this sync started.
  const same = metadata(3, [{ id: 3, seq: 3, summary: { operation: "replace" } }], props(20, 2, 2));
  await checks[0]!(same, currentSnapshot(same));
  const recorded = properties[0]!(same, currentSnapshot(same));
  assert.equal(recorded[OFFSETS_PROPERTY], JSON.stringify({ t: { "0": "30" } }));
  assert.equal(recorded[RECORDED_BY_PROPERTY], "99");
  assert.equal(recorded[RECORDED_SEQUENCE_PROPERTY], "4", "the sequence number of the snapshot being committed");
  // Another writer took partition 0 to 25 and its snapshot expired since: the claim conflicts.
  const moved = metadata(5, [{ id: 5, seq: 5, summary: { operation: "replace" } }], props(25, 4, 4));
  await assert.rejects(async () => checks[0]!(moved, currentSnapshot(moved)), ConcurrentSyncError);
  // Rolled back while this sync ran: refused, not claimed from a position the table no longer holds.
  const rolled = metadata(
    1,
    [
      { id: 1, seq: 1 },
      { id: 2, parent: 1, seq: 2, summary: offsets(20) },
    ],
    props(20, 2, 2),
  );
  await assert.rejects(async () => checks[0]!(rolled, currentSnapshot(rolled)), PositionUnknownError);
});
