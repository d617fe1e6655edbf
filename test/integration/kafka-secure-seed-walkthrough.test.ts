// The seed walkthrough over SASL_SSL with SCRAM-SHA-512, as a managed cluster (MSK, Confluent
// Cloud) is reached: the broker's certificate verified against the test CA, the principal allowed
// only Read and Describe on the walkthrough's topics (one prefixed ACL, as admins grant a tool
// its topics) and Read on its group. Two syncs, and every figure of
// demo/seed-walkthrough/expected.json read back through DuckDB, PyIceberg and Spark.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parseJob } from "#src/job/load-job.ts";
import { createTopics, producePhase } from "../../demo/seed-walkthrough.ts";
import { floeUser, grantAcls, principalOf, secureAdmin, sourceYaml } from "../../dev/kafka-secure.ts";
import { type Readers, restTable, startReaders, testRestCatalog } from "../../dev/readers.ts";
import { assertSeedWalkthrough, engineReaders, seedWalkthroughJobYaml } from "../../dev/seed-walkthrough.ts";
import { syncJob } from "../helpers/sync-job.ts";

const run = `${process.pid}_${Date.now()}`;
const prefix = `secseed${run}_`;
const name = `secseed_${run}`;
const namespace = `${name}_topics`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-secure-seed-"));

const job = parseJob(
  seedWalkthroughJobYaml({
    name,
    prefix,
    kafka: `${sourceYaml({ protocol: "SASL_SSL", mechanism: "SCRAM-SHA-512" })}`,
    iceberg: `    catalog: {type: rest, uri: ${testRestCatalog.uri}}
    target_engines: [databricks, duckdb, spark]`,
  }),
  join(stateDir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await createTopics(prefix, secureAdmin);
  await grantAcls(principalOf(floeUser), [
    { topic: prefix, prefixed: true, operations: ["Read", "Describe"] },
    { group: `floe_${name}`, operations: ["Read"] },
  ]);
});
after(() => readers?.close());

test("seed walkthrough over SASL_SSL SCRAM-SHA-512: two syncs reproduce expected.json in DuckDB, PyIceberg and Spark", async () => {
  const target = { namespace, readers: engineReaders(readers, restTable, namespace) };
  await producePhase(1, prefix, secureAdmin);
  await assertSeedWalkthrough(1, await syncJob(job, { stateDir }), target);
  await producePhase(2, prefix, secureAdmin);
  await assertSeedWalkthrough(2, await syncJob(job, { stateDir }), target);

  // The group's offsets were committed over SASL_SSL too: a third sync reads nothing.
  const third = await syncJob(job, { stateDir });
  assert.equal(third.messagesRead, 0);
});
