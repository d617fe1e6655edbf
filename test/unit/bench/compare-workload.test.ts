// The comparison benchmark's model of its result tables (bench/compare/workload.ts): a wrong
// model would refuse right tables or accept wrong ones, so it is checked against a brute-force
// replay of the messages.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { test } from "node:test";
import { expected, idOf, workload } from "../../../bench/compare/workload.ts";
import { orderFields } from "../../../bench/orders.ts";

const w = workload(5000, 4, 150);

test("the first tenth of the messages bring the ids, and nine in ten of all messages update one", () => {
  strictEqual(w.keys, 500);
  const seen = new Set<number>();
  let updates = 0;
  for (let n = 0; n < w.messages; n++) {
    const id = idOf(n, w.keys);
    ok(id >= 0 && id < w.keys);
    if (seen.has(id)) updates++;
    seen.add(id);
  }
  strictEqual(seen.size, w.keys);
  strictEqual(updates, w.messages - w.keys);
});

test("an upsert table holds each id's last message; an append table every message", () => {
  const last = new Map<number, number>();
  const count = new Map<number, number>();
  for (let n = 0; n < w.messages; n++) {
    const id = idOf(n, w.keys);
    last.set(id, n);
    count.set(id, (count.get(id) ?? 0) + 1);
  }
  const upsert = expected(w, "upsert");
  deepStrictEqual([upsert.rows, upsert.ids], [w.keys, w.keys]);
  const append = expected(w, "append");
  deepStrictEqual([append.rows, append.ids], [w.messages, w.keys]);
  strictEqual(upsert.sample.size, 20);
  for (const [id, want] of upsert.sample) {
    deepStrictEqual(want, { latest: orderFields(last.get(id)!), rows: 1 });
    deepStrictEqual(append.sample.get(id), { latest: orderFields(last.get(id)!), rows: count.get(id)! });
  }
});

test("a pre-loaded table keeps the pre-loaded rows of the ids the topic does not bring", () => {
  const preloaded = expected(w, "upsert-preloaded", 2000);
  deepStrictEqual([preloaded.rows, preloaded.ids], [2000, 2000]);
  const untouched = [...preloaded.sample.keys()].filter((id) => id >= w.keys);
  strictEqual(untouched.length, 5);
  for (const id of untouched) deepStrictEqual(preloaded.sample.get(id)!.latest, orderFields(w.messages + id));
});
