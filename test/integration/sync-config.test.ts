// `floe sync` as a user runs it: `node src/cli/main.ts sync --config job.yaml` in a child process,
// against the real broker, into the default embedded warehouse next to the job file (or the real
// REST catalog). Exit codes (src/cli/exit-codes.ts), the messages a user gets for a wrong job
// file, an empty topic selection and an engine that reads no deletion vectors, the --json
// report, secrets kept out of every output, and retention losses (a partition's next offset
// below the broker's log start offset: messages expired unread, never silent): exit 3 with the
// count per partition, and --accept-data-loss to go on with the loss reported.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Admin } from "@platformatic/kafka";
import { bootstrapServers, createTopic, deleteTopic, produce, type TestMessage } from "../../dev/kafka.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { type FloeOutcome, floe as runFloe } from "../helpers/floe-cli.ts";
import { type StreamSection, writeJobFile } from "../helpers/job-file.ts";

const run = `${process.pid}_${Date.now()}`;
const dir = mkdtempSync(join(tmpdir(), "floe-cli-"));

function floe(args: string[], env: Record<string, string> = {}): Promise<FloeOutcome> {
  return runFloe(args, { cwd: dir, env: { ...process.env, ...env }, timeoutMs: 120_000 });
}

/**
 * A job file written as text, for the tests whose subject is the text: the line and column of a
 * problem, YAML that does not parse, a secret as a YAML number, ${VAR} interpolation.
 */
function jobFile(name: string, text: string): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, text);
  return file;
}

/** A job over one topic into the embedded warehouse beside the job file. */
function simpleJob(name: string, topic: string, stream: StreamSection = { mode: "append" }): string {
  return writeJobFile(join(dir, `${name}.yaml`), {
    name,
    kafka: { topic_pattern: `^${topic}$`, max_threads: 2 },
    iceberg: { catalog: { type: "sql", warehouse: `./warehouse_${name}` } },
    streams: { [topic]: stream },
  });
}

const json = (value: unknown) => JSON.stringify(value);

test("--help and sync --help print usage and exit 0; an unknown option exits 2", async () => {
  const top = await floe(["--help"]);
  assert.equal(top.code, 0);
  assert.match(top.stdout, /Usage: floe/);
  assert.match(top.stdout, /sync/);
  const sync = await floe(["sync", "--help"]);
  assert.equal(sync.code, 0);
  assert.match(sync.stdout, /--config <file>/);
  assert.match(sync.stdout, /--accept-data-loss/);
  assert.match(sync.stdout, /Exit codes/);
  const wrong = await floe(["sync", "--config", "x.yaml", "--no-such-flag"]);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /unknown option '--no-such-flag'/);
  assert.equal((await floe(["sync"])).code, 2, "--config is required");
});

test("a bad job file exits 2 naming the file, the line and the YAML path of each problem", async () => {
  const file = jobFile(
    "bad_job",
    `name: bad_job
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    max_threads: many
streams:
  orders: {mode: upsert}
  payments: {mode: append, on_eror: fail}
`,
  );
  const outcome = await floe(["sync", "--config", file]);
  assert.equal(outcome.code, 2);
  assert.equal(outcome.stdout, "");
  assert.match(outcome.stderr, new RegExp(`${file}: 3 problems in job file`));
  assert.match(
    outcome.stderr,
    new RegExp(`${file}:5:18: source\\.kafka\\.max_threads: expected a number, got string "many"`),
  );
  assert.match(
    outcome.stderr,
    new RegExp(`${file}:7:\\d+: streams\\.orders\\.dedup_keys: required when mode is upsert`),
  );
  assert.match(outcome.stderr, new RegExp(`${file}:8:\\d+: streams\\.payments\\.on_eror: unknown key`));

  // Not YAML at all: the parser's line.
  const broken = jobFile("broken_job", "name: broken\nsource:\n  kafka: {bootstrap_servers: [a:1]\n");
  const b = await floe(["sync", "--config", broken]);
  assert.equal(b.code, 2);
  assert.match(b.stderr, new RegExp(`${broken}:\\d+:\\d+: `));

  // No such file; and --json says it as JSON.
  const missing = await floe(["sync", "--config", join(dir, "nope.yaml"), "--json"]);
  assert.equal(missing.code, 2);
  assert.match(JSON.parse(missing.stdout).error, /nope\.yaml: .*cannot read the job file/);
});

test("a topic_pattern that matches nothing exits 2 listing the topics seen", async () => {
  const seen = `cli${run}_seen`;
  await createTopic(seen);
  const file = writeJobFile(join(dir, "nothing.yaml"), {
    name: "nothing",
    kafka: { topic_pattern: `^cli${run}_nothing_.*$` },
    iceberg: { catalog: { type: "sql", warehouse: "./warehouse_nothing" } },
  });
  const outcome = await floe(["sync", "--config", file]);
  assert.equal(outcome.code, 2);
  assert.match(
    outcome.stderr,
    new RegExp(
      `topic_pattern \\^cli${run}_nothing_\\.\\*\\$ selects none of the \\d+ topics on the cluster: .*${seen}`,
    ),
  );
  assert.doesNotMatch(outcome.stderr, /__consumer_offsets/, "internal topics are not listed as candidates");
});

test("target_engines [athena] with an upsert stream exits 2 naming the engine and the stream", async () => {
  const topic = `cli${run}_athena`;
  const file = jobFile(
    "athena",
    `name: athena
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
destination:
  iceberg:
    target_engines: [duckdb, athena]
streams:
  ${topic}: {mode: upsert, dedup_keys: [id]}
  ${topic}_log: {mode: append}
`,
  );
  const outcome = await floe(["sync", "--config", file]);
  assert.equal(outcome.code, 2);
  assert.match(outcome.stderr, new RegExp(`${file}:7:\\d+: destination\\.iceberg\\.target_engines\\[1\\]: athena `));
  assert.match(outcome.stderr, new RegExp(`upsert streams: ${topic}\\)`));
  assert.doesNotMatch(outcome.stderr, /_log/, "the append stream is not in the way");
});

test("an upsert default_stream without topic_pattern applies to no topic: target_engines [athena] syncs and checks, exit 0", async () => {
  // default_stream only applies to topics a pattern selects; without one, the job syncs exactly its
  // listed (append) streams, which athena reads. The job file loads, so sync and check must not refuse it.
  const topic = `cli${run}_athena_default`;
  await createTopic(topic);
  await produce(topic, [{ value: json({ id: 1 }) }]);
  const file = writeJobFile(join(dir, "athena_default.yaml"), {
    name: "athena_default",
    iceberg: { catalog: { type: "sql", warehouse: "./warehouse_athena_default" }, target_engines: ["athena"] },
    streams: { [topic]: { mode: "append" } },
    default_stream: { mode: "upsert", dedup_keys: ["id"] },
  });
  const check = await floe(["check", "--config", file, "--sample", "0"]);
  assert.equal(check.code, 0, check.stderr);
  const sync = await floe(["sync", "--config", file, "--json"]);
  assert.equal(sync.code, 0, sync.stderr);
  assert.equal(JSON.parse(sync.stdout).tables[0].recordsAdded, 1);
});

test("--json prints a parseable report; the text report is a table; exit 0", async () => {
  const topic = `cli${run}_json`;
  await createTopic(topic);
  await produce(topic, [
    { key: "1", value: json({ id: 1, v: "a" }) },
    { key: "2", value: json({ id: 2, v: "b" }) },
    { key: "1", value: json({ id: 1, v: "c" }) },
    { key: "3", value: "not json" },
  ]);
  const file = simpleJob("json_report", topic, { mode: "upsert", dedup_keys: ["id"] });
  const outcome = await floe(["sync", "--config", file, "--json"]);
  assert.equal(outcome.code, 0, outcome.stderr);
  const report = JSON.parse(outcome.stdout);
  assert.equal(report.job, "json_report");
  assert.equal(report.status, "complete");
  assert.equal(report.messagesRead, 4);
  assert.equal(report.tables.length, 1);
  const [t] = report.tables;
  assert.equal(t.table, `json_report_topics.${topic}`);
  assert.deepEqual(
    [t.mode, t.messagesRead, t.dataFilesAdded, t.recordsAdded, t.deadLetters, t.positionsDeleted],
    ["upsert", 4, 1, 2, 1, 0],
  );
  assert.equal(typeof t.bytesRead, "number");
  assert.equal(typeof t.durationMs, "number");

  await produce(topic, [{ key: "2", value: json({ id: 2, v: "d" }) }]);
  const text = await floe(["sync", "--config", file]);
  assert.equal(text.code, 0, text.stderr);
  const lines = text.stdout.split("\n");
  assert.match(
    lines[0]!,
    /^table\s+mode\s+messages\s+bytes\s+data files\s+DVs\s+records\s+deleted\s+dead letters\s+ms$/,
  );
  assert.match(
    text.stdout,
    new RegExp(`json_report_topics\\.${topic}\\s+upsert\\s+1\\s+\\d+\\s+1\\s+1\\s+1\\s+1\\s+0\\s+\\d+`),
  );
  assert.match(text.stdout, /1 messages in [\d.]+ s, complete/);
});

test("secrets given as env references never appear in any output: not in a report, an error or a config error", async () => {
  const token = `tok-${run}-s3cr3t`;
  const password = `pw-${run}-hunter2`;
  const topic = `cli${run}_secret`;
  await createTopic(topic);
  await produce(topic, [{ value: json({ id: 1 }) }]);
  const env = { FLOE_TEST_TOKEN: token, FLOE_TEST_PASSWORD: password };
  const outputs: string[] = [];
  const check = (o: FloeOutcome) => {
    outputs.push(o.stdout, o.stderr);
    return o;
  };

  // A REST catalog token: the sync works, the report does not carry it.
  const rest = jobFile(
    "secret_rest",
    `name: secret_rest_${run}
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    topic_pattern: ^${topic}$
destination:
  iceberg:
    catalog: {type: rest, uri: ${restCatalog.uri}, token: "\${FLOE_TEST_TOKEN}"}
`,
  );
  const ok = check(await floe(["sync", "--config", rest, "--json"], env));
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout).tables[0].recordsAdded, 1);
  check(await floe(["sync", "--config", rest], env));

  // A SASL password, against a broker that speaks no SASL on that port: the connection fails.
  const sasl = jobFile(
    "secret_sasl",
    `name: secret_sasl
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    topic_pattern: ^${topic}$
    security: {protocol: SASL_PLAINTEXT}
    sasl: {mechanism: PLAIN, username: floe, password: "\${FLOE_TEST_PASSWORD}"}
destination:
  iceberg:
    catalog: {type: sql, warehouse: ./warehouse_secret}
`,
  );
  const failed = check(await floe(["sync", "--config", sasl], env));
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /floe sync: /);
  check(await floe(["sync", "--config", sasl, "--json"], env));

  // A job file with the password and another problem: the config error does not quote it.
  writeFileSync(sasl, `${readFileSync(sasl, "utf8")}streams:\n  ${topic}: {mode: upsert}\n`);
  const invalid = check(await floe(["sync", "--config", sasl], env));
  assert.equal(invalid.code, 2);
  assert.match(invalid.stderr, /dedup_keys: required when mode is upsert/);

  // A password written in the file as digits is a YAML number: the type error must not quote it.
  const digits = "98765432101";
  const literal = jobFile(
    "secret_literal",
    `name: secret_literal
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    topic_pattern: ^${topic}$
    security: {protocol: SASL_PLAINTEXT}
    sasl: {mechanism: PLAIN, username: floe, password: ${digits}}
`,
  );
  const typed = await floe(["sync", "--config", literal]);
  assert.equal(typed.code, 2);
  assert.match(typed.stderr, /source\.kafka\.sasl\.password: expected a string, got a number/);
  assert.ok(!typed.stderr.includes(digits) && !typed.stdout.includes(digits), typed.stderr);

  for (const output of outputs) {
    assert.ok(!output.includes(token), `the token leaked: ${output}`);
    assert.ok(!output.includes(password), `the password leaked: ${output}`);
  }
});

/**
 * produce() one partition at a time: the helper's producer is not idempotent, and when a partition
 * answers "not leader" (a loaded broker, a new topic) it re-sends the whole request, so that the
 * partitions that had accepted it get their messages twice.
 */
async function producePerPartition(topic: string, messages: TestMessage[]): Promise<void> {
  for (const partition of new Set(messages.map((m) => m.partition ?? 0))) {
    await produce(
      topic,
      messages.filter((m) => (m.partition ?? 0) === partition),
    );
  }
}

async function deleteRecords(topic: string, partitions: { partition: number; offset: bigint }[]): Promise<void> {
  const admin = new Admin({ clientId: "floe-test", bootstrapBrokers: [bootstrapServers] });
  try {
    await admin.deleteRecords({ topics: [{ name: topic, partitions }] });
  } finally {
    await admin.close();
  }
}

test("retention: messages deleted unread fail the sync with exit 3 and the count per partition; --accept-data-loss goes on and reports it", async () => {
  const topic = `cli${run}_retention`;
  await createTopic(topic, 2);
  const batch = (from: number): TestMessage[] =>
    [0, 1].flatMap((partition) =>
      Array.from({ length: 5 }, (_, i) => ({ value: json({ n: from + i, p: partition }), partition })),
    );
  await producePerPartition(topic, batch(0));
  const file = simpleJob("retention", topic, { mode: "append" });
  const first = await floe(["sync", "--config", file, "--json"]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(JSON.parse(first.stdout).messagesRead, 10);

  // Five more per partition, then the log start moves past the committed offset (5) on both.
  await producePerPartition(topic, batch(5));
  await deleteRecords(topic, [
    { partition: 0, offset: 8n },
    { partition: 1, offset: 7n },
  ]);

  for (let attempt = 0; attempt < 2; attempt++) {
    const lost = await floe(["sync", "--config", file]);
    assert.equal(lost.code, 3, lost.stderr);
    assert.match(lost.stderr, /5 message\(s\) expired before they were read/);
    assert.match(lost.stderr, /Run again with --accept-data-loss to go on; the loss is reported/);
    assert.match(
      lost.stderr,
      new RegExp(`${topic} partition 0: 3 \\(resume at 5 from the table offset, log starts at 8\\)`),
    );
    assert.match(
      lost.stderr,
      new RegExp(`${topic} partition 1: 2 \\(resume at 5 from the table offset, log starts at 7\\)`),
    );
  }
  const lostJson = await floe(["sync", "--config", file, "--json"]);
  assert.equal(lostJson.code, 3);
  const lostReport = JSON.parse(lostJson.stdout);
  assert.match(lostReport.error, /partition 0: 3 .*partition 1: 2 /);
  assert.deepEqual(
    lostReport.lostMessages.map((l: { topic: string; partition: number; lost: string; resumeOffset: string }) => [
      l.topic,
      l.partition,
      l.lost,
      l.resumeOffset,
    ]),
    [
      [topic, 0, "3", "5"],
      [topic, 1, "2", "5"],
    ],
  );

  const accepted = await floe(["sync", "--config", file, "--json", "--accept-data-loss"]);
  assert.equal(accepted.code, 0, accepted.stderr);
  const report = JSON.parse(accepted.stdout);
  assert.equal(report.messagesRead, 5, "what is left: offsets 8-9 and 7-9");
  assert.deepEqual(
    report.lostMessages.map((l: { partition: number; lost: string; logStartOffset: string }) => [
      l.partition,
      l.lost,
      l.logStartOffset,
    ]),
    [
      [0, "3", "8"],
      [1, "2", "7"],
    ],
  );
  assert.equal(report.tables[0].recordsAdded, 5);

  // The loss is behind: the next sync is a normal one.
  await produce(topic, [{ value: json({ n: 10, p: 0 }), partition: 0 }]);
  const next = await floe(["sync", "--config", file]);
  assert.equal(next.code, 0, next.stderr);
  assert.match(next.stdout, /1 messages in [\d.]+ s, complete/);
  assert.doesNotMatch(next.stdout, /expired/);
});

test("a re-created topic (the table's offsets past the end of the log) is read from its log start, and the report names both topic ids", async () => {
  const topic = `cli${run}_recreated`;
  await createTopic(topic);
  await produce(
    topic,
    [1, 2, 3].map((n) => ({ value: json({ n }) })),
  );
  const file = simpleJob("recreated", topic, { mode: "append" });
  const first = await floe(["sync", "--config", file]);
  assert.equal(first.code, 0, first.stderr);

  await deleteTopic(topic);
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await createTopic(topic);
      break;
    } catch (error) {
      // The deletion is asynchronous on the broker: TOPIC_ALREADY_EXISTS until it is done.
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  await produce(topic, [{ value: json({ n: 4 }) }]);
  const again = await floe(["sync", "--config", file]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /1 messages in [\d.]+ s, complete/);
  assert.match(
    again.stdout,
    new RegExp(
      `${topic}: deleted and re-created \\(topic id [\\w-]{22} -> [\\w-]{22}\\); read from its log start\\. ` +
        `recreated_topics\\.${topic} recorded the deleted topic: its rows stay beside the new topic's`,
    ),
  );
  const rerun = await floe(["sync", "--config", file, "--json"]);
  assert.equal(rerun.code, 0, rerun.stderr);
  assert.deepEqual(JSON.parse(rerun.stdout).recreatedTopics, [], "once: the table records the new id");
});
