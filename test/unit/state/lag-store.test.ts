import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { LagStore } from "#src/state/lag-store.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-lag-store-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("planned and measured lag per job, cancelled runs and health survive a reopen", () => {
  const root = join(dir, "state");
  const store = LagStore.open(root);
  store.addPlanned("a", 1000, [
    { topic: "t", partition: 0, lag: 5 },
    { topic: "t", partition: 1, lag: 7 },
  ]);
  store.addPlanned("b", 1000, [{ topic: "u", partition: 0, lag: 1 }]);
  assert.equal(store.measuredLag("a"), undefined, "nothing measured yet");
  store.addMeasured("a", 2000, [{ topic: "t", partition: 0, lag: 9 }]);
  store.addMeasured("a", 3000, [
    { topic: "t", partition: 0, lag: 2 },
    { topic: "t", partition: 1, lag: 3 },
  ]);
  store.markCancelled("run-1", 4000);
  store.markCancelled("run-1", 5000);
  store.saveHealth("source", "kafka", 6000, { ok: true });
  store.saveHealth("source", "kafka", 7000, { ok: false, error: "refused" });
  store.close();

  const reopened = LagStore.open(root);
  assert.deepEqual(reopened.samples("a"), [
    { at: new Date(1000).toISOString(), topic: "t", partition: 0, lag: 5 },
    { at: new Date(1000).toISOString(), topic: "t", partition: 1, lag: 7 },
  ]);
  assert.equal(reopened.measuredLag("a"), 5, "the sum over partitions at the last measurement");
  assert.equal(reopened.measuredLag("b"), undefined);
  assert.equal(reopened.wasCancelled("run-1"), true);
  assert.equal(reopened.wasCancelled("run-2"), false);
  assert.deepEqual(reopened.health("source", "kafka"), {
    ok: false,
    error: "refused",
    testedAt: new Date(7000).toISOString(),
  });
  assert.equal(reopened.health("destination", "kafka"), null);
  reopened.dropHealth("source", "kafka");
  assert.equal(reopened.health("source", "kafka"), null);
  reopened.close();
});
