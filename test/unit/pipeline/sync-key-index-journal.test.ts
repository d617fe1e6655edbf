// How a sync saves an upsert table's key index: a commit that changes few keys appends them to the
// index's journal and leaves the index file as it was; a commit whose changes would pass the
// journal's room (at least 1 MiB, 24 bytes per upserted key) writes the index whole and empties
// the journal, without holding the whole log meanwhile. In process, against the embedded catalog.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type SyncFixture, sortBy, syncFixture } from "./fixture.ts";

let f: SyncFixture;
const model = new Map<number, string>();
let indexFile = "";

before(async () => {
  f = await syncFixture({ streams: { accounts: { mode: "upsert", dedup_keys: ["id"] } } });
  f.source.createTopic("accounts", 2);
});
after(() => f.close());

async function syncOf(ids: number[], step: string) {
  f.source.produce(
    "accounts",
    ids.map((id) => ({ key: String(id), value: { id, v: `${id}@${step}` }, partition: id % 2 })),
  );
  for (const id of ids) model.set(id, `${id}@${step}`);
  const { report } = await f.sync();
  assert.equal(report.status, "complete", step);
  const rows = sortBy(await f.rows("accounts"), "id");
  assert.deepEqual(
    rows.map((r) => [Number(r.id), r.v]),
    [...model].sort(([a], [b]) => a - b),
    step,
  );
  return report;
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
const journal = () => (existsSync(`${indexFile}.journal`) ? readFileSync(`${indexFile}.journal`) : undefined);

test("small commits append to the journal; a commit past the journal's room writes the index whole", async () => {
  await syncOf(range(0, 1000), "first");
  const indexes = readdirSync(join(f.dir, "state"), { recursive: true, encoding: "utf8" }).filter((p) =>
    p.endsWith(".keyindex"),
  );
  assert.equal(indexes.length, 1, `one key index: ${indexes.join(", ")}`);
  indexFile = join(f.dir, "state", indexes[0]!);
  const first = readFileSync(indexFile);
  assert.equal(journal(), undefined, "a new index is written whole");

  await syncOf(range(500, 1000), "second");
  assert.deepEqual(readFileSync(indexFile), first, "the second commit does not rewrite the index file");
  const afterSecond = journal()?.length ?? 0;
  assert.ok(afterSecond > 1000 * 24, `the second commit appended its 1,000 keys (${afterSecond} bytes)`);

  // 50,000 upserts log 1.2 MB, past the 1 MiB the journal of a small index may take.
  await syncOf(range(0, 50_000), "large");
  assert.notDeepEqual(readFileSync(indexFile), first, "the large commit wrote the index whole");
  assert.equal(journal(), undefined, "writing whole emptied the journal");

  const whole = readFileSync(indexFile);
  const report = await syncOf(range(49_990, 20), "small after large");
  assert.deepEqual(readFileSync(indexFile), whole, "the next small commit appends again");
  assert.ok((journal()?.length ?? 0) > 0);
  assert.deepEqual(
    report.tables[0]?.keyIndex?.map((a) => a.how),
    ["loaded"],
  );
});
