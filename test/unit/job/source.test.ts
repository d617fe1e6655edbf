// The source's rules (servers, security protocol, SASL, TLS): checked once, where the job file is
// validated, each with its YAML path and line. kafka/ took the same rules again before; it now
// takes its options as given, and these are the only place that refuses them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "#src/job/config-error.ts";
import { jobFileJsonSchema } from "#src/job/job-schema.ts";
import { parseJob } from "#src/job/load-job.ts";
import { SASL_MECHANISMS, SECURITY_PROTOCOLS } from "#src/kafka/security.ts";

const job = (kafka: string) =>
  `name: j\nsource:\n  kafka:\n    topic_pattern: orders\n${kafka}destination: {iceberg: {catalog: {type: sql}}}\n`;

/** `line: path: message` of each problem. */
function problems(text: string): string[] {
  try {
    parseJob(text, "job.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map((i) => `${i.line}: ${i.path.join(".")}: ${i.message}`);
  }
  assert.fail("expected a ConfigError");
}

test("bootstrap servers are host:port, an IPv6 host in brackets; at least one", () => {
  assert.deepEqual(problems(job("    bootstrap_servers: [k]\n")), [
    "5: source.kafka.bootstrap_servers.0: expected host:port (an IPv6 host in brackets: [::1]:9092)",
  ]);
  assert.deepEqual(problems(job("    bootstrap_servers: ['::1:9092']\n")), [
    "5: source.kafka.bootstrap_servers.0: expected host:port (an IPv6 host in brackets: [::1]:9092)",
  ]);
  assert.deepEqual(problems(job("    bootstrap_servers: []\n")), [
    "5: source.kafka.bootstrap_servers: list at least one broker",
  ]);
  const parsed = parseJob(job("    bootstrap_servers: '[::1]:9092, k2:9093'\n"), "job.yaml");
  assert.deepEqual(parsed.source.bootstrapServers, ["[::1]:9092", "k2:9093"]);
});

test("a SASL protocol needs sasl:, and sasl: or tls: where the protocol ignores them is an error", () => {
  const sasl = "    sasl: {mechanism: PLAIN, username: u, password: p}\n";
  assert.deepEqual(problems(job("    bootstrap_servers: [k:1]\n    security: {protocol: SASL_PLAINTEXT}\n")), [
    "3: source.kafka.sasl: required when security.protocol is SASL_PLAINTEXT",
  ]);
  assert.deepEqual(problems(job(`    bootstrap_servers: [k:1]\n${sasl}`)), [
    "6: source.kafka.sasl: only used with security.protocol SASL_PLAINTEXT or SASL_SSL, and it is PLAINTEXT",
  ]);
  assert.deepEqual(
    problems(job(`    bootstrap_servers: [k:1]\n    security: {protocol: SASL_PLAINTEXT}\n${sasl}    tls: {}\n`)),
    ["8: source.kafka.tls: only used with security.protocol SSL or SASL_SSL, and it is SASL_PLAINTEXT"],
  );
  const ssl = parseJob(job("    bootstrap_servers: [k:1]\n    security: {protocol: SSL}\n"), "/jobs/job.yaml");
  assert.deepEqual(ssl.source.security, {
    protocol: "SSL",
    tls: { ca: undefined, clientCertificate: undefined, insecureSkipVerify: false },
  });
});

test("SASL: a known mechanism, a username and a password", () => {
  const text = job(
    "    bootstrap_servers: [k:1]\n    security: {protocol: SASL_SSL}\n    sasl: {mechanism: GSSAPI, username: '', password: ''}\n",
  );
  assert.deepEqual(problems(text), [
    `7: source.kafka.sasl.mechanism: expected ${SASL_MECHANISMS.join(" | ")}, got "GSSAPI"`,
    "7: source.kafka.sasl.username: must not be empty",
    "7: source.kafka.sasl.password: must not be empty",
  ]);
});

test("TLS: cert and key come together", () => {
  assert.deepEqual(
    problems(job("    bootstrap_servers: [k:1]\n    security: {protocol: SSL}\n    tls: {key: k.pem}\n")),
    ["7: source.kafka.tls.cert: cert and key go together (mutual TLS)"],
  );
});

test("the protocols and mechanisms of the job file are kafka/'s", () => {
  const text = JSON.stringify(jobFileJsonSchema());
  assert.ok(text.includes(JSON.stringify(SECURITY_PROTOCOLS)), "security.protocol");
  assert.ok(text.includes(JSON.stringify(SASL_MECHANISMS)), "sasl.mechanism");
});
