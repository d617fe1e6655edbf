// The API of `floe serve` against the real broker and the real REST catalog: sources and
// destinations with Test connection, a job with an upsert and an append stream over the seed
// walkthrough's topics, Sync now twice, the run history with the walkthrough's commit report,
// the run's log, the tables (read back by DuckDB, PyIceberg and Spark, and previewed by floe),
// the plots' metrics, export and import; bad input refused with the field and nothing changed;
// no answer holding a secret; and every JSON answer checked against the OpenAPI document.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { createTopics, expected, producePhase } from "../../demo/seed-walkthrough.ts";
import { bootstrapServers } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { floeUser, ports as securePorts } from "../../dev/services/kafka-secure/config.ts";
import { type Json, startUiServer, type UiClient } from "../helpers/ui-server.ts";

const run = `${process.pid}_${Date.now()}`;
const prefix = `api${run}_`;
const name = `api_${run}`;
const namespace = `${name}_topics`;
const TOKEN = `catalog-token-${run}-never-shown`;
const PASSWORD = `kafka-password-${run}-never-shown`;
const WRONG_PASSWORD = `wrong-password-${run}-never-shown`;
const TOKEN_VARIABLE = ["$", "{DESTINATION_ICEBERG_CATALOG_TOKEN}"].join("");

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

async function waitForRun(id: string) {
  for (;;) {
    const r = await api.get(`/api/runs/${id}`);
    if (r.body.status !== "running") return r.body;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test("sources and destinations: create, Test connection with check's diagnosis, bad input named", async () => {
  const created = await api.post("/api/sources", { name: "local", kafka: { bootstrap_servers: [bootstrapServers] } });
  assert.equal(created.status, 201, created.text);
  const ok = await api.post("/api/sources/local/test");
  assert.equal(ok.body.ok, true, ok.text);

  await api.post("/api/sources", {
    name: "nobody",
    kafka: { bootstrap_servers: ["127.0.0.1:1"], connect_timeout: "2s" },
  });
  const down = await api.post("/api/sources/nobody/test");
  assert.equal(down.body.ok, false);
  assert.equal(down.body.kind, "connection", down.text);
  assert.equal(down.body.reason, "refused", down.text);
  assert.ok(down.body.hint.length > 0, down.text);

  const sasl = await api.post("/api/sources", {
    name: "with_password",
    kafka: {
      bootstrap_servers: [bootstrapServers],
      security: { protocol: "SASL_PLAINTEXT" },
      sasl: { mechanism: "PLAIN", username: "u", password: PASSWORD },
    },
  });
  assert.deepEqual(sasl.body.secrets_set, ["kafka.sasl.password"]);

  // The secure test broker: the right SCRAM password connects, a wrong one gets floe check's diagnosis.
  const secure = (name: string, password: string) => ({
    name,
    kafka: {
      bootstrap_servers: [`127.0.0.1:${securePorts.saslPlaintext()}`],
      security: { protocol: "SASL_PLAINTEXT" },
      sasl: { mechanism: "SCRAM-SHA-512", username: floeUser.username, password },
    },
  });
  assert.equal((await api.post("/api/sources", secure("secure_ok", floeUser.password))).status, 201);
  const secureOk = await api.post("/api/sources/secure_ok/test");
  assert.equal(secureOk.body.ok, true, secureOk.text);
  assert.equal((await api.post("/api/sources", secure("secure_wrong", WRONG_PASSWORD))).status, 201);
  const refused = await api.post("/api/sources/secure_wrong/test");
  assert.deepEqual(
    [refused.body.ok, refused.body.kind, refused.body.reason],
    [false, "auth", "authentication"],
    refused.text,
  );
  const bad = await api.post("/api/sources", { name: "bad", kafka: { bootstrap_servers: "not a host" } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.issues[0].path, "kafka.bootstrap_servers.0");
  const notJson = await api.call("POST", "/api/sources", "{oops", { "content-type": "application/json" });
  assert.equal(notJson.status, 400);
  assert.equal((await api.get("/api/sources")).body.length, 5, "a refused source is not stored");

  const rest = await api.post("/api/destinations", {
    name: "rest",
    iceberg: {
      catalog: { type: "rest", uri: restCatalog.uri, token: TOKEN },
      target_engines: ["databricks", "duckdb", "spark"],
    },
  });
  assert.equal(rest.status, 201, rest.text);
  assert.deepEqual(rest.body.secrets_set, ["iceberg.catalog.token"]);
  const reach = await api.post("/api/destinations/rest/test");
  assert.equal(reach.body.ok, true, reach.text);
  await api.post("/api/destinations", {
    name: "no_catalog",
    iceberg: { catalog: { type: "rest", uri: "http://127.0.0.1:1" } },
  });
  const unreachable = await api.post("/api/destinations/no_catalog/test");
  assert.equal(unreachable.body.ok, false);
  assert.equal(unreachable.body.kind, "connection", unreachable.text);
});

test("a job over the seed walkthrough: Sync now twice, history with the commit report, log, tables, preview", async () => {
  await producePhase(1, prefix);
  const discovered = await api.post("/api/sources/local/discover", { topic_pattern: `${prefix}(customers|orders)` });
  assert.deepEqual(
    discovered.body.topics.map((t: Json) => [t.topic, t.partitions.length, t.retained]),
    [
      [`${prefix}customers`, 1, 8],
      [`${prefix}orders`, 1, 40],
    ],
  );
  const nothing = await api.post("/api/sources/local/discover", { topic_pattern: `${prefix}no_such_topic` });
  assert.equal(nothing.status, 400, nothing.text);
  assert.match(nothing.body.error, /selects none of the/);
  const badPattern = await api.post("/api/sources/local/discover", { topic_pattern: "(" });
  assert.equal(badPattern.status, 400, badPattern.text);
  const id = discovered.body.topics[0].columns.find((c: Json) => c.name === "id");
  assert.deepEqual([id.type, id.example], ["long", "1"]);

  const noKeys = await api.post("/api/jobs", {
    name,
    source: "local",
    destination: "rest",
    streams: { [`${prefix}customers`]: { mode: "upsert" } },
  });
  assert.equal(noKeys.status, 400);
  assert.equal(noKeys.body.issues[0].path, `streams.${prefix}customers.dedup_keys`);
  const athena = await api.post("/api/jobs", {
    name,
    source: "local",
    destination: "rest",
    target_engines: ["duckdb", "athena"],
    streams: { [`${prefix}customers`]: { mode: "upsert", dedup_keys: ["id"] } },
  });
  assert.equal(athena.status, 400);
  assert.equal(athena.body.issues[0].path, "target_engines.1");

  const job = await api.post("/api/jobs", {
    name,
    source: "local",
    destination: "rest",
    schedule: "0 0 1 1 *",
    streams: {
      [`${prefix}customers`]: { mode: "upsert", dedup_keys: ["id"], table: "customers" },
      [`${prefix}orders`]: { mode: "append", table: "orders" },
    },
  });
  assert.equal(job.status, 201, job.text);

  const first = await waitForRun((await api.post(`/api/jobs/${name}/sync`)).body.runId);
  assert.equal(first.status, "complete", JSON.stringify(first));
  assert.equal(first.messages, expected.after_phase1.records_read);

  await producePhase(2, prefix);
  const started = await api.post(`/api/jobs/${name}/sync`);
  assert.equal(started.status, 202);
  const second = await waitForRun(started.body.runId);
  assert.equal(second.status, "complete");
  assert.equal(second.messages, expected.after_phase2.records_read);
  const customers = second.report.tables.find((t: Json) => t.table === `${namespace}.customers`);
  assert.deepEqual(
    [customers.dataFilesAdded, customers.deletionVectorsAdded, customers.recordsAdded, customers.positionsDeleted],
    [1, 1, expected.after_phase2.customers.added_records, expected.after_phase2.customers.deleted_positions],
  );
  const orders = second.report.tables.find((t: Json) => t.table === `${namespace}.orders`);
  assert.deepEqual([orders.dataFilesAdded, orders.deletionVectorsAdded, orders.recordsAdded], [1, 0, 8]);

  const history = await api.get(`/api/jobs/${name}/runs`);
  assert.deepEqual(
    history.body.map((r: Json) => [r.id, r.status]),
    [
      [second.id, "complete"],
      [first.id, "complete"],
    ],
  );
  const jobs = await api.get("/api/jobs");
  const row = jobs.body.find((j: Json) => j.name === name);
  assert.equal(row.lastRun.id, second.id);
  assert.equal(row.nextRun, `${new Date().getUTCFullYear() + 1}-01-01T00:00:00.000Z`);
  assert.equal(row.lag, 0, "measured after the run: nothing left to read");

  const log = await api.get(`/api/runs/${second.id}/logs`);
  assert.ok(
    log.body.some(
      (l: Json) =>
        l.level === "info" &&
        l.msg.startsWith(`committed ${namespace}.customers: 4 records added, 2 positions deleted`),
    ),
    JSON.stringify(log.body),
  );
  const errorsOnly = await api.get(`/api/runs/${second.id}/logs?errors=true`);
  assert.deepEqual(errorsOnly.body, []);
  const searched = await api.get(
    `/api/runs/${second.id}/logs?q=${encodeURIComponent(`COMMITTED ${namespace}.ORDERS`)}`,
  );
  assert.equal(searched.body.length, 1);
  const download = await api.get(`/api/runs/${second.id}/log.txt`);
  assert.match(download.headers.get("content-disposition") ?? "", /attachment/);
  assert.match(download.text, /INFO {2}run complete: 12 messages/);

  // What the UI shows of the tables is what the engines read.
  const tables = await api.get(`/api/jobs/${name}/tables`);
  const c = tables.body.find((t: Json) => t.name === "customers");
  assert.deepEqual([c.dataFiles, c.deletionVectors, c.records, c.snapshots.length, c.deadLetters], [2, 1, 10, 2, 0]);
  const preview = await api.get(`/api/jobs/${name}/tables/customers/preview?limit=50`);
  assert.equal(preview.body.liveRows, 10);
  assert.deepEqual(
    preview.body.rows.map((r: Json) => Number(r.id)).sort((a: number, b: number) => a - b),
    expected.after_phase2.customers.rows_by_id.map((r) => r.id),
  );
  const byId = new Map(preview.body.rows.map((r: Json) => [Number(r.id), r]));
  for (const e of expected.after_phase2.customers.rows_by_id) {
    const r = byId.get(e.id) as Json;
    assert.deepEqual([r.name, r.city, r.tier], [e.name, e.city, e.tier]);
  }
  await readers.assertRows(
    restTable(namespace, "customers"),
    expected.after_phase2.customers.rows_by_id.map((r) => ({ ...r, id: BigInt(r.id) })),
    { columns: ["id", "name", "city", "tier"], orderBy: ["id"] },
  );
  for (const engine of readers.engines) {
    const rows = await readers.rows(engine, restTable(namespace, "orders"), { columns: ["id"] });
    assert.equal(rows.length, 48, `${engine}: orders, one row per message`);
  }

  const metrics = await api.get(`/api/jobs/${name}/metrics`);
  assert.equal(metrics.body.runs.length, 2);
  assert.deepEqual(
    metrics.body.dataFiles.find((d: Json) => d.table === "customers").points.map((p: Json) => p.dataFiles),
    [1, 2],
  );
  assert.deepEqual(
    metrics.body.lag.filter((l: Json) => l.topic === `${prefix}customers`).map((l: Json) => l.lag),
    [8, 4],
  );
});

test("pause, resume, cancel, schedule preview, engine check; export and import the same job", async () => {
  const paused = await api.post(`/api/jobs/${name}/pause`);
  assert.deepEqual([paused.body.paused, paused.body.nextRun], [true, null]);
  const resumed = await api.post(`/api/jobs/${name}/resume`);
  assert.equal(resumed.body.paused, false);
  assert.notEqual(resumed.body.nextRun, null);
  assert.deepEqual((await api.post(`/api/jobs/${name}/cancel`)).body, { cancelled: false });

  const preview = await api.post("/api/schedule/preview", { schedule: "0 * * * *" });
  assert.equal(preview.body.next.length, 3);
  assert.equal(new Date(preview.body.next[1]).getTime() - new Date(preview.body.next[0]).getTime(), 3_600_000);
  assert.deepEqual(
    preview.body.presets.map((p: Json) => p.label),
    ["every minute", "every hour", "every day", "every week"],
  );
  assert.match((await api.post("/api/schedule/preview", { schedule: "61 * * * *" })).body.error, /minute/);
  const badSchedule = await api.put(`/api/jobs/${name}`, {
    ...(await api.get(`/api/jobs/${name}`)).body,
    secrets_set: undefined,
    schedule: "often",
  });
  assert.equal(badSchedule.status, 400);
  assert.equal(badSchedule.body.issues[0].path, "schedule");

  const dv = await api.post("/api/engines/check", { target_engines: ["duckdb", "spark"] });
  assert.deepEqual([dv.body.upsertAllowed, dv.body.reason], [true, null]);
  const noDv = await api.post("/api/engines/check", { target_engines: ["duckdb", "iceberg-rust"] });
  assert.equal(noDv.body.upsertAllowed, false);
  assert.match(noDv.body.reason, /iceberg-rust 0\.10 reads v3 tables but does not apply deletion vectors/);
  const unknownEngine = await api.post("/api/engines/check", { target_engines: ["excel"] });
  assert.equal(unknownEngine.status, 400);
  assert.equal(unknownEngine.body.issues[0].path, "target_engines.0");

  const exported = await api.get(`/api/jobs/${name}/export`);
  assert.equal(exported.status, 200);
  assert.match(exported.text, /token: \$\{DESTINATION_ICEBERG_CATALOG_TOKEN\}/);
  const other = await startUiServer();
  try {
    const imported = await other.client.post("/api/jobs/import", {
      yaml: exported.text.replace(TOKEN_VARIABLE, "another-token"),
    });
    assert.equal(imported.status, 201, imported.text);
    const [a, b] = [other.server.store.job(name), ui.server.store.job(name)];
    assert.deepEqual([a.streams, a.namespace, a.consumerGroup], [b.streams, b.namespace, b.consumerGroup]);
    const again = await other.client.post("/api/jobs/import", { yaml: exported.text });
    assert.equal(again.status, 409);
    assert.equal((await other.client.get("/api/sources")).body.length, 1, "a refused import creates nothing");
    await other.client.checkAgainstOpenApi();
  } finally {
    await other.close();
  }

  const inUse = await api.delete("/api/sources/local");
  assert.equal(inUse.status, 409);
  assert.equal((await api.delete(`/api/jobs/${name}`)).status, 204);
  assert.equal((await api.get(`/api/jobs/${name}`)).status, 404);
  const audit = await api.get("/api/audit");
  assert.ok(
    audit.body.some((a: Json) => a.action === "delete" && a.kind === "job" && a.name === name && a.actor === "local"),
  );
});

test("no answer holds a secret, and every JSON answer matches the OpenAPI document", async () => {
  for (const { path, answer } of api.answers) {
    assert.ok(!answer.text.includes(TOKEN), `${path} answered the catalog token`);
    for (const secret of [PASSWORD, WRONG_PASSWORD, floeUser.password]) {
      assert.ok(!answer.text.includes(secret), `${path} answered a Kafka password`);
    }
  }
  const checked = await api.checkAgainstOpenApi();
  assert.ok(checked > 30, `only ${checked} answers checked`);
});
