// A job that loads syncs: the rules of the job file are checked once, when it loads, and the
// sync does not refuse what the loader accepted.
import assert from "node:assert/strict";
import { test } from "node:test";
import { syncFixture } from "./fixture.ts";

test("without topic_pattern an upsert default_stream applies to no topic, so target_engines [athena] syncs", async () => {
  const f = await syncFixture({
    iceberg: { target_engines: ["athena"] },
    streams: { clicks: { mode: "append" } },
    default_stream: { mode: "upsert", dedup_keys: ["id"] },
  });
  try {
    f.source
      .createTopic("clicks")
      .createTopic("orders")
      .produce("clicks", [{ value: { id: 1 } }]);
    const { report } = await f.sync();
    assert.equal(report.status, "complete");
    assert.deepEqual(
      report.tables.map((t) => [t.topic, t.mode, t.recordsAdded]),
      [["clicks", "append", 1]],
    );
    assert.deepEqual(report.skippedTopics, [{ topic: "orders", reason: "not listed under streams" }]);
  } finally {
    await f.close();
  }
});
