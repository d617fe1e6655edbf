// The seed walkthrough end to end against the real broker and the real REST catalog: two
// syncs, and every figure of demo/seed-walkthrough/expected.json read back through DuckDB,
// PyIceberg and Spark, plus the second sync's commit report.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parseJob } from "#src/job/load-job.ts";
import { createTopics, producePhase } from "../../demo/seed-walkthrough.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { assertSeedWalkthrough, engineReaders, seedWalkthroughJobYaml } from "../../dev/seed-walkthrough.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `${process.pid}_${Date.now()}`;
const prefix = `seed${run}_`;
const name = `seed_${run}`;
const namespace = `${name}_topics`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-seed-"));

const job = parseJob(
  seedWalkthroughJobYaml({
    name,
    prefix,
    iceberg: `    catalog: {type: rest, uri: ${restCatalog.uri}}
    target_engines: [databricks, duckdb, spark]`,
  }),
  join(stateDir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await createTopics(prefix);
});
after(() => readers?.close());

test("seed walkthrough: two syncs reproduce expected.json in DuckDB, PyIceberg and Spark", async () => {
  const target = { namespace, readers: engineReaders(readers, restTable, namespace) };
  await producePhase(1, prefix);
  await assertSeedWalkthrough(1, await syncJob(job, { stateDir }), target);
  await producePhase(2, prefix);
  await assertSeedWalkthrough(2, await syncJob(job, { stateDir }), target);

  // A third sync with nothing new reads nothing and changes nothing.
  const third = await syncJob(job, { stateDir });
  assert.equal(third.messagesRead, 0);
});
