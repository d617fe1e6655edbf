// Maintenance through `floe serve`'s API, against the real broker and REST catalog: a job's
// tables' health (files, average file size, deleted-row ratio, snapshots, last maintenance),
// Maintain now (a pass under the job's lock, recorded in the run history as a maintenance run),
// the tables reading the same rows in DuckDB, PyIceberg and Spark after it, and every JSON
// answer checked against the OpenAPI document.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTopics, producePhase } from "../../demo/seed-walkthrough.ts";
import { bootstrapServers } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { startUiServer, type UiClient } from "../helpers/ui-server.ts";

const run = `${process.pid}_${Date.now()}`;
const prefix = `apim${run}_`;
const name = `apim_${run}`;
const namespace = `${name}_topics`;

let ui: Awaited<ReturnType<typeof startUiServer>>;
let api: UiClient;
let readers: Readers;
before(async () => {
  ui = await startUiServer();
  api = ui.client;
  readers = await startReaders();
  await createTopics(prefix);
});
after(async () => {
  await readers?.close();
  await ui?.close();
});

const syncNow = () => api.syncNow(name);

test("health, Maintain now, and the run history's maintenance pass", async () => {
  await api.createRestUpsertJob({
    name,
    source: "local",
    destination: "rest",
    topic: `${prefix}customers`,
    table: "customers",
    bootstrapServers,
    restUri: restCatalog.uri,
  });
  await producePhase(1, prefix);
  await syncNow();
  await producePhase(2, prefix);
  await syncNow();

  const health = await api.get(`/api/jobs/${name}/health`);
  assert.equal(health.status, 200, health.text);
  const customers = health.body.tables.find((t: { table: string }) => t.table === "customers");
  assert.ok(customers, health.text);
  assert.equal(customers.dataFiles, 2);
  assert.equal(customers.deleteFiles, 1);
  assert.ok(customers.deletedRatio > 0 && customers.deletedRatio < 1);
  assert.ok(customers.averageFileBytes > 0);
  assert.equal(health.body.lastMaintenance, null);
  const model = await readers.rows("duckdb", restTable(namespace, "customers"), { orderBy: ["id"] });

  const pass = await api.post(`/api/jobs/${name}/maintain`);
  assert.equal(pass.status, 200, pass.text);
  assert.equal(pass.body.outcome, "complete", pass.text);
  const report = pass.body.tables.find((t: { table: string }) => t.table === `${namespace}.customers`);
  assert.equal(report.before.dataFiles, 2);
  assert.ok(report.after, pass.text);
  await readers.assertRows(restTable(namespace, "customers"), model, { orderBy: ["id"] });

  const after = await api.get(`/api/jobs/${name}/health`);
  assert.equal(after.body.lastMaintenance.runId, pass.body.runId);
  assert.equal(after.body.lastMaintenance.outcome, "complete");
  const runs = await api.get(`/api/jobs/${name}/runs`);
  assert.equal(runs.status, 200);
  assert.ok(
    runs.body.some((r: { id: string }) => r.id === pass.body.runId),
    runs.text,
  );
  assert.equal((await api.post(`/api/jobs/nope_${run}/maintain`)).status, 404);

  assert.ok((await api.checkAgainstOpenApi()) > 0);
});
