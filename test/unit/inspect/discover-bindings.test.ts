// Discovery over the in-memory cluster: the selected topics' partitions and retained messages,
// the sampled columns with nullability, nulls and examples (secret-named fields hidden), the
// skipped topics; with no catalog, and with a table the first sync made.
import assert from "node:assert/strict";
import { test } from "node:test";
import { discoverBindings, isSecretName } from "#src/inspect/discover-bindings.ts";
import { syncFixture } from "../pipeline/fixture.ts";

test("no catalog yet: every selected topic, its partitions' watermarks and retained messages, and its sampled columns", async () => {
  const f = await syncFixture({
    kafka: { topic_pattern: "^(orders|users)$" },
    streams: { users: { mode: "upsert", dedup_keys: ["id"] } },
  });
  try {
    f.source.createTopic("orders", 2).createTopic("users").createTopic("other").createTopic("__consumer_offsets");
    f.source.produce(
      "orders",
      Array.from({ length: 10 }, (_, i) => ({
        value: { id: i, amount: i === 3 ? 2.5 : i, note: i % 2 ? null : "n", api_key: "s3cr3t", long: "x".repeat(200) },
        partition: i % 2,
      })),
    );
    f.source.produce("users", [
      { value: { id: 1, passwordHash: "h" } },
      { value: "not json" },
      { key: "k", value: null },
    ]);
    const d = await discoverBindings(f.job, { source: f.source, catalog: undefined }, { sample: 100 });
    assert.equal(d.job, "unit");
    assert.equal(d.namespace, "unit_topics");
    assert.deepEqual(d.skipped, [
      { topic: "__consumer_offsets", reason: "internal topic" },
      { topic: "other", reason: "does not match topic_pattern" },
    ]);
    const [orders, users] = d.streams;
    assert.deepEqual(
      [orders!.topic, orders!.table, orders!.mode, orders!.tableExists, orders!.retained],
      ["orders", "unit_topics.orders", "append", false, 10n],
    );
    assert.deepEqual(
      orders!.partitions.map((p) => [p.partition, p.logStartOffset, p.highWatermark, p.retained, p.toRead]),
      [
        [0, 0n, 5n, 5n, 5n],
        [1, 0n, 5n, 5n, 5n],
      ],
    );
    assert.equal(orders!.topicId, f.source.topicId("orders"));
    assert.equal(orders!.sample.messages, 10);
    assert.deepEqual(
      orders!.sample.columns.map((c) => [c.name, c.type, c.nullable, c.nulls, c.example, c.hidden]),
      [
        ["id", "long", true, 0, "0", false],
        ["amount", "double", true, 0, "0", false],
        ["note", "string", true, 5, '"n"', false],
        ["api_key", "string", true, 0, undefined, true],
        ["long", "string", true, 0, `"${"x".repeat(79)}…`, false],
      ],
    );
    assert.deepEqual(orders!.sample.proposedColumns, { amount: "double" });
    assert.deepEqual(
      [users!.mode, users!.sample.messages, users!.sample.tombstones, users!.sample.bad],
      ["upsert", 3, 1, { "not-json": 1 }],
    );
    assert.deepEqual(
      users!.sample.columns.map((c) => [c.name, c.nulls, c.example, c.hidden]),
      [
        ["id", 0, "1", false],
        ["passwordHash", 0, undefined, true],
      ],
    );
    // Nothing was read as a sync reads: no group offsets.
    assert.equal(f.source.groups.size, 0);
  } finally {
    await f.close();
  }
});

test("after a sync: the table exists, its columns' types come from it, nothing is left to read, and the last messages are sampled", async () => {
  const f = await syncFixture({ streams: { a: { mode: "append" } } });
  try {
    f.source.createTopic("a");
    f.source.produce("a", [{ value: { id: 1 } }, { value: { id: 2, extra: true } }]);
    await f.sync();
    const d = await discoverBindings(f.job, { source: f.source, catalog: f.catalog }, { sample: 10 });
    const [a] = d.streams;
    assert.equal(a!.tableExists, true);
    assert.deepEqual(
      a!.partitions.map((p) => [p.retained, p.toRead]),
      [[2n, 0n]],
    );
    assert.deepEqual(
      a!.sample.columns.map((c) => [c.name, c.type, c.source, c.nulls]),
      [
        ["id", "long", "table", 0],
        ["extra", "boolean", "table", 1],
      ],
    );
    const none = await discoverBindings(f.job, { source: f.source, catalog: f.catalog }, { sample: 0 });
    assert.deepEqual(none.streams[0]!.sample.columns, []);
  } finally {
    await f.close();
  }
});

test("field names that say they hold a secret", () => {
  for (const name of [
    "password",
    "user_password",
    "passwordHash",
    "API_KEY",
    "apiKey",
    "api-key",
    "accessToken",
    "client.secret",
    "credentials",
    "private_key",
    "ssn",
  ]) {
    assert.equal(isSecretName(name), true, name);
  }
  for (const name of ["id", "amount", "passenger", "tokenizer_version", "secretary", "keyboard", "pass", "author"]) {
    assert.equal(isSecretName(name), false, name);
  }
});
