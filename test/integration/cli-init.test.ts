// floe init against the real broker: the file it writes loads with the job loader and `floe
// check` passes on it; a second init refuses to overwrite, --force overwrites.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { loadJob } from "#src/job/load-job.ts";
import { produce, TestTopics } from "../../dev/kafka.ts";
import { floe } from "../helpers/floe-cli.ts";

const run = `init${process.pid}_${Date.now()}`;
const topics = new TestTopics(run);
const dir = mkdtempSync(join(tmpdir(), "floe-init-"));
let topic: string;

before(async () => {
  topic = await topics.create("events", 2);
  await produce(
    topic,
    Array.from({ length: 20 }, (_, i) => ({
      key: String(i),
      value: JSON.stringify({ id: i, at: "2026-10-29T15:22:04Z" }),
    })),
  );
});
after(async () => {
  await topics.deleteAll();
  rmSync(dir, { recursive: true, force: true });
});

test("init writes a job file for the local defaults that loads, and floe check passes on it against the broker", async () => {
  const folder = join(dir, "My-Shop");
  const written = await floe(["init", folder, "--topic-pattern", `^${topic}$`]);
  assert.equal(written.code, 0, written.stderr);
  const file = join(folder, "job.yaml");
  assert.match(written.stdout, /wrote .*job\.yaml \(job my_shop: Kafka at 127\.0\.0\.1:9092/);
  assert.match(
    written.stdout,
    /next steps:[\s\S]*floe check --config [\s\S]*floe discover --config [\s\S]*floe sync --config /,
  );

  const job = await loadJob(file, { env: {} });
  assert.equal(job.name, "my_shop");
  assert.deepEqual(job.source.bootstrapServers, ["127.0.0.1:9092"]);
  assert.deepEqual(job.destination.catalog, { type: "sql", warehouse: join(folder, "warehouse") });

  const check = await floe(["check", "--config", file, "--json"]);
  assert.equal(check.code, 0, check.stdout + check.stderr);
  const plan = JSON.parse(check.stdout);
  assert.deepEqual(
    plan.topics.map((t: { topic: string; table: string; mode: string }) => [t.topic, t.table, t.mode]),
    [[topic, topic.toLowerCase().replace(/[^a-z0-9_]/g, "_"), "append"]],
  );
  assert.equal(plan.messagesToRead, "20");
  assert.deepEqual(
    plan.topics[0].sample.columns.map((c: { name: string; type: string }) => [c.name, c.type]),
    [
      ["id", "long"],
      ["at", "timestamptz"],
    ],
  );
});

test("init writes nothing when its options give no valid job file (the job loader judges)", async () => {
  const folder = join(dir, "invalid");
  const bad = await floe(["init", folder, "--topic-pattern", "(", "--json"]);
  assert.equal(bad.code, 2);
  const { error, kind } = JSON.parse(bad.stdout);
  assert.equal(kind, "config");
  assert.match(error, /source\.kafka\.topic_pattern: not a regular expression/);
  assert.equal(existsSync(folder), false);
});

test("init leaves an existing file alone (exit 2) unless --force", async () => {
  const folder = join(dir, "existing");
  assert.equal((await floe(["init", folder])).code, 0);
  const file = join(folder, "job.yaml");
  writeFileSync(file, "# mine\n");
  const again = await floe(["init", folder, "--name", "other"]);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /job\.yaml exists; nothing was written \(--force overwrites it\)/);
  assert.equal(readFileSync(file, "utf8"), "# mine\n");
  const json = await floe(["init", folder, "--json"]);
  assert.equal(json.code, 2);
  assert.deepEqual(JSON.parse(json.stdout), {
    error: `${join(folder, "job.yaml")} exists; nothing was written (--force overwrites it)`,
    kind: "config",
    retryable: false,
  });

  const forced = await floe(["init", folder, "--force", "--name", "other", "--json"]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(JSON.parse(forced.stdout).name, "other");
  assert.equal((await loadJob(file, { env: {} })).name, "other");
  // init writes the file and nothing else: the warehouse comes with the first sync.
  assert.equal(existsSync(join(folder, "warehouse")), false);
});
