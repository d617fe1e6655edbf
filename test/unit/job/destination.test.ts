// The destination's rules (catalog credentials, Unity's, the Parquet codec): checked once,
// where the job file is validated, each with its YAML path and line. iceberg/catalog/unity.ts
// checked the Unity credential again before; its options now take one credential of a kind.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PARQUET_CODECS } from "#src/iceberg/parquet/compression-codec.ts";
import { ConfigError } from "#src/job/config-error.ts";
import { jobFileJsonSchema } from "#src/job/job-schema.ts";
import { parseJob } from "#src/job/load-job.ts";
import { Secret } from "#src/job/secret.ts";
import { catalogConfig } from "#src/pipeline/connect.ts";

const job = (iceberg: string) =>
  `name: j\nsource: {kafka: {bootstrap_servers: [k:1], topic_pattern: x}}\ndestination:\n  iceberg:\n${iceberg}`;
const unity = (credential: string) =>
  job(`    catalog: {type: unity, workspace_url: https://w.cloud.databricks.com, catalog: main${credential}}\n`);

function problems(text: string): string[] {
  try {
    parseJob(text, "job.yaml");
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map((i) => `${i.line}: ${i.path.join(".")}: ${i.message}`);
  }
  assert.fail("expected a ConfigError");
}

test("unity: a token, or a client id with its secret, never both, never neither", () => {
  assert.deepEqual(problems(unity("")), [
    "5: destination.iceberg.catalog.token: unity needs token, or client_id and client_secret",
  ]);
  assert.deepEqual(problems(unity(", token: t, client_id: a, client_secret: b")), [
    "5: destination.iceberg.catalog.token: give token or client_id + client_secret, not both",
  ]);
  assert.deepEqual(problems(unity(", client_id: a")), [
    "5: destination.iceberg.catalog.client_secret: required with client_id",
  ]);
  assert.deepEqual(problems(unity(", client_secret: b")), [
    "5: destination.iceberg.catalog.client_id: required with client_secret",
  ]);
});

test("unity's credential reaches iceberg/ as one of its two kinds, revealed only there", () => {
  const m2m = parseJob(unity(", client_id: sp, client_secret: sp-secret"), "job.yaml");
  assert.ok(m2m.destination.catalog.type === "unity");
  const credential = m2m.destination.catalog.credential;
  assert.ok("clientSecret" in credential && credential.clientSecret instanceof Secret);
  assert.deepEqual(catalogConfig(m2m.destination), {
    type: "unity",
    workspaceUrl: "https://w.cloud.databricks.com",
    catalog: "main",
    requestTimeoutMs: 30_000,
    credential: { clientId: "sp", clientSecret: "sp-secret" },
  });
  assert.deepEqual(catalogConfig(parseJob(unity(", token: dapi1"), "job.yaml").destination), {
    type: "unity",
    workspaceUrl: "https://w.cloud.databricks.com",
    catalog: "main",
    requestTimeoutMs: 30_000,
    credential: { token: "dapi1" },
  });
});

test("rest: the same credential rule, and OAuth2 settings only with a client id", () => {
  assert.deepEqual(problems(job("    catalog: {type: rest, uri: http://c:8181, client_secret: s, scope: x}\n")), [
    "5: destination.iceberg.catalog.client_id: required with client_secret",
    "5: destination.iceberg.catalog.scope: only used with client_id",
  ]);
  const oauth = parseJob(
    job("    catalog: {type: rest, uri: http://c:8181, client_id: a, client_secret: s}\n"),
    "j.yaml",
  );
  assert.deepEqual(catalogConfig(oauth.destination), {
    type: "rest",
    uri: "http://c:8181",
    requestTimeoutMs: 30_000,
    credential: { clientId: "a", clientSecret: "s", scope: undefined, oauth2ServerUri: undefined },
  });
});

test("compression: the codecs iceberg/ writes, and no other", () => {
  assert.deepEqual(problems(job("    compression: brotli\n")), [
    `5: destination.iceberg.compression: expected ${PARQUET_CODECS.join(" | ")}, got "brotli"`,
  ]);
  assert.equal(parseJob(job("    compression: lz4\n"), "j.yaml").destination.compression, "lz4");
  assert.ok(JSON.stringify(jobFileJsonSchema()).includes(JSON.stringify(PARQUET_CODECS)));
  assert.equal(parseJob(job("    compression: snappy\n"), "j.yaml").destination.compression, "snappy");
});
