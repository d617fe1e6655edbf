// destination.iceberg.storage.s3 in the job file: parsed, secrets wrapped, checked together.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError } from "#src/job/config-error.ts";
import { parseJob } from "#src/job/load-job.ts";
import { tableFileIO } from "#src/pipeline/connect.ts";

const job = (storage: string) => `
name: j
source: {kafka: {bootstrap_servers: [k:9092], topic_pattern: x}}
destination:
  iceberg:
    catalog: {type: rest, uri: http://127.0.0.1:8181}
    storage: ${storage}
`;

test("static S3 settings with keys from the environment: secrets wrapped, printed as ***", () => {
  const parsed = parseJob(
    job(`{s3: {endpoint: "http://127.0.0.1:9000", region: us-east-1, path_style_access: true,
      access_key_id: "\${KEY}", secret_access_key: "\${SECRET}", session_token: "\${TOKEN}", request_checksums: when_required,
      part_size_bytes: 16777216}}`),
    "/j.yaml",
    { env: { KEY: "AKIA-test", SECRET: "very-secret", TOKEN: "session-secret" } },
  );
  const s3 = parsed.destination.storage?.s3;
  assert.equal(s3?.endpoint, "http://127.0.0.1:9000");
  assert.equal(s3?.credentials?.secretAccessKey.reveal(), "very-secret");
  assert.equal(s3?.requestChecksums, "when-required");
  assert.equal(s3?.partSizeBytes, 16 * 2 ** 20);
  const printed = JSON.stringify(parsed);
  assert.ok(!printed.includes("very-secret") && !printed.includes("session-secret"), printed);
  assert.ok(typeof tableFileIO(parsed.destination.storage) === "function");
});

test("no storage section: none in the job; keys come as a pair; parts of 5 MiB at least", () => {
  const plain = parseJob(job("{}").replace("    storage: {}\n", ""), "/j.yaml");
  assert.equal(plain.destination.storage, undefined);
  try {
    parseJob(
      job(`{s3: {access_key_id: a, session_token: t, part_size_bytes: 1024, endpoint: "ftp://x", bucket: b}}`),
      "/j.yaml",
    );
    assert.fail("expected a ConfigError");
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    const messages = error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    for (const expected of [
      "destination.iceberg.storage.s3.endpoint: expected an http(s) URL",
      "destination.iceberg.storage.s3.part_size_bytes: at least 5 MiB (5242880), S3's smallest part",
    ]) {
      assert.ok(messages.includes(expected), messages.join("\n"));
    }
    assert.ok(
      messages.some((m) => m.includes("bucket")),
      messages.join("\n"),
    );
  }
  try {
    parseJob(job("{s3: {access_key_id: a, session_token: t}}"), "/j.yaml");
    assert.fail("expected a ConfigError");
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    assert.deepEqual(
      error.issues.map((i) => `${i.path.join(".")}: ${i.message}`),
      ["destination.iceberg.storage.s3.secret_access_key: required with access_key_id"],
    );
  }
});
