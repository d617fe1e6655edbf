// The seed walkthrough through SeaweedFS's own Iceberg REST catalog (dev/services/seaweedfs.ts),
// an implementation written independently of Apache Iceberg's: floe authenticates with OAuth2
// client credentials, the catalog creates the tables in its table bucket and vends STS keys
// narrowed to each table (in `config` and in `storage-credentials`), and floe writes data
// files, deletion vectors, manifests and manifest lists with those keys alone: the job file
// gives the endpoint and region and no keys, and no AWS credentials are in the environment.
// DuckDB, PyIceberg and Spark read the tables back through the same catalog and must see the
// walkthrough's figures (shared/scenarios/seed-walkthrough/expected.json).
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { parseJob } from "#src/job/load-job.ts";
import { createTopics, producePhase } from "../../demo/seed-walkthrough.ts";
import { type Readers, seaweedfsTable, startReaders } from "../../dev/readers.ts";
import { assertSeedWalkthrough, engineReaders, seedWalkthroughJobYaml } from "../../dev/seed-walkthrough.ts";
import { seaweedfs } from "../../dev/services/seaweedfs.ts";
import { syncJob } from "../helpers/sync-job.ts";

process.env.AWS_EC2_METADATA_DISABLED = "true";
// floe must write with what the catalog vends, not with keys of the environment.
for (const key of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"]) {
  delete process.env[key];
}

const run = `${process.pid}_${Date.now()}`;
const prefix = `swseed${run}_`;
const name = `swseed_${run}`;
const namespace = `${name}_topics`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-seaweedfs-seed-"));

let readers: Readers;
before(async () => {
  readers = await startReaders({ s3: true });
  await createTopics(prefix);
});
after(async () => {
  await readers?.close();
});

function job() {
  return parseJob(
    seedWalkthroughJobYaml({
      name,
      prefix,
      iceberg: `    catalog:
      type: rest
      uri: ${seaweedfs.catalogUri}
      warehouse: s3://${seaweedfs.tableBucket}
      client_id: ${seaweedfs.accessKeyId}
      client_secret: ${seaweedfs.secretAccessKey}
    target_engines: [databricks, duckdb, spark]
    storage:
      s3: {endpoint: ${seaweedfs.s3Endpoint}, region: ${seaweedfs.region}}`,
    }),
    join(stateDir, "job.yaml"),
  );
}

/** What SeaweedFS answers a loadTable that asks for vended credentials, as floe asks it. */
async function loadTableAnswer(table: string) {
  const tokenResponse = await fetch(`${seaweedfs.catalogUri}/v1/oauth/tokens`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: seaweedfs.accessKeyId,
      client_secret: seaweedfs.secretAccessKey,
    }),
  });
  assert.equal(tokenResponse.status, 200, await tokenResponse.clone().text());
  const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
  const response = await fetch(
    `${seaweedfs.catalogUri}/v1/${seaweedfs.tableBucket}/namespaces/${namespace}/tables/${table}`,
    {
      headers: { authorization: `Bearer ${token}`, "x-iceberg-access-delegation": "vended-credentials" },
    },
  );
  assert.equal(response.status, 200, await response.clone().text());
  return (await response.json()) as {
    metadata: { "format-version": number; location: string };
    config?: Record<string, string>;
    "storage-credentials"?: { prefix: string; config: Record<string, string> }[];
  };
}

test("seed walkthrough through SeaweedFS's catalog with the keys it vends: DuckDB, PyIceberg and Spark read expected.json", async () => {
  const target = { namespace, readers: engineReaders(readers, seaweedfsTable, namespace) };
  await producePhase(1, prefix);
  await assertSeedWalkthrough(1, await syncJob(job(), { stateDir }), target);
  await producePhase(2, prefix);
  await assertSeedWalkthrough(2, await syncJob(job(), { stateDir }), target);

  // The catalog serves the tables as v3 and vends keys for them in both places: the keys floe wrote with.
  for (const table of ["customers", "orders"]) {
    const answer = await loadTableAnswer(table);
    assert.equal(answer.metadata["format-version"], 3, `${table}: format-version`);
    assert.match(answer.config?.["s3.session-token"] ?? "", /./, `${table}: no session token in config`);
    const vended = answer["storage-credentials"]?.find((s) => answer.metadata.location.startsWith(s.prefix));
    assert.ok(vended?.config["s3.access-key-id"], `${table}: no storage-credentials for ${answer.metadata.location}`);
    assert.notEqual(vended.config["s3.access-key-id"], seaweedfs.accessKeyId, `${table}: the admin's own key`);
  }

  // A third sync with nothing new reads nothing and changes nothing.
  const third = await syncJob(job(), { stateDir });
  assert.equal(third.messagesRead, 0);
});
