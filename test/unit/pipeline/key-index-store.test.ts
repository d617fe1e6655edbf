// The bounded read pool of the key index store: at most `concurrency` reads in flight, results in
// the items' order however the reads finish, and a failure surfaces in turn without being reported
// as unhandled meanwhile.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { inOrder } from "#src/pipeline/key-index-store.ts";

test("inOrder reads ahead at most `concurrency` items and yields in order", async () => {
  let inFlight = 0;
  let most = 0;
  const items = Array.from({ length: 20 }, (_, i) => i);
  const out: number[] = [];
  for await (const value of inOrder(items, 3, async (i) => {
    inFlight++;
    most = Math.max(most, inFlight);
    await sleep((i * 7) % 5);
    inFlight--;
    return i * 10;
  })) {
    out.push(value);
  }
  assert.deepEqual(
    out,
    items.map((i) => i * 10),
  );
  assert.equal(most, 3);
});

test("inOrder: a failing read ahead surfaces when its turn comes", async () => {
  const seen: number[] = [];
  await assert.rejects(async () => {
    for await (const value of inOrder([0, 1, 2, 3], 4, async (i) => {
      if (i === 2) throw new Error("read 2 failed");
      await sleep(5);
      return i;
    })) {
      seen.push(value);
    }
  }, /read 2 failed/);
  assert.deepEqual(seen, [0, 1]);
});
