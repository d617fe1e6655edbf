// How floe reaches the schema registry: basic auth, a bearer token and a wrong password; an
// https registry signed by a private CA, trusted through tls.ca or not at all.
import assert from "node:assert/strict";
import { test } from "node:test";
import { produce } from "../../dev/kafka.ts";
import { avroValue, avroWriter, registerSchema } from "../../dev/registry.ts";
import { schemaRegistry } from "../../dev/services/schema-registry.ts";
import type { JobFileData } from "../helpers/job-file.ts";
import { registrySuite, report } from "../helpers/registry-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const suite = registrySuite({ readers: false });
const { run, topics, stateDir, jobFor } = suite;

test("registry credentials: basic auth and a bearer token are sent; a wrong password fails the sync as auth without printing it", async () => {
  const topic = await topics.create("auth");
  const schema = { type: "record", name: "A", fields: [{ name: "n", type: "int" }] };
  const id = await registerSchema(`${topic}-value`, schema);
  await produce(topic, [{ key: "1", value: avroValue(id, avroWriter(schema), { n: 1 }) }]);
  const stream: JobFileData["streams"] = { [topic]: { mode: "append", format: "avro", table: "t" } };
  const basic = jobFor(`${run}_basic`, stream, {
    url: schemaRegistry.authUrl,
    auth: { basic: { username: schemaRegistry.username, password: schemaRegistry.password } },
  });
  assert.equal(report(await syncJob(basic, { stateDir }), "t").recordsAdded, 1);
  const bearer = jobFor(`${run}_bearer`, stream, {
    url: schemaRegistry.authUrl,
    auth: { bearer: { token: schemaRegistry.token } },
  });
  assert.equal(report(await syncJob(bearer, { stateDir }), "t").recordsAdded, 1);
  const wrong = jobFor(`${run}_wrong`, stream, {
    url: schemaRegistry.authUrl,
    auth: { basic: { username: "floe", password: "not-the-password-42" } },
  });
  let failed: unknown;
  await assert.rejects(
    syncJob(wrong, {
      stateDir,
      onEvent: (e) => {
        if (e.type === "failed") failed = e.error;
      },
    }),
    /HTTP 403/,
  );
  assert.equal((failed as { kind: string }).kind, "auth");
  assert.doesNotMatch(JSON.stringify(failed), /not-the-password-42/);
});

test("an https registry signed by a private CA: trusted through tls.ca; without it the sync fails as a config error naming the fix", async () => {
  const topic = await topics.create("tls");
  const schema = { type: "record", name: "T", fields: [{ name: "n", type: "int" }] };
  const id = await registerSchema(`${topic}-value`, schema);
  await produce(topic, [{ key: "1", value: avroValue(id, avroWriter(schema), { n: 7 }) }]);
  const stream: JobFileData["streams"] = { [topic]: { mode: "append", format: "avro", table: "t" } };
  const trusted = jobFor(`${run}_tls`, stream, { url: schemaRegistry.tlsUrl, tls: { ca: schemaRegistry.caFile } });
  assert.equal(report(await syncJob(trusted, { stateDir }), "t").recordsAdded, 1);
  const skip = jobFor(`${run}_tls_skip`, stream, { url: schemaRegistry.tlsUrl, tls: { insecure_skip_verify: true } });
  assert.equal(report(await syncJob(skip, { stateDir }), "t").recordsAdded, 1);
  const untrusted = jobFor(`${run}_tls_untrusted`, stream, { url: schemaRegistry.tlsUrl });
  let failed: { kind: string; message: string } | undefined;
  await assert.rejects(
    syncJob(untrusted, {
      stateDir,
      onEvent: (e) => {
        if (e.type === "failed") failed = e.error;
      },
    }),
    /certificate is not trusted .*set schema_registry.tls.ca/,
  );
  assert.equal(failed?.kind, "config");
});
