// floe discover against the real broker, with the embedded catalog not yet created and with the
// REST catalog: the selected topics, their partitions' retained messages, the sampled columns
// (type, nullable, nulls, example; a secret-named field's value never printed), the skipped
// topics; and nothing written: no warehouse, no namespace, no table, no consumer group.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { describeGroup, readGroupOffsets } from "#src/kafka/commit-offsets.ts";
import { bootstrapServers, connectCluster, produce, TestTopics } from "../../dev/kafka.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { floe } from "../helpers/floe-cli.ts";

const run = `disc${process.pid}_${Date.now()}`;
const topics = new TestTopics(run);
const dir = mkdtempSync(join(tmpdir(), "floe-discover-"));
const secret = `hunter2-${run}`;
let orders: string;
let users: string;
let ignored: string;

before(async () => {
  orders = await topics.create("orders", 3);
  users = await topics.create("users");
  ignored = await topics.create("ignored");
  // 5, 10 and 15 messages in partitions 0, 1 and 2.
  const messages = [0, 1, 2].flatMap((partition) =>
    Array.from({ length: 5 * (partition + 1) }, (_, i) => ({
      key: `${partition}-${i}`,
      partition,
      value: JSON.stringify({
        id: partition * 100 + i,
        amount: i === 2 ? 12.5 : i,
        coupon: i % 2 === 0 ? null : "SPRING",
        password: secret,
        note: "x".repeat(300),
      }),
    })),
  );
  await produce(orders, messages);
  await produce(users, [
    { key: "1", value: JSON.stringify({ id: 1, email: "a@example.com", at: "2026-10-29T15:22:04Z" }) },
    { key: "2", value: "not json" },
  ]);
  await produce(ignored, [{ value: "{}" }]);
});
after(async () => {
  await topics.deleteAll();
  rmSync(dir, { recursive: true, force: true });
});

function jobFile(name: string, destination: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${name}
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    topic_pattern: ^${run}-(orders|users)$
destination:
  iceberg:
${destination}
streams:
  ${users}: {mode: upsert, dedup_keys: [id]}
`,
  );
  return file;
}

async function assertNoGroup(group: string) {
  const cluster = await connectCluster();
  try {
    assert.equal((await describeGroup(cluster, group)).exists, false, `consumer group ${group}`);
    assert.deepEqual(await readGroupOffsets(cluster, group), new Map());
  } finally {
    await cluster.close();
  }
}

test("discover --json on a job whose embedded warehouse does not exist yet: topics, partitions, columns; nothing written", async () => {
  const name = `${run}_embedded`;
  const file = jobFile(name, "    catalog: {type: sql, warehouse: ./warehouse_embedded}");
  const { code, stdout, stderr } = await floe(["discover", "--config", file, "--json", "--sample", "100"]);
  assert.equal(code, 0, stderr);
  assert.ok(!stdout.includes(secret), "the secret-named field's value is not printed");
  const d = JSON.parse(stdout);
  assert.equal(d.job, name);
  assert.equal(d.namespace, `${name}_topics`);
  assert.deepEqual(
    d.streams.map((s: { topic: string; table: string; mode: string; tableExists: boolean; retained: string }) => [
      s.topic,
      s.table,
      s.mode,
      s.tableExists,
      s.retained,
    ]),
    [
      [orders, `${name}_topics.${orders.replaceAll("-", "_")}`, "append", false, "30"],
      [users, `${name}_topics.${users.replaceAll("-", "_")}`, "upsert", false, "2"],
    ],
  );
  const [o, u] = d.streams;
  assert.deepEqual(
    o.partitions.map((p: Record<string, string>) => [p.partition, p.logStartOffset, p.highWatermark, p.retained]),
    [
      [0, "0", "5", "5"],
      [1, "0", "10", "10"],
      [2, "0", "15", "15"],
    ],
  );
  assert.equal(o.sample.messages, 30);
  const columns = Object.fromEntries(o.sample.columns.map((c: { name: string }) => [c.name, c]));
  assert.deepEqual(Object.keys(columns), ["id", "amount", "coupon", "password", "note"]);
  assert.deepEqual([columns.id.type, columns.id.nullable, columns.id.nulls], ["long", true, 0]);
  assert.equal(columns.amount.type, "double");
  assert.deepEqual([columns.coupon.type, columns.coupon.nulls, columns.coupon.example], ["string", 16, '"SPRING"']);
  assert.deepEqual([columns.password.hidden, columns.password.example], [true, undefined]);
  assert.equal(columns.note.example, `"${"x".repeat(79)}…`);
  assert.deepEqual(o.sample.proposedColumns, { amount: "double" });
  assert.deepEqual([u.sample.messages, u.sample.bad], [2, { "not-json": 1 }]);
  assert.deepEqual(
    u.sample.columns.map((c: { name: string; type: string }) => [c.name, c.type]),
    [
      ["id", "long"],
      ["email", "string"],
      ["at", "timestamptz"],
    ],
  );
  assert.ok(
    d.skipped.some(
      (s: { topic: string; reason: string }) => s.topic === ignored && s.reason === "does not match topic_pattern",
    ),
  );
  assert.ok(
    d.skipped.some(
      (s: { topic: string; reason: string }) => s.topic === "__consumer_offsets" && s.reason === "internal topic",
    ),
  );

  assert.equal(existsSync(join(dir, "warehouse_embedded")), false, "no warehouse, no catalog database");
  await assertNoGroup(`floe_${name}`);
});

test("discover as a table on the terminal's width, against the REST catalog: nothing created there either", async () => {
  const name = `${run}_rest`;
  const file = jobFile(name, `    catalog: {type: rest, uri: ${restCatalog.uri}}`);
  const { code, stdout, stderr } = await floe(["discover", "--config", file]);
  assert.equal(code, 0, stderr);
  assert.ok(!stdout.includes(secret));
  assert.match(stdout, new RegExp(`^${orders} -> ${name}_topics\\.\\S+ \\(append, will be created\\)$`, "m"));
  assert.match(stdout, /^ {2}3 partition\(s\), 30 messages retained, topic id \S+$/m);
  assert.match(stdout, /^ {4}partition {2}retained {2}log start {2}high watermark {2}to read$/m);
  assert.match(stdout, /^ +2 +15 +0 +15 +15$/m);
  assert.match(stdout, /^ {4}column +type +nullable +nulls +example$/m);
  assert.match(stdout, /^ {4}password +string +yes +0 +\(hidden\)$/m);
  assert.match(stdout, /^ {4}coupon +string +yes +16 +"SPRING"$/m);
  assert.match(stdout, /^ {4}note +string +yes +0 +"x{38}…$/m);
  assert.match(stdout, /^ {4}columns: \{amount: double\}$/m);
  assert.match(stdout, /^skipped \d+ topic\(s\), does not match topic_pattern: /m);
  assert.match(stdout, /^2 topic\(s\) selected on 127\.0\.0\.1:\d+ over PLAINTEXT, 32 messages retained$/m);

  const catalog = await connectRestCatalog({ uri: restCatalog.uri });
  try {
    assert.equal(await catalog.namespaceExists([`${name}_topics`]), false, "no namespace");
  } finally {
    await catalog.close();
  }
  await assertNoGroup(`floe_${name}`);

  // floe check samples the same messages and shows no example values at all.
  const check = await floe(["check", "--config", file, "--json"]);
  assert.equal(check.code, 0, check.stderr);
  assert.ok(!check.stdout.includes(secret), "floe check prints no sampled value");
});

test("discover: a bad --sample is a usage error, a job that selects nothing is a job-file error naming the pattern", async () => {
  const file = jobFile(`${run}_usage`, "    catalog: {type: sql, warehouse: ./warehouse_usage}");
  const usage = await floe(["discover", "--config", file, "--sample", "-1"]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /'--sample <messages>' argument '-1' is invalid. expected a whole number/);
  const none = join(dir, "none.yaml");
  writeFileSync(
    none,
    `name: none\nsource:\n  kafka:\n    bootstrap_servers: [${bootstrapServers}]\n    topic_pattern: ^${run}-nothing$\n`,
  );
  const failed = await floe(["discover", "--config", none, "--json"]);
  assert.equal(failed.code, 2, failed.stdout + failed.stderr);
  const { error, kind } = JSON.parse(failed.stdout);
  assert.equal(kind, "config");
  assert.match(error, new RegExp(`topic_pattern \\^${run}-nothing\\$ selects none of the`));
});
