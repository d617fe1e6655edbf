// order_by: _kafka_timestamp's positions compare as strings in (timestamp, partition, offset)
// order: a later timestamp wins whatever its partition or offset, then the higher partition, then
// the later offset; a message without a timestamp (Kafka's -1) is older than any with one.
import assert from "node:assert/strict";
import { test } from "node:test";
import { kafkaOrderPosition } from "#src/pipeline/change-order.ts";

test("positions order by timestamp, then partition, then offset, as strings", () => {
  const ordered = [
    kafkaOrderPosition(-1000n, 9, 999n),
    kafkaOrderPosition(0n, 11, 5n),
    kafkaOrderPosition(1_700_000_000_000_000n, 2, 9_000_000_000n),
    kafkaOrderPosition(1_700_000_000_000_000n, 10, 0n),
    kafkaOrderPosition(1_700_000_000_000_000n, 10, 1n),
    kafkaOrderPosition(1_700_000_000_000_001n, 0, 0n),
  ];
  const shuffled = [ordered[3]!, ordered[0]!, ordered[5]!, ordered[1]!, ordered[4]!, ordered[2]!];
  assert.deepEqual(shuffled.sort(), ordered);
  assert.equal(new Set(ordered.map((p) => p.length)).size, 1, "one width: string order is numeric order");
});
