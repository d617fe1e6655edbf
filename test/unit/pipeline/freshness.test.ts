// Freshness quantiles of a round: from each message's produce timestamp to the commit, the p99
// being the 1st percentile of the timestamps; messages without a timestamp are left out.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ProduceTimes } from "#src/pipeline/freshness.ts";

test("p50, p99 and the oldest, measured from when the round became visible", () => {
  const times = new ProduceTimes();
  // 2,000 messages produced 1 ms apart, out of order as partitions interleave them.
  for (let i = 0; i < 2000; i++) times.add(BigInt(10_000 + ((i * 7919) % 2000)));
  assert.equal(times.count, 2000);
  assert.deepEqual(times.freshness(12_000), { p50Ms: 1001, p99Ms: 1981, maxMs: 2000 });
});

test("no timestamp, no figure; a clock ahead of this one gives 0, never a negative age", () => {
  const times = new ProduceTimes();
  assert.equal(times.freshness(1000), undefined);
  times.add(-1n);
  assert.equal(times.freshness(1000), undefined, "a message without timestamp is left out");
  times.add(5000n);
  assert.deepEqual(times.freshness(1000), { p50Ms: 0, p99Ms: 0, maxMs: 0 });
});
