// The UI's config store: the job file's one schema validates what is stored, secrets are sealed
// at rest and never handed out, a refused change changes nothing, every change is audited, and
// a stored job exports to a job file that imports back to the same job.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, test } from "node:test";
import { ConfigStore, StoreError } from "#src/state/config-store.ts";
import { SecretBox } from "#src/state/secret-box.ts";
import type { Json } from "../../helpers/ui-server.ts";

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function store(): { store: ConfigStore; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "floe-store-"));
  dirs.push(dir);
  return { store: new ConfigStore(dir, SecretBox.open(dir, {})), dir };
}

const PASSWORD_VARIABLE = ["$", "{SOURCE_KAFKA_SASL_PASSWORD}"].join("");
const SECRET = "pa55-word-that-must-never-show";
const saslSource = {
  name: "secure",
  kafka: {
    bootstrap_servers: ["127.0.0.1:9092"],
    security: { protocol: "SASL_PLAINTEXT" },
    sasl: { mechanism: "PLAIN", username: "alice", password: SECRET },
  },
};

test("the key file is created with mode 0600 and seals with AES-256-GCM (a changed byte fails)", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-key-"));
  dirs.push(dir);
  const box = SecretBox.open(dir, {});
  assert.equal(statSync(join(dir, "secret.key")).mode & 0o777, 0o600);
  const sealed = box.seal("hello");
  assert.notEqual(box.seal("hello"), sealed, "a fresh IV per value");
  assert.equal(SecretBox.open(dir, {}).open(sealed), "hello");
  const raw = Buffer.from(sealed.slice(3), "base64");
  raw[raw.length - 1]! ^= 1;
  assert.throws(() => box.open(`v1:${raw.toString("base64")}`), /does not decrypt/);
  const fromEnv = SecretBox.open(dir, { FLOE_SECRET_KEY: Buffer.alloc(32, 7).toString("base64") });
  assert.throws(() => fromEnv.open(sealed), /does not decrypt/);
});

test("secrets are sealed at rest, never shown, kept on an update that leaves them out", () => {
  const { store: s, dir } = store();
  const shown = s.save("source", saslSource, "tester");
  assert.deepEqual(shown.secrets_set, ["kafka.sasl.password"]);
  assert.ok(!JSON.stringify(shown).includes(SECRET));
  assert.ok(!JSON.stringify(s.list("source")).includes(SECRET));
  const db = readFileSync(join(dir, "config.db"));
  assert.ok(!db.includes(Buffer.from(SECRET)), "the database holds the password in clear");
  const { password: _, ...withoutPassword } = saslSource.kafka.sasl;
  s.save("source", { ...saslSource, kafka: { ...saslSource.kafka, sasl: withoutPassword } }, "tester", "secure");
  assert.equal(
    s.sourceDocument("secure")["kafka"] && (s.sourceDocument("secure")["kafka"] as Json).sasl.password,
    SECRET,
  );
  assert.deepEqual(
    s.auditLog().map((a) => [a.action, a.kind, a.name, a.actor]),
    [
      ["update", "source", "secure", "tester"],
      ["create", "source", "secure", "tester"],
    ],
  );
});

test("a bad field is a 400 naming it, and nothing is written", () => {
  const { store: s } = store();
  assert.throws(
    () => s.save("source", { name: "x", kafka: { bootstrap_servers: ["nope"] } }, "t"),
    (e: unknown) => e instanceof StoreError && e.status === 400 && e.issues[0]!.path === "kafka.bootstrap_servers.0",
  );
  s.save("source", { name: "src", kafka: { bootstrap_servers: ["127.0.0.1:9092"] } }, "t");
  s.save("destination", { name: "dst", iceberg: { catalog: { type: "sql" } } }, "t");
  assert.throws(
    () => s.save("job", { name: "j", source: "src", destination: "dst", streams: { t: { mode: "upsert" } } }, "t"),
    (e: unknown) => e instanceof StoreError && e.issues.some((i) => i.path === "streams.t.dedup_keys"),
  );
  assert.throws(
    () => s.save("job", { name: "j", source: "nosuch", destination: "dst", streams: { t: { mode: "append" } } }, "t"),
    (e: unknown) => e instanceof StoreError && e.issues[0]!.path === "source",
  );
  assert.throws(
    () =>
      s.save(
        "job",
        {
          name: "j",
          source: "src",
          destination: "dst",
          target_engines: ["athena"],
          streams: { t: { mode: "upsert", dedup_keys: ["id"] } },
        },
        "t",
      ),
    (e: unknown) =>
      e instanceof StoreError && /athena/.test(e.issues[0]!.message) && e.issues[0]!.path === "target_engines.0",
  );
  assert.equal(s.list("job").length, 0);
  // A destination change that would break a job using it is refused too.
  s.save(
    "job",
    { name: "j", source: "src", destination: "dst", streams: { t: { mode: "upsert", dedup_keys: ["id"] } } },
    "t",
  );
  assert.throws(
    () =>
      s.save(
        "destination",
        { name: "dst", iceberg: { catalog: { type: "sql" }, target_engines: ["bigquery"] } },
        "t",
        "dst",
      ),
    (e: unknown) => e instanceof StoreError && /in job j/.test(e.issues[0]!.path),
  );
  assert.deepEqual(s.get("destination", "dst")["iceberg"], { catalog: { type: "sql" } });
  assert.throws(
    () => s.delete("source", "src", "t"),
    (e: unknown) => e instanceof StoreError && e.status === 409,
  );
});

test("a stored job is the job file's job, and exports to a job file that imports back", () => {
  const { store: s } = store();
  s.save("source", saslSource, "t");
  s.save("destination", { name: "dst", iceberg: { catalog: { type: "sql", warehouse: "./wh" } } }, "t");
  s.save(
    "job",
    {
      name: "shop",
      source: "secure",
      destination: "dst",
      schedule: "*/5 * * * *",
      max_threads: 2,
      streams: { customers: { mode: "upsert", dedup_keys: ["id"] }, orders: { mode: "append" } },
    },
    "t",
  );
  const job = s.job("shop");
  assert.equal(job.maxThreads, 2);
  assert.equal(job.bindings.get("customers")!.mode, "upsert");
  assert.equal(job.namespace, "shop_topics");
  const yaml = s.exportJob("shop");
  assert.ok(!yaml.includes(SECRET));
  assert.match(yaml, /password: \$\{SOURCE_KAFKA_SASL_PASSWORD\}/);
  const other = store().store;
  const imported = other.importJob(yaml.replace(PASSWORD_VARIABLE, "imported-secret"), "t");
  assert.equal(imported["name"], "shop");
  assert.deepEqual(other.job("shop").bindings, job.bindings);
  assert.equal(other.job("shop").maxThreads, 2);
});

test("a secret left out of an update is not kept when the host or URI it goes to changes: the update names it", () => {
  const { store: s } = store();
  s.save("source", saslSource, "t");
  // Same host: the blank password is kept.
  const { password: _p, ...saslNoPassword } = saslSource.kafka.sasl;
  const sameHost = { ...saslSource, kafka: { ...saslSource.kafka, sasl: saslNoPassword, connect_timeout: "5s" } };
  assert.deepEqual(s.save("source", sameHost, "t", "secure").secrets_set, ["kafka.sasl.password"]);
  // Another host, password left blank: refused, nothing changed.
  const moved = { ...sameHost, kafka: { ...sameHost.kafka, bootstrap_servers: ["evil.example:9092"] } };
  assert.throws(
    () => s.save("source", moved, "t", "secure"),
    (e: unknown) => {
      assert.ok(e instanceof StoreError);
      assert.equal(e.status, 400);
      assert.equal(e.issues[0]!.path, "kafka.sasl.password");
      assert.match(e.issues[0]!.message, /kafka\.bootstrap_servers changed: enter password again/);
      return true;
    },
  );
  assert.deepEqual(s.get("source", "secure")["kafka"], { ...sameHost.kafka });
  // Another host with the password given again: saved.
  const again = { ...moved, kafka: { ...moved.kafka, sasl: { ...saslNoPassword, password: "another" } } };
  assert.deepEqual(s.save("source", again, "t", "secure").secrets_set, ["kafka.sasl.password"]);

  // Same host, another transport: TLS off or a PLAIN mechanism would show the kept password on the path.
  const tlsSource = {
    name: "tls_sasl",
    kafka: {
      bootstrap_servers: ["127.0.0.1:9093"],
      security: { protocol: "SASL_SSL" },
      sasl: { mechanism: "SCRAM-SHA-512", username: "alice", password: SECRET },
      tls: { ca: "/etc/floe/ca.pem" },
    },
  };
  s.save("source", tlsSource, "t");
  const blank = { mechanism: "SCRAM-SHA-512", username: "alice" };
  const edited = (kafka: Record<string, unknown>) => ({
    ...tlsSource,
    kafka: { ...tlsSource.kafka, sasl: blank, ...kafka },
  });
  assert.deepEqual(s.save("source", edited({ connect_timeout: "5s" }), "t", "tls_sasl").secrets_set, [
    "kafka.sasl.password",
  ]);
  for (const [change, named] of [
    [{ security: { protocol: "SASL_PLAINTEXT" }, tls: undefined }, /kafka\.security\.protocol/],
    [{ sasl: { ...blank, mechanism: "PLAIN" } }, /kafka\.sasl\.mechanism/],
    [{ tls: { ca: "/tmp/attacker-ca.pem" } }, /kafka\.tls\.ca/],
    [{ tls: { ca: "/etc/floe/ca.pem", insecure_skip_verify: true } }, /kafka\.tls\.insecure_skip_verify/],
  ] as const) {
    assert.throws(
      () => s.save("source", edited(change), "t", "tls_sasl"),
      (e: unknown) => e instanceof StoreError && e.issues[0]!.path === "kafka.sasl.password" && named.test(e.message),
      JSON.stringify(change),
    );
  }
  // An explicit default is no change.
  const same = edited({ tls: { ca: "/etc/floe/ca.pem", insecure_skip_verify: false } });
  assert.deepEqual(s.save("source", same, "t", "tls_sasl").secrets_set, ["kafka.sasl.password"]);

  const rest = (uri: string, extra: Record<string, unknown> = {}) => ({
    name: "cat",
    iceberg: { catalog: { type: "rest", uri, ...extra } },
  });
  s.save("destination", rest("https://catalog.example/api", { token: "tok" }), "t");
  assert.throws(
    () => s.save("destination", rest("https://attacker.example/api"), "t", "cat"),
    /iceberg\.catalog\.uri changed/,
  );
  const oauth = (extra: Record<string, unknown>) => ({
    name: "oauth",
    iceberg: { catalog: { type: "rest", uri: "https://catalog.example/api", client_id: "id", ...extra } },
  });
  s.save("destination", oauth({ client_secret: "cs" }), "t");
  s.save("destination", oauth({}), "t", "oauth");
  assert.throws(
    () => s.save("destination", oauth({ oauth2_server_uri: "https://evil.example/t" }), "t", "oauth"),
    /oauth2_server_uri changed: enter client_secret again/,
  );
  const s3 = (endpoint: string, secret?: string) => ({
    name: "store",
    iceberg: {
      storage: {
        s3: { endpoint, access_key_id: "AK", ...(secret === undefined ? {} : { secret_access_key: secret }) },
      },
    },
  });
  s.save("destination", s3("http://minio.internal:9000", "sk"), "t");
  s.save("destination", s3("http://minio.internal:9000"), "t", "store");
  assert.throws(
    () => s.save("destination", s3("http://elsewhere:9000"), "t", "store"),
    /storage\.s3\.endpoint changed/,
  );
  // A store without its own endpoint is reached where the catalog says (gcs.service.host, s3.endpoint,
  // the table locations): another catalog must not get the stored token sent to a host of its choosing.
  const gcs = (uri: string, token?: string) => ({
    name: "gcs_store",
    iceberg: {
      catalog: { type: "rest", uri },
      storage: { gcs: token === undefined ? {} : { oauth2_token: token } },
    },
  });
  s.save("destination", gcs("https://catalog.example/api", "ya29.stored-token"), "t");
  assert.deepEqual(s.save("destination", gcs("https://catalog.example/api"), "t", "gcs_store").secrets_set, [
    "iceberg.storage.gcs.oauth2_token",
  ]);
  assert.throws(
    () => s.save("destination", gcs("https://attacker.example/api"), "t", "gcs_store"),
    (e: unknown) =>
      e instanceof StoreError &&
      e.issues[0]!.path === "iceberg.storage.gcs.oauth2_token" &&
      /iceberg\.catalog\.uri changed/.test(e.message),
  );
});

test("a TLS private key is a sealed, write-only secret: not shown, not exported, kept on an update", () => {
  const { store: s, dir } = store();
  const KEY =
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC-never-shown\n-----END PRIVATE KEY-----\n";
  const tlsSource = {
    name: "mtls",
    kafka: {
      bootstrap_servers: ["127.0.0.1:9093"],
      security: { protocol: "SSL" },
      tls: { cert: "/etc/floe/client.pem", key: KEY },
    },
  };
  const saved = s.save("source", tlsSource, "t");
  assert.deepEqual(saved.secrets_set, ["kafka.tls.key"]);
  assert.equal(JSON.stringify(saved).includes("PRIVATE KEY"), false);
  assert.equal(readFileSync(join(dir, "config.db")).includes("never-shown"), false, "sealed at rest");
  assert.equal(s.sourceDocument("mtls")["kafka"] && (s.sourceDocument("mtls")["kafka"] as Json).tls.key, KEY);
  const { key: _k, ...tlsNoKey } = tlsSource.kafka.tls;
  s.save("source", { ...tlsSource, kafka: { ...tlsSource.kafka, tls: tlsNoKey } }, "t", "mtls");
  assert.equal((s.sourceDocument("mtls")["kafka"] as Json).tls.key, KEY, "kept when left out");
  s.save("destination", { name: "d", iceberg: {} }, "t");
  s.save("job", { name: "j", source: "mtls", destination: "d", topic_pattern: "x" }, "t");
  const exported = s.exportJob("j");
  assert.equal(exported.includes("PRIVATE KEY"), false);
  assert.match(exported, /key: \$\{SOURCE_KAFKA_TLS_KEY\}/);
});

test("a stored job's object stores get no ambient credentials unless the operator allows them", () => {
  const dir = mkdtempSync(join(tmpdir(), "floe-store-"));
  dirs.push(dir);
  const box = SecretBox.open(dir, {});
  const s = new ConfigStore(dir, box);
  s.save("source", { name: "src", kafka: { bootstrap_servers: ["127.0.0.1:9092"] } }, "t");
  s.save("destination", { name: "d", iceberg: {} }, "t");
  s.save("job", { name: "j", source: "src", destination: "d", topic_pattern: "x" }, "t");
  assert.equal(s.job("j").destination.storage?.ambientCredentials, false);
  s.close();
  const allowed = new ConfigStore(dir, box, { env: {}, allowed: new Set(), ambientCredentials: true });
  assert.equal(allowed.job("j").destination.storage?.ambientCredentials, undefined);
  allowed.close();
  // A service-account key file names one of the server's files: its token would go where the record says.
  const again = new ConfigStore(dir, box);
  const keyFile = { service_account_key_file: "/etc/gcp/server-sa.json", endpoint: "https://attacker.example/" };
  again.save("destination", { name: "g", iceberg: { storage: { gcs: keyFile } } }, "t");
  again.save("job", { name: "jg", source: "src", destination: "g", topic_pattern: "x" }, "t");
  assert.throws(
    () => again.job("jg"),
    (e: unknown) =>
      e instanceof StoreError &&
      e.issues[0]!.path === "destination.iceberg.storage.gcs.service_account_key_file" &&
      /--ambient-credentials/.test(e.message),
  );
  assert.throws(() => again.probeJob("destination", "g"), /service_account_key_file/);
  again.close();
  const operator = new ConfigStore(dir, box, { env: {}, allowed: new Set(), ambientCredentials: true });
  assert.equal(operator.job("jg").destination.storage?.gcs?.serviceAccountKeyFile, "/etc/gcp/server-sa.json");
  operator.close();
});

test("a sealed value in a request is refused: a ciphertext from a copy of config.db is not opened into a shown field", () => {
  const { store: s, dir } = store();
  s.save("source", saslSource, "t");
  const db = new DatabaseSync(join(dir, "config.db"));
  const row = db.prepare("SELECT doc FROM sources WHERE name = ?").get("secure") as { doc: string };
  db.close();
  const sealed = (JSON.parse(row.doc) as { kafka: { sasl: { password: unknown } } }).kafka.sasl.password;
  assert.ok(typeof sealed === "object" && sealed !== null && "$sealed" in sealed);
  // sasl.username is shown: stored as opened, the GET would answer the password in the clear.
  const planted = {
    ...saslSource,
    name: "decrypt",
    kafka: { ...saslSource.kafka, sasl: { ...saslSource.kafka.sasl, username: sealed } },
  };
  assert.throws(
    () => s.save("source", planted, "t"),
    (e: unknown) => e instanceof StoreError && e.status === 400 && e.issues[0]!.path === "kafka.sasl.username",
  );
  assert.equal(s.has("source", "decrypt"), false);
  const asPassword = {
    ...saslSource,
    name: "relay",
    kafka: { ...saslSource.kafka, sasl: { ...saslSource.kafka.sasl, password: sealed } },
  };
  assert.throws(() => s.probeUnsaved("source", asPassword), /kafka\.sasl\.password/);
  assert.throws(() => s.save("source", asPassword, "t", "secure"), /kafka\.sasl\.password/);
  // Kept secrets still work: an update that leaves the password out keeps the stored one.
  const { password: _p, ...rest } = saslSource.kafka.sasl;
  assert.deepEqual(
    s.save("source", { ...saslSource, kafka: { ...saslSource.kafka, sasl: rest } }, "t", "secure").secrets_set,
    ["kafka.sasl.password"],
  );
});
