// floe sync's live progress, as a user sees it: on a pseudo-terminal (script(1)) a bar per
// topic, drawn over itself, ending with each topic's final line above the report; on pipes and
// with --json, not a byte of it. Against the real broker and REST catalog; the tables the syncs
// wrote are read back through DuckDB, PyIceberg and Spark.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { produce, TestTopics } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { floe, floeInTerminal } from "../helpers/floe-cli.ts";
import { writeJobFile } from "../helpers/job-file.ts";

const run = `prog${process.pid}_${Date.now()}`;
const name = `${run}`;
const namespace = `${name}_topics`;
const topics = new TestTopics(run);
const dir = mkdtempSync(join(tmpdir(), "floe-progress-"));
const file = join(dir, "job.yaml");
const ESC = "\u001b";
const BAR = /[█░]/;

let readers: Readers;
let big: string;
let small: string;
let empty: string;
/** The ids produced to each topic so far: the model of each append table. */
const produced = new Map<string, number>();

async function produceIds(topic: string, count: number, partitions = 1) {
  const from = produced.get(topic) ?? 0;
  await produce(
    topic,
    Array.from({ length: count }, (_, i) => ({
      partition: (from + i) % partitions,
      value: JSON.stringify({ id: from + i }),
    })),
  );
  produced.set(topic, from + count);
}

const tableOf = (topic: string) => topic.replaceAll("-", "_");

before(async () => {
  readers = await startReaders();
  big = await topics.create("big", 2);
  small = await topics.create("small");
  empty = await topics.create("empty");
  await produceIds(big, 3000, 2);
  await produceIds(small, 500);
  writeJobFile(file, {
    name,
    kafka: { topic_pattern: `^${run}-(big|small|empty)$` },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    // Commits along the way, so that the bars are drawn over several rounds.
    commit: { max_messages: 1000 },
  });
});
after(async () => {
  await readers?.close();
  await topics.deleteAll();
  rmSync(dir, { recursive: true, force: true });
});

/** What the terminal shows last on each line that names the topic (the final frame). */
function lastLine(screen: string, topic: string): string {
  const lines = screen
    .split(/\r?\n|\r/)
    .map((l) => l.replaceAll(`${ESC}[2K`, "").replace(new RegExp(`${ESC}\\[\\d+A`, "g"), ""));
  const mine = lines.filter((l) => l.startsWith(`${topic} `));
  assert.ok(mine.length > 0, `no progress line of ${topic} in ${JSON.stringify(screen.slice(0, 2000))}`);
  return mine.at(-1)!;
}

async function assertTables() {
  for (const topic of [big, small]) {
    const ids = Array.from({ length: produced.get(topic)! }, (_, i) => ({ id: BigInt(i) }));
    await readers.assertRows(restTable(namespace, tableOf(topic)), ids, { columns: ["id"], orderBy: ["id"] });
  }
}

test("on a terminal: a bar per topic, redrawn in place, the last frame above the report", async () => {
  const { code, stdout } = await floeInTerminal(["sync", "--config", file], {
    columns: 132,
    rows: 40,
  });
  assert.equal(code, 0, stdout);
  assert.ok(stdout.includes(`${ESC}[3A`), "later frames drawn over the first (cursor up 3 lines)");
  assert.match(lastLine(stdout, big), /^\S+ +█{24} 100% {2}3,000 \/ 3,000 {2}done$/);
  assert.match(lastLine(stdout, small), /^\S+ +█{24} 100% {2}500 \/ 500 {2}done$/);
  assert.match(lastLine(stdout, empty), /^\S+ +█{24} 100% {2}0 \/ 0 {2}up to date$/);
  // The first frame, at the plan, before a message is read.
  assert.match(stdout, new RegExp(`${big} +░{24} {3}0% {2}0 / 3,000 {2}-/s {2}--:-- left`));
  // Then the report, as on a pipe.
  const report = stdout.slice(stdout.lastIndexOf(`${empty} `));
  assert.match(report, /\ntable +mode +messages/);
  assert.match(report, /3500 messages in [\d.]+ s, complete/);
  // Each progress line fits the terminal's width, so that redrawing in place never wraps.
  const controls = new RegExp(`${ESC}\\[\\d*[A-Za-z]|\r`, "g");
  for (const line of stdout.split("\n").filter((l) => BAR.test(l))) {
    assert.ok([...line.replace(controls, "")].length <= 131, line);
  }
  await assertTables();
});

test("on pipes: no bar and no control sequence, the report on stdout", async () => {
  await produceIds(big, 200, 2);
  const { code, stdout, stderr } = await floe(["sync", "--config", file]);
  assert.equal(code, 0, stderr);
  assert.equal(stderr, "");
  assert.ok(!stdout.includes(ESC) && !BAR.test(stdout), stdout);
  assert.match(stdout, /^table +mode +messages/);
  assert.match(stdout, /\n200 messages in [\d.]+ s, complete/);
  await assertTables();
});

test("on a terminal with --json: no bar, the JSON report alone", async () => {
  await produceIds(small, 100);
  const { code, stdout } = await floeInTerminal(["sync", "--config", file, "--json"]);
  assert.equal(code, 0, stdout);
  assert.ok(!stdout.includes(ESC) && !BAR.test(stdout), stdout);
  const report = JSON.parse(stdout);
  assert.equal(report.messagesRead, 100);
  assert.equal(report.status, "complete");
  await assertTables();
});

test("on a terminal, a failing sync: the bars end, the error follows", async () => {
  const bad = join(dir, "bad.yaml");
  writeJobFile(bad, {
    name: `${name}_bad`,
    kafka: { topic_pattern: `^${run}-small$` },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    streams: { [small]: { mode: "upsert", dedup_keys: ["missing"], on_error: "fail" } },
  });
  const { code, stdout } = await floeInTerminal(["sync", "--config", bad]);
  assert.equal(code, 1, stdout);
  assert.match(lastLine(stdout, small), /failed$/);
  assert.match(stdout, /floe sync: .*missing/);
});
