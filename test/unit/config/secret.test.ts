// Secrets never show in a printed or serialized job.
import assert from "node:assert/strict";
import { test } from "node:test";
import { inspect } from "node:util";
import { parseJob } from "../../../src/config/load-job.ts";
import { redactJob } from "../../../src/config/secret.ts";

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

test("passwords and client secrets are *** in inspect, JSON, strings and redactJob", () => {
  const job = parseJob(text, "job.yaml");
  for (const printed of [inspect(job, { depth: 10 }), JSON.stringify(job), `${JSON.stringify(redactJob(job))}`]) {
    assert.doesNotMatch(printed, /kafka-pass-1|oauth-secret-2/);
  }
  const redacted = redactJob(job) as {
    kafka: { security: { sasl: { password: string; username: string } } };
    iceberg: { catalog: { credential: { clientSecret: string; clientId: string } } };
  };
  assert.equal(redacted.kafka.security.sasl.password, "***");
  assert.equal(redacted.kafka.security.sasl.username, "floe");
  assert.equal(redacted.iceberg.catalog.credential.clientSecret, "***");
  assert.equal(redacted.iceberg.catalog.credential.clientId, "me");
  assert.equal(`${(job.kafka.security as { sasl: { password: unknown } }).sasl.password}`, "***");
});

test("a unity token is redacted too, and streams print as an object", () => {
  const job = parseJob(
    `name: j
source: {kafka: {bootstrap_servers: "k:1"}}
destination: {iceberg: {catalog: {type: unity, workspace_url: w, catalog: main, token: dapi-secret-3}}}
streams: {orders: {mode: append}}
`,
    "job.yaml",
  );
  const printed = JSON.stringify(redactJob(job));
  assert.doesNotMatch(printed, /dapi-secret-3/);
  assert.match(printed, /"streams":\{"orders":\{"mode":"append"/);
});
