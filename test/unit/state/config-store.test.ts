// The UI's config store: the job file's one schema validates what is stored, secrets are sealed
// at rest and never handed out, a refused change changes nothing, every change is audited, and
// a stored job exports to a job file that imports back to the same job.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { ConfigStore, StoreError } from "../../../src/state/config-store.ts";
import { SecretBox } from "../../../src/state/secret-box.ts";
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
  assert.equal(job.streams.get("customers")!.mode, "upsert");
  assert.equal(job.namespace, "shop_topics");
  const yaml = s.exportJob("shop");
  assert.ok(!yaml.includes(SECRET));
  assert.match(yaml, /password: \$\{SOURCE_KAFKA_SASL_PASSWORD\}/);
  const other = store().store;
  const imported = other.importJob(yaml.replace(PASSWORD_VARIABLE, "imported-secret"), "t");
  assert.equal(imported["name"], "shop");
  assert.deepEqual(other.job("shop").streams, job.streams);
  assert.equal(other.job("shop").maxThreads, 2);
});
