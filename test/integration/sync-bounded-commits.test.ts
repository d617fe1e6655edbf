// A sync that commits in bounded batches (commit.max_messages): with a limit of one message,
// every fetched batch is its own commit, each with the offsets delivered so far; the tables
// still end with exactly one row per key (upsert) and one row per message (append).
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createTopic, produce } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { buildJob, committingEvery } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `bounded${process.pid}_${Date.now()}`;
const namespace = `${run}_topics`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-bounded-"));
const partitions = 3;

const job = buildJob(
  {
    name: run,
    kafka: { topic_pattern: `${run}_(latest|events)`, max_threads: 3 },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    streams: {
      [`${run}_latest`]: { mode: "upsert", dedup_keys: ["id"], table: "latest" },
      [`${run}_events`]: { mode: "append", table: "events" },
    },
  },
  join(stateDir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await createTopic(`${run}_latest`, partitions);
  await createTopic(`${run}_events`, partitions);
});
after(() => readers?.close());

test("commits every fetched batch when the limit is one message, and lands every row once", async () => {
  const latest = new Map<number, number>();
  let events = 0;
  for (let round = 1; round <= 3; round++) {
    for (let p = 0; p < partitions; p++) {
      const ids = Array.from({ length: 20 }, (_, i) => i * partitions + p);
      await produce(
        `${run}_latest`,
        ids.map((id) => ({ key: String(id), value: JSON.stringify({ id, round }), partition: p })),
      );
      await produce(
        `${run}_events`,
        ids.map((id) => ({ key: String(id), value: JSON.stringify({ id, round }), partition: p })),
      );
      for (const id of ids) latest.set(id, round);
      events += ids.length;
    }
  }
  const report = await syncJob(committingEvery(job, 1), { stateDir });
  assert.equal(report.status, "complete");
  assert.equal(report.messagesRead, 2 * events);

  const upserts = report.tables.find((t) => t.table === `${namespace}.latest`)!;
  assert.equal(upserts.messagesRead, events);
  const history = await readers.sql("spark", `SELECT snapshot_id FROM rest.${namespace}.latest.snapshots`);
  assert.ok(history.length >= partitions, `${history.length} snapshots: one commit per fetched batch`);

  await readers.assertRows(
    restTable(namespace, "latest"),
    [...latest].sort(([a], [b]) => a - b).map(([id, round]) => ({ id: BigInt(id), round: BigInt(round) })),
    { columns: ["id", "round"], orderBy: ["id"] },
  );
  const appended = await readers.rows("duckdb", restTable(namespace, "events"), { columns: ["id"] });
  assert.equal(appended.length, events);
  const again = await syncJob(committingEvery(job, 1), { stateDir });
  assert.equal(again.messagesRead, 0);
});
