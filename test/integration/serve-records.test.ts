// What a UI user's records can make `floe serve` do, against the server started as an operator
// starts it (a child process): a ${NAME} in a record reads nothing from the server's
// environment unless the operator allowed NAME (--allow-env), so Test connection cannot read the
// server's secret key back; the server refuses to connect to link-local and cloud-metadata
// hosts (checked before any connection, after DNS) in every route that connects (tests, discover,
// Sync now, table health, Maintain now), and reaches only --allow-hosts when given (a catalog's
// redirect elsewhere is not followed);
// a host that answers with a body that is no catalog's error does not get that body quoted.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${...} in plain strings is the syntax under test
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type ServeChild, serveExit, spawnServe } from "../helpers/serve-child.ts";
import { UiClient } from "../helpers/ui-server.ts";

const SERVER_KEY = "5e".repeat(32);
const INTERNAL = `internal-service-answer-${process.pid}-never-shown`;
const dirs: string[] = [];
let child: ServeChild;
let api: UiClient;
let internal: Server;

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "floe-serve-records-"));
  dirs.push(dir);
  return dir;
}

before(async () => {
  child = await spawnServe(
    ["--state-dir", tempDir(), "--listen", "127.0.0.1:0", "--no-auth", "--allow-env", "BROKER_HOST"],
    {
      FLOE_SECRET_KEY: SERVER_KEY,
      BROKER_HOST: "127.0.0.1",
      AWS_SECRET_ACCESS_KEY: "aws-secret-of-the-server",
    },
  );
  api = new UiClient(child.url);
  await api.session();
  // An internal service a UI user points a catalog URI at: it answers every request with its data.
  internal = createServer((_req, res) => res.writeHead(500, { "content-type": "text/plain" }).end(INTERNAL));
  await new Promise<void>((resolve) => internal.listen(0, "127.0.0.1", resolve));
});
after(async () => {
  await child?.stop();
  await new Promise((resolve) => internal?.close(resolve));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("a record's ${NAME} reads only the variables the operator allowed; Test connection never shows another", async () => {
  assert.equal(
    (await api.post("/api/sources", { name: "leak", kafka: { bootstrap_servers: ["${FLOE_SECRET_KEY}:9092"] } }))
      .status,
    201,
  );
  const leak = await api.post("/api/sources/leak/test");
  assert.equal(leak.status, 400, leak.text);
  assert.equal(leak.body.issues[0].path, "source.kafka.bootstrap_servers.0");
  assert.match(leak.body.issues[0].message, /--allow-env FLOE_SECRET_KEY/);
  assert.ok(!leak.text.includes(SERVER_KEY), leak.text);

  await api.post("/api/sources", {
    name: "user",
    kafka: {
      bootstrap_servers: ["127.0.0.1:1"],
      security: { protocol: "SASL_PLAINTEXT" },
      sasl: { mechanism: "PLAIN", username: "${AWS_SECRET_ACCESS_KEY}", password: "p" },
    },
  });
  const user = await api.post("/api/sources/user/test");
  assert.equal(user.status, 400, user.text);
  assert.ok(!user.text.includes("aws-secret-of-the-server"), user.text);

  // An allowed variable is substituted: the test reaches 127.0.0.1:1 (nothing listens there).
  await api.post("/api/sources", {
    name: "allowed",
    kafka: { bootstrap_servers: ["${BROKER_HOST}:1"], connect_timeout: "2s" },
  });
  const allowed = await api.post("/api/sources/allowed/test");
  assert.equal(allowed.status, 200, allowed.text);
  assert.deepEqual([allowed.body.ok, allowed.body.kind, allowed.body.reason], [false, "connection", "refused"]);
});

test("the server's own secrets cannot be allowed", async () => {
  const refused = await serveExit([
    "--state-dir",
    tempDir(),
    "--listen",
    "127.0.0.1:0",
    "--no-auth",
    "--allow-env",
    "FLOE_SECRET_KEY",
  ]);
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /--allow-env FLOE_SECRET_KEY: the server's own secret/);
});

test("link-local and metadata hosts are refused before connecting, in Test connection, discover and Sync now", async () => {
  await api.post("/api/sources", { name: "imds", kafka: { bootstrap_servers: ["169.254.169.254:80"] } });
  const test1 = await api.post("/api/sources/imds/test");
  assert.equal(test1.status, 403, test1.text);
  assert.deepEqual(test1.body.issues[0].path, "source.kafka.bootstrap_servers.0");
  assert.match(test1.body.issues[0].message, /link-local/);
  const discover = await api.post("/api/sources/imds/discover", {});
  assert.equal(discover.status, 403, discover.text);

  await api.post("/api/destinations", {
    name: "gce",
    iceberg: { catalog: { type: "rest", uri: "http://metadata.google.internal/computeMetadata/v1/" } },
  });
  const gce = await api.post("/api/destinations/gce/test");
  assert.equal(gce.status, 403, gce.text);
  assert.equal(gce.body.issues[0].path, "destination.iceberg.catalog.uri");
  // The metadata address inside IPv6, which new URL() rewrites as [::ffff:a9fe:a9fe].
  const mapped = await api.post("/api/destinations/test", {
    name: "mapped",
    iceberg: { catalog: { type: "rest", uri: "http://[::ffff:169.254.169.254]/latest/" } },
  });
  assert.equal(mapped.status, 403, mapped.text);
  assert.match(mapped.body.issues[0].message, /link-local/);
  await api.post("/api/destinations", {
    name: "s3meta",
    iceberg: {
      catalog: { type: "sql", warehouse: "s3://bucket/wh", uri: join(tempDir(), "c.db") },
      storage: { s3: { endpoint: "http://[fd00:ec2::254]/" } },
    },
  });
  await api.post("/api/sources", { name: "local", kafka: { bootstrap_servers: ["127.0.0.1:1"] } });
  const job = await api.post("/api/jobs", {
    name: "meta_job",
    source: "local",
    destination: "s3meta",
    topic_pattern: "x",
  });
  assert.equal(job.status, 201, job.text);
  const sync = await api.post("/api/jobs/meta_job/sync");
  assert.equal(sync.status, 403, sync.text);
  assert.equal(sync.body.issues[0].path, "destination.iceberg.storage.s3.endpoint");
});

test("a job's table health and Maintain now are refused a metadata host too, before any connection", async () => {
  await api.post("/api/destinations", {
    name: "s3meta_maint",
    iceberg: {
      catalog: { type: "sql", warehouse: "s3://bucket/wh", uri: join(tempDir(), "c.db") },
      storage: { s3: { endpoint: "http://169.254.169.254/" } },
    },
  });
  await api.post("/api/sources", { name: "local_maint", kafka: { bootstrap_servers: ["127.0.0.1:1"] } });
  const job = await api.post("/api/jobs", {
    name: "meta_maint",
    source: "local_maint",
    destination: "s3meta_maint",
    topic_pattern: "x",
  });
  assert.equal(job.status, 201, job.text);
  const health = await api.get("/api/jobs/meta_maint/health");
  assert.equal(health.status, 403, health.text);
  assert.equal(health.body.issues[0].path, "destination.iceberg.storage.s3.endpoint");
  const maintain = await api.post("/api/jobs/meta_maint/maintain");
  assert.equal(maintain.status, 403, maintain.text);
  assert.equal(maintain.body.issues[0].path, "destination.iceberg.storage.s3.endpoint");
});

test("a host that answers with something that is no catalog's error does not get its body quoted", async () => {
  const { port } = internal.address() as AddressInfo;
  await api.post("/api/destinations", {
    name: "internal",
    iceberg: { catalog: { type: "rest", uri: `http://127.0.0.1:${port}/` } },
  });
  const answer = await api.post("/api/destinations/internal/test");
  assert.equal(answer.body.ok, false, answer.text);
  assert.match(answer.text, /HTTP 500/);
  assert.ok(!answer.text.includes(INTERNAL), answer.text);
});

test("--allow-hosts: only the named hosts are reached", async () => {
  const strict = await spawnServe([
    "--state-dir",
    tempDir(),
    "--listen",
    "127.0.0.1:0",
    "--no-auth",
    "--allow-hosts",
    "localhost",
  ]);
  try {
    const client = new UiClient(strict.url);
    await client.session();
    await client.post("/api/sources", { name: "ip", kafka: { bootstrap_servers: ["127.0.0.1:1"] } });
    await client.post("/api/sources", {
      name: "named",
      kafka: { bootstrap_servers: ["localhost:1"], connect_timeout: "2s" },
    });
    const ip = await client.post("/api/sources/ip/test");
    assert.equal(ip.status, 403, ip.text);
    assert.match(ip.body.issues[0].message, /not in the hosts this server may reach/);
    const named = await client.post("/api/sources/named/test");
    assert.equal(named.status, 200, named.text);
  } finally {
    await strict.stop();
  }
});

test("a catalog's redirect is not followed to a host --allow-hosts does not name", async () => {
  // The catalog the user names is an allowed host; it points every request at one that is not.
  const hits: string[] = [];
  const elsewhere = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "content-type": "application/json" }).end("{}");
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
  const target = `http://localhost:${(elsewhere.address() as AddressInfo).port}`;
  const redirector = createServer((req, res) => res.writeHead(307, { location: `${target}${req.url}` }).end());
  await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
  const strict = await spawnServe([
    "--state-dir",
    tempDir(),
    "--listen",
    "127.0.0.1:0",
    "--no-auth",
    "--allow-hosts",
    "127.0.0.1",
  ]);
  try {
    const client = new UiClient(strict.url);
    await client.session();
    const { port } = redirector.address() as AddressInfo;
    const created = await client.post("/api/destinations", {
      name: "redirecting",
      iceberg: { catalog: { type: "rest", uri: `http://127.0.0.1:${port}/`, token: "catalog-token" } },
    });
    assert.equal(created.status, 201, created.text);
    const answer = await client.post("/api/destinations/redirecting/test");
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.ok, false, answer.text);
    assert.match(answer.text, /redirect \(HTTP 307\) to localhost/);
    assert.deepEqual(hits, [], "the host the redirect names was not reached");
  } finally {
    await strict.stop();
    await new Promise((resolve) => redirector.close(resolve));
    await new Promise((resolve) => elsewhere.close(resolve));
  }
});

test("a TLS key is write-only over the API, and one that is not PEM is not echoed by Test connection", async () => {
  const notPem = `MIIEvQ-not-pem-key-${process.pid}-never-shown`;
  const created = await api.post("/api/sources", {
    name: "mtls",
    kafka: {
      bootstrap_servers: ["127.0.0.1:1"],
      security: { protocol: "SSL" },
      // The certificate as PEM text: the key is the first file the connection reads.
      tls: { cert: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", key: notPem },
    },
  });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.body.secrets_set, ["kafka.tls.key"]);
  const shown = await api.get("/api/sources/mtls");
  assert.ok(!shown.text.includes(notPem), shown.text);
  const tested = await api.post("/api/sources/mtls/test");
  assert.ok(!tested.text.includes(notPem), tested.text);
  assert.match(tested.text, /security\.tls\.key/);
});

test("pointing a source at another host with its password left blank is refused at the password", async () => {
  await api.post("/api/sources", {
    name: "retarget",
    kafka: {
      bootstrap_servers: ["127.0.0.1:1"],
      security: { protocol: "SASL_PLAINTEXT" },
      sasl: { mechanism: "PLAIN", username: "u", password: "stored-password" },
    },
  });
  const moved = await api.put("/api/sources/retarget", {
    name: "retarget",
    kafka: {
      bootstrap_servers: ["127.0.0.2:1"],
      security: { protocol: "SASL_PLAINTEXT" },
      sasl: { mechanism: "PLAIN", username: "u" },
    },
  });
  assert.equal(moved.status, 400, moved.text);
  assert.equal(moved.body.issues[0].path, "kafka.sasl.password");
  assert.deepEqual((await api.get("/api/sources/retarget")).body.kafka.bootstrap_servers, ["127.0.0.1:1"]);
});

test("every JSON answer above matches the OpenAPI document", async () => {
  assert.ok((await api.checkAgainstOpenApi()) > 10);
});
