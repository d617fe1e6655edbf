// The JSON Schema of the job file, for editors and `floe config schema`.
import assert from "node:assert/strict";
import { test } from "node:test";
import { jobFileJsonSchema } from "#src/job/job-schema.ts";

test("the JSON Schema describes the job file's keys, enums and defaults in YAML's spelling", () => {
  const schema = jobFileJsonSchema() as {
    $schema: string;
    title: string;
    required: string[];
    additionalProperties: boolean;
    properties: Record<string, { properties?: Record<string, unknown> }>;
  };
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.equal(schema.title, "floe job file");
  assert.deepEqual(schema.required, ["name", "source"]);
  assert.equal(schema.additionalProperties, false);
  const text = JSON.stringify(schema);
  for (const key of [
    "bootstrap_servers",
    "dedup_keys",
    "on_error",
    "target_engines",
    "client_secret",
    "insecure_skip_verify",
  ]) {
    assert.ok(text.includes(`"${key}"`), key);
  }
  assert.ok(text.includes('"SCRAM-SHA-512"'));
  assert.ok(text.includes('"default":"./warehouse"'));
  JSON.parse(text);
});
