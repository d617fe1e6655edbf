// ${ENV_VAR} in job file values: substitution, escapes, and errors that name variable and path.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${...} in plain strings is the syntax under test
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "#src/job/config-error.ts";
import { interpolateEnv } from "#src/job/env-interpolation.ts";
import { parseJob } from "#src/job/load-job.ts";

test("references are replaced in every string value, nested and in lists", () => {
  const { value, issues } = interpolateEnv(
    { a: "${USER_NAME}", b: ["x-${PORT}-y", 3, true, null], c: { d: "pre ${USER_NAME}${PORT}" } },
    { USER_NAME: "floe", PORT: "9092" },
  );
  assert.deepEqual(issues, []);
  assert.deepEqual(value, { a: "floe", b: ["x-9092-y", 3, true, null], c: { d: "pre floe9092" } });
});

test("$${X} is the text ${X}; a lone $ is itself; values are not interpolated twice", () => {
  const { value, issues } = interpolateEnv({ a: "$${HOME} costs $5 ^orders$", b: "${V}" }, { V: "${HOME}" });
  assert.deepEqual(issues, []);
  assert.deepEqual(value, { a: "${HOME} costs $5 ^orders$", b: "${HOME}" });
});

test("a missing variable and a malformed reference name the path", () => {
  const { issues } = interpolateEnv(
    { s: { sasl: { password: "${KAFKA_PASSWORD}" } }, l: ["${bad name}", "${OPEN"] },
    {},
  );
  assert.deepEqual(issues, [
    { path: ["s", "sasl", "password"], message: "environment variable KAFKA_PASSWORD is not set" },
    { path: ["l", 0], message: "${bad name} is not a variable reference; write ${NAME}, or $${...} for the text" },
    { path: ["l", 1], message: "${OPEN is not a variable reference; write ${NAME}, or $${...} for the text" },
  ]);
});

test("in a job file, a missing variable is reported with its YAML path and line", () => {
  const text = `name: j
source:
  kafka:
    bootstrap_servers: [k:9092]
    topic_pattern: orders
    security: {protocol: SASL_PLAINTEXT}
    sasl: {mechanism: PLAIN, username: floe, password: "\${KAFKA_PASSWORD}"}
`;
  assert.throws(
    () => parseJob(text, "job.yaml", { env: {} }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(
        error.message,
        "job.yaml: invalid job file\n  job.yaml:7:56: source.kafka.sasl.password: environment variable KAFKA_PASSWORD is not set",
      );
      return true;
    },
  );
  const job = parseJob(text, "job.yaml", { env: { KAFKA_PASSWORD: "123" } });
  assert.ok(job.source.security.protocol === "SASL_PLAINTEXT");
  assert.equal(job.source.security.sasl.password.reveal(), "123");
});

test("with an allow-list (floe serve), only the allowed names are read; any other is an issue, its value never used", () => {
  const env = { FLOE_SECRET_KEY: "the-server-key", KAFKA_HOST: "broker.internal" };
  const { value, issues } = interpolateEnv(
    { kafka: { bootstrap_servers: ["${FLOE_SECRET_KEY}:9092", "${KAFKA_HOST}:9092"] } },
    env,
    new Set(["KAFKA_HOST"]),
  );
  assert.deepEqual(value, { kafka: { bootstrap_servers: ["${FLOE_SECRET_KEY}:9092", "broker.internal:9092"] } });
  assert.equal(issues.length, 1);
  assert.deepEqual(issues[0]!.path, ["kafka", "bootstrap_servers", 0]);
  assert.match(issues[0]!.message, /--allow-env FLOE_SECRET_KEY/);
  assert.ok(!JSON.stringify({ value, issues }).includes("the-server-key"));
});
