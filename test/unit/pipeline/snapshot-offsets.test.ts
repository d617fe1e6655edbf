// The Kafka position a snapshot summary records: offsets per partition and, beside them, the id
// of the topic they count, read back from summaries written with and without ids.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { TableMetadata } from "#src/iceberg/spec/table-metadata.ts";
import { kafkaTopicId } from "#src/kafka/discover.ts";
import {
  advancePosition,
  committedOffsets,
  committedPosition,
  type KafkaPosition,
  OFFSETS_SUMMARY_KEY,
  offsetsOfTopic,
  positionToSummary,
  replacedTopicId,
  samePosition,
  TOPIC_IDS_SUMMARY_KEY,
} from "#src/pipeline/snapshot-offsets.ts";

/** Just what committedPosition reads: the main branch's snapshots and their summaries. */
function metadataWith(...summaries: Record<string, string>[]): TableMetadata {
  const snapshots = summaries.map((summary, i) => ({
    snapshotId: BigInt(i + 1),
    ...(i === 0 ? {} : { parentSnapshotId: BigInt(i) }),
    summary: { operation: "append", ...summary },
  }));
  return { refs: {}, currentSnapshotId: BigInt(summaries.length), snapshots } as unknown as TableMetadata;
}

const position = (
  offsets: Record<string, Record<number, bigint>>,
  ids: Record<string, string> = {},
): KafkaPosition => ({
  offsets: new Map(
    Object.entries(offsets).map(([t, p]) => [t, new Map(Object.entries(p).map(([k, v]) => [Number(k), v]))]),
  ),
  topicIds: new Map(Object.entries(ids)),
});

test("topic ids are written as Kafka's tools write them; the zero UUID and a topic name are no id", () => {
  assert.equal(kafkaTopicId("62a12596-88dd-4616-ae49-549cab5c9573"), "YqEllojdRhauSVScq1yVcw");
  assert.equal(kafkaTopicId("00000000-0000-0000-0000-000000000000"), undefined);
  // The library puts the name where Metadata below v10 has no id.
  assert.equal(kafkaTopicId("orders"), undefined);
  assert.equal(kafkaTopicId(undefined), undefined);
});

test("a summary written before topic ids reads as offsets of unknown identity, trusted for any id", () => {
  const metadata = metadataWith({ [OFFSETS_SUMMARY_KEY]: '{"orders":{"0":"100","1":"7"}}' });
  const read = committedPosition(metadata, "t");
  assert.deepEqual(read, position({ orders: { 0: 100n, 1: 7n } }));
  assert.deepEqual(committedOffsets(metadata, "t"), read.offsets);
  assert.equal(replacedTopicId(read, "orders", "AAAA"), undefined);
  assert.deepEqual(
    offsetsOfTopic(read, "orders", "AAAA"),
    new Map([
      [0, 100n],
      [1, 7n],
    ]),
  );
});

test("ids are read from the same snapshot as the offsets, past snapshots of other writers", () => {
  const metadata = metadataWith(
    { [OFFSETS_SUMMARY_KEY]: '{"orders":{"0":"5"}}', [TOPIC_IDS_SUMMARY_KEY]: '{"orders":"OLD"}' },
    { [OFFSETS_SUMMARY_KEY]: '{"orders":{"0":"100"}}', [TOPIC_IDS_SUMMARY_KEY]: '{"orders":"ID1"}' },
    { operation: "replace" },
  );
  const read = committedPosition(metadata, "t");
  assert.deepEqual(read, position({ orders: { 0: 100n } }, { orders: "ID1" }));
  assert.equal(replacedTopicId(read, "orders", "ID1"), undefined);
  assert.equal(replacedTopicId(read, "orders", "ID2"), "ID1");
  assert.equal(replacedTopicId(read, "orders", undefined), undefined, "a cluster without ids cannot tell");
  assert.equal(offsetsOfTopic(read, "orders", "ID2"), undefined);
  assert.throws(
    () => committedPosition(metadataWith({ [OFFSETS_SUMMARY_KEY]: "{}", [TOPIC_IDS_SUMMARY_KEY]: "{" }), "ns.t"),
    /^Error: ns\.t: snapshot summary floe\.kafka\.topic-ids is not JSON$/,
  );
});

test("advancing a position: partitions merge under the same id; a changed id starts the topic over, every partition", () => {
  const before = position({ orders: { 0: 100n, 1: 80n, 2: 60n }, other: { 0: 3n } }, { orders: "ID1", other: "O" });
  const same = advancePosition(before, new Map([["orders", new Map([[1, 90n]])]]), new Map([["orders", "ID1"]]));
  assert.deepEqual(
    same,
    position({ orders: { 0: 100n, 1: 90n, 2: 60n }, other: { 0: 3n } }, { orders: "ID1", other: "O" }),
  );

  // Re-created with one partition: the old partitions 1 and 2 must not survive under the new id.
  const recreated = advancePosition(before, new Map([["orders", new Map([[0, 0n]])]]), new Map([["orders", "ID2"]]));
  assert.deepEqual(recreated, position({ orders: { 0: 0n }, other: { 0: 3n } }, { orders: "ID2", other: "O" }));
  assert.deepEqual(positionToSummary(recreated), {
    [OFFSETS_SUMMARY_KEY]: '{"orders":{"0":"0"},"other":{"0":"3"}}',
    [TOPIC_IDS_SUMMARY_KEY]: '{"orders":"ID2","other":"O"}',
  });
  assert.equal(samePosition(recreated, before), false);

  // Offsets of unknown identity take the current id; without any id the summary has offsets only.
  const legacy = position({ orders: { 0: 100n } });
  assert.deepEqual(
    advancePosition(legacy, new Map(), new Map([["orders", "ID1"]])),
    position({ orders: { 0: 100n } }, { orders: "ID1" }),
  );
  assert.deepEqual(positionToSummary(advancePosition(legacy, new Map(), new Map())), {
    [OFFSETS_SUMMARY_KEY]: '{"orders":{"0":"100"}}',
  });
  assert.equal(samePosition(advancePosition(legacy, new Map(), new Map()), legacy), true);
});
