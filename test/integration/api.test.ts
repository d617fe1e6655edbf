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
import { schemaRegistry } from "../../dev/services/schema-registry.ts";
import { seaweedfs } from "../../dev/services/seaweedfs.ts";
import { type Json, startUiServer, type UiClient } from "../helpers/ui-server.ts";

const run = `${process.pid}_${Date.now()}`;
const prefix = `api${run}_`;
const name = `api_${run}`;
const namespace = `${name}_topics`;
const TOKEN = `catalog-token-${run}-never-shown`;
const PASSWORD = `kafka-password-${run}-never-shown`;
const WRONG_PASSWORD = `wrong-password-${run}-never-shown`;
const WRONG_CLIENT_SECRET = `wrong-client-secret-${run}-never-shown`;
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

  // SeaweedFS's catalog, a real server that refuses: wrong OAuth2 client credentials (401), no
  // credentials at all (its anonymous identity has no rights: 403), a warehouse it does not have.
  const seaweed = (name: string, catalog: Json) => ({
    name,
    iceberg: {
      catalog: { type: "rest", uri: seaweedfs.catalogUri, warehouse: `s3://${seaweedfs.tableBucket}`, ...catalog },
    },
  });
  const admin = { client_id: seaweedfs.accessKeyId, client_secret: seaweedfs.secretAccessKey };
  for (const [n, catalog] of [
    ["sw_ok", admin],
    ["sw_wrong_secret", { ...admin, client_secret: WRONG_CLIENT_SECRET }],
    ["sw_anonymous", {}],
    ["sw_no_warehouse", { ...admin, warehouse: `s3://floe-no-such-bucket-${process.pid}` }],
  ] as const) {
    const created = await api.post("/api/destinations", seaweed(n, catalog));
    assert.equal(created.status, 201, created.text);
  }
  const swOk = await api.post("/api/destinations/sw_ok/test");
  assert.equal(swOk.body.ok, true, swOk.text);
  const wrongSecret = await api.post("/api/destinations/sw_wrong_secret/test");
  assert.deepEqual([wrongSecret.body.ok, wrongSecret.body.kind], [false, "auth"], wrongSecret.text);
  assert.match(wrongSecret.body.message, /refused the client credentials \(HTTP 401.*check the client id and secret/);
  const anonymous = await api.post("/api/destinations/sw_anonymous/test");
  assert.deepEqual([anonymous.body.ok, anonymous.body.kind], [false, "auth"], anonymous.text);
  // The 403 names the privileges, on Unity Catalog the grants to add: rest-catalog.ts's one message, as floe check prints it.
  assert.match(
    anonymous.body.message,
    /denied it \(HTTP 403.*check the principal's privileges \(on Unity Catalog: USE CATALOG\)/,
  );
  const noWarehouse = await api.post("/api/destinations/sw_no_warehouse/test");
  assert.equal(noWarehouse.body.ok, false, noWarehouse.text);
  assert.match(noWarehouse.body.message, /table bucket floe-no-such-bucket-\d+ not found/);
  assert.equal(new Set([wrongSecret, anonymous, noWarehouse].map((r) => r.body.message)).size, 3);
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

  const first = await api.finishedRun((await api.post(`/api/jobs/${name}/sync`)).body.runId);
  assert.equal(first.status, "complete", JSON.stringify(first));
  assert.equal(first.messages, expected.after_phase1.records_read);

  await producePhase(2, prefix);
  const started = await api.post(`/api/jobs/${name}/sync`);
  assert.equal(started.status, 202);
  const second = await api.finishedRun(started.body.runId);
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
    ["every minute", "every hour", "every day", "every week", "continuous"],
  );
  assert.equal(preview.body.continuous, false);
  assert.deepEqual((await api.post("/api/schedule/preview", { schedule: "continuous" })).body.next, []);
  assert.equal((await api.post("/api/schedule/preview", { schedule: "continuous" })).body.continuous, true);
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
  const choices = (await api.get("/api/choices")).body;
  assert.deepEqual(choices.valueFormats, ["json", "avro", "protobuf", "json_schema"]);
  assert.deepEqual(choices.keyFormats, ["bytes", "avro", "protobuf", "json_schema"]);
  const athena = choices.targetEngines.find((e: Json) => e.engine === "athena");
  assert.deepEqual([choices.targetEngines.length, athena.deletionVectors], [10, false]);
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
    assert.deepEqual([a.bindings, a.namespace, a.consumerGroup], [b.bindings, b.namespace, b.consumerGroup]);
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

test("a source with a schema registry and Avro / Protobuf streams: the same job file after export and import, the password write-only", async () => {
  const registryName = `reg_${run}`;
  const source = await api.post("/api/sources", {
    name: registryName,
    kafka: {
      bootstrap_servers: [bootstrapServers],
      schema_registry: {
        url: schemaRegistry.authUrl,
        auth: { basic: { username: schemaRegistry.username, password: schemaRegistry.password } },
        tls: { ca: "/etc/ssl/certs/ca-certificates.crt" },
      },
    },
  });
  assert.equal(source.status, 201, source.text);
  assert.deepEqual(source.body.secrets_set, ["kafka.schema_registry.auth.basic.password"]);
  assert.equal(source.body.kafka.schema_registry.auth.basic.username, schemaRegistry.username);
  // An edit that leaves the password out keeps it, as long as the registry is reached the same
  // way (same URL, same trusted CA: a changed one asks for the password again).
  const edited = await api.put(`/api/sources/${registryName}`, {
    name: registryName,
    kafka: {
      bootstrap_servers: [bootstrapServers],
      schema_registry: {
        url: schemaRegistry.authUrl,
        auth: { basic: { username: schemaRegistry.username } },
        tls: { ca: "/etc/ssl/certs/ca-certificates.crt" },
      },
    },
  });
  assert.equal(edited.status, 200, edited.text);
  assert.deepEqual(edited.body.secrets_set, ["kafka.schema_registry.auth.basic.password"]);
  assert.equal(
    (ui.server.store.sourceDocument(registryName) as Json).kafka.schema_registry.auth.basic.password,
    schemaRegistry.password,
  );

  const job = await api.post("/api/jobs", {
    name: registryName,
    source: registryName,
    destination: "rest",
    streams: {
      [`${prefix}avro`]: { mode: "upsert", dedup_keys: ["_kafka_key.id"], format: "avro", key_format: "avro" },
      [`${prefix}proto`]: { mode: "append", format: "protobuf" },
    },
  });
  assert.equal(job.status, 201, job.text);
  const noRegistry = await api.post("/api/jobs", {
    name: `${registryName}_none`,
    source: "local",
    destination: "rest",
    streams: { [`${prefix}avro`]: { mode: "append", format: "avro" } },
  });
  assert.equal(noRegistry.status, 400);
  assert.match(noRegistry.body.issues[0].message, /need source\.kafka\.schema_registry/);

  const exported = await api.get(`/api/jobs/${registryName}/export`);
  assert.match(exported.text, /password: \$\{SOURCE_KAFKA_SCHEMA_REGISTRY_AUTH_BASIC_PASSWORD\}/);
  assert.ok(!exported.text.includes(schemaRegistry.password));
  const other = await startUiServer();
  try {
    const imported = await other.client.post("/api/jobs/import", {
      yaml: exported.text
        .replace(["$", "{SOURCE_KAFKA_SCHEMA_REGISTRY_AUTH_BASIC_PASSWORD}"].join(""), schemaRegistry.password)
        .replace(TOKEN_VARIABLE, TOKEN),
    });
    assert.equal(imported.status, 201, imported.text);
    const [a, b] = [other.server.store.job(registryName), ui.server.store.job(registryName)];
    assert.deepEqual(a.source.schemaRegistry, b.source.schemaRegistry);
    assert.deepEqual(a.bindings, b.bindings);
    assert.equal((await other.client.get(`/api/jobs/${registryName}/export`)).text, exported.text);
    await other.client.checkAgainstOpenApi();
    for (const { path, answer } of other.client.answers) {
      assert.ok(!answer.text.includes(schemaRegistry.password), `${path} answered the registry password`);
    }
  } finally {
    await other.close();
  }
  assert.equal((await api.delete(`/api/jobs/${registryName}`)).status, 204);
});

test("no answer holds a secret, and every JSON answer matches the OpenAPI document", async () => {
  for (const { path, answer } of api.answers) {
    assert.ok(!answer.text.includes(TOKEN), `${path} answered the catalog token`);
    for (const secret of [
      PASSWORD,
      WRONG_PASSWORD,
      floeUser.password,
      WRONG_CLIENT_SECRET,
      seaweedfs.secretAccessKey,
      schemaRegistry.password,
    ]) {
      assert.ok(!answer.text.includes(secret), `${path} answered a Kafka password`);
    }
  }
  const checked = await api.checkAgainstOpenApi();
  assert.ok(checked > 30, `only ${checked} answers checked`);
});
