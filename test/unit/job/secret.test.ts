// Secrets never show in a printed or serialized job.
import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";
import { parseJob } from "#src/job/load-job.ts";
import { Secret, unseal } from "#src/job/secret.ts";

const text = `name: j
source:
  kafka:
    bootstrap_servers: [k:9092]
    topic_pattern: orders
    security: {protocol: SASL_SSL}
    sasl: {mechanism: SCRAM-SHA-256, username: floe, password: kafka-pass-1}
destination:
  iceberg:
    catalog: {type: rest, uri: "http://c:8181", client_id: me, client_secret: oauth-secret-2}
`;

/** The job as plain data, Maps as objects: what a report or a log line of it would hold. */
const plain = (job: unknown) =>
  JSON.parse(JSON.stringify(job, (_key, value) => (value instanceof Map ? Object.fromEntries(value) : value)));

test("passwords and client secrets are *** in inspect, JSON and strings; the names stay", () => {
  const job = parseJob(text, "job.yaml");
  for (const printed of [inspect(job, { depth: 10 }), JSON.stringify(plain(job))]) {
    assert.doesNotMatch(printed, /kafka-pass-1|oauth-secret-2/);
  }
  const json = plain(job);
  assert.equal(json.source.security.sasl.password, "***");
  assert.equal(json.source.security.sasl.username, "floe");
  assert.equal(json.destination.catalog.credential.clientSecret, "***");
  assert.equal(json.destination.catalog.credential.clientId, "me");
  assert.ok(job.source.security.protocol === "SASL_SSL");
  assert.equal(`${job.source.security.sasl.password}`, "***");
});

test("a unity token is *** too, and the bindings print as an object", () => {
  const job = parseJob(
    `name: j
source: {kafka: {bootstrap_servers: "k:1"}}
destination: {iceberg: {catalog: {type: unity, workspace_url: w, catalog: main, token: dapi-secret-3}}}
streams: {orders: {mode: append}}
`,
    "job.yaml",
  );
  const printed = JSON.stringify(plain(job));
  assert.doesNotMatch(printed, /dapi-secret-3/);
  assert.match(printed, /"bindings":\{"orders":\{"mode":"append"/);
});

test("unseal reveals the Secrets of a credential and keeps its other fields", () => {
  const credential = { clientId: "me", clientSecret: new Secret("s"), scope: "all-apis" };
  assert.deepEqual(unseal<{ clientId: string; clientSecret: string; scope: string }>(credential), {
    clientId: "me",
    clientSecret: "s",
    scope: "all-apis",
  });
});
