// `floe run` as an operator meets it, against the real broker, the embedded catalog and the three
// readers. One append job on `every 2s`, reached through a TCP proxy in front of the broker's
// bootstrap address, so the test can take Kafka away and give it back:
//
//   1. runs on its schedule (the first lands batch A); /metrics counts it and /healthz, /readyz answer ok; a second `floe run` of
//      the job exits 5 naming the first; batch B's run is held before its commit (a fault
//      point), a `floe sync` of the job then exits 5 naming the running process, SIGTERM arrives,
//      the run is let go (meanwhile /readyz answers 503, stopping): it commits and the process exits 0
//   2. a second process with two jobs in one state root: with the proxy down job 1's runs fail
//      (connection, retryable) and alert the webhook, then the proxy comes back and a run lands
//      batch C; job 2 fails on a bad message (on_error: fail) while its last success is older
//      than 80% of its topic's retention.ms: a retention alert, and floe status warns
//   3. a third process is stopped by SIGTERM while its run stands before its commit and does not
//      end within --stop-timeout: the run is abandoned (exit 1), nothing of it is visible, and a
//      `floe sync` lands batch D
//
// Then the table holds A+B+C+D once each in DuckDB, PyIceberg and Spark, floe history shows every
// run (complete, failed then complete, abandoned, the sync), floe logs shows a failed run's error,
// and the webhook's token (a secret) appears in no output and no file of the state root.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer, connect as netConnect, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type RunRecord, RunStore } from "#src/state/run-store.ts";
import { bootstrapServers, createTopic, deleteTopic, produce, setTopicConfig } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { envRef, writeJobFile } from "../helpers/job-file.ts";
import { freePort, runsOf, until } from "../helpers/service-process.ts";
import {
  AppendModel,
  deadLetterColumns,
  modelColumns,
  OffsetCounter,
  produceExactly,
  syncWorkspace,
  type Value,
} from "../helpers/sync-model.ts";

const repo = join(import.meta.dirname, "..", "..");
const EXIT_BUSY = 5;
const PARTITIONS = 2;
const ws = syncWorkspace("svc_run");
const topic = `${ws.name}_t`;
const topic2 = `${ws.name}_bad`;
const job2 = `${ws.name}_two`;
const stateRoot = join(ws.dir, "state");
const storePath = join(stateRoot, "floe.db");
const token = `tok${ws.run.replace(/_/g, "")}secret`;
const children: ChildProcess[] = [];

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `floe <args>` in a child process; `done` resolves when it exits. */
function floe(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["src/cli/main.ts", ...args], {
    cwd: repo,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const done = new Promise<Outcome>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done, output: () => `${stdout}\n${stderr}` };
}

/** A TCP proxy to the broker's bootstrap address that can refuse connections for a while. */
class BootstrapProxy {
  port = 0;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();

  async up(): Promise<void> {
    const [host, port] = bootstrapServers.split(":");
    this.#server = createServer((client) => {
      const upstream = netConnect(Number(port), host!);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on("error", () => {});
        s.on("close", () => this.#sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.#server!.listen(this.port, "127.0.0.1", resolve));
    this.port = (this.#server.address() as { port: number }).port;
  }

  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A webhook receiver on 127.0.0.1: every body posted, parsed. */
async function webhookReceiver() {
  const received: { path: string; body: { text: string; floe: { kind: string; job: string } } }[] = [];
  const server: HttpServer = createHttpServer((request, response) => {
    let body = "";
    request.on("data", (d) => {
      body += d;
    });
    request.on("end", () => {
      received.push({ path: request.url ?? "", body: JSON.parse(body) });
      response.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { received, port: (server.address() as { port: number }).port, server };
}

let readers: Readers;
const proxy = new BootstrapProxy();
let receiver: Awaited<ReturnType<typeof webhookReceiver>>;
before(async () => {
  readers = await startReaders();
  await proxy.up();
  receiver = await webhookReceiver();
  await createTopic(topic, PARTITIONS);
  await createTopic(topic2, 1);
});
after(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await readers?.close();
  await proxy.down();
  receiver?.server.close();
  await deleteTopic(topic);
  await deleteTopic(topic2);
});

function writeJobs() {
  const job1 = join(ws.dir, "job.yaml");
  writeJobFile(job1, {
    name: ws.name,
    kafka: {
      bootstrap_servers: [`127.0.0.1:${proxy.port}`],
      topic_pattern: `^${topic}$`,
      connect_timeout: "2s",
      request_timeout: "10s",
    },
    iceberg: { catalog: { type: "sql", warehouse: ws.warehouse } },
    streams: { [topic]: { mode: "append", table: "t" } },
    schedule: "every 2s",
    // The runs of this test are its syncs; maintenance passes are tested in cli-maintain.test.ts.
    maintenance: { enabled: false },
    alerts: { webhook: `http://127.0.0.1:${receiver.port}/hook/${token}` },
  });
  const job2File = join(ws.dir, "job2.yaml");
  writeJobFile(job2File, {
    name: job2,
    kafka: { topic_pattern: `^${topic2}$` },
    iceberg: { catalog: { type: "sql", warehouse: ws.warehouse } },
    streams: { [topic2]: { mode: "append", table: "bad", on_error: "fail" } },
    schedule: "*/2 * * * * *",
    maintenance: { enabled: false },
  });
  return { job1, job2File };
}

test("floe run: scheduled runs, one at a time across processes, SIGTERM mid-run, a failure then a success, alerts, status, history and logs", async () => {
  const { job1, job2File } = writeJobs();
  const counter = new OffsetCounter();
  const model = new AppendModel();
  let seq = 0;
  // A batch produced while a run may list the watermarks goes to one partition, in one request:
  // a run sees all of it or none of it.
  const batch = async (n: number, partition?: number, bad = 0) => {
    const messages = counter.assign([
      ...Array.from({ length: n - bad }, () => ({
        partition: partition ?? seq % PARTITIONS,
        key: null,
        value: { seq: seq++ } as Value | string,
      })),
      ...Array.from({ length: bad }, (_, i) => ({ partition: partition ?? 0, key: null, value: `not json ${i}` })),
    ]);
    await produceExactly(topic, messages, counter);
    model.apply(messages);
  };
  const state = ["--state-dir", stateRoot];
  const outputs: string[] = [];

  // 1. Batch A on the first run; batch B's run held before its commit.
  await batch(200);
  const metricsPort = await freePort();
  const pauseFile = join(ws.dir, "pause-1");
  const first = floe(
    [
      "run",
      "--config",
      job1,
      ...state,
      "--metrics",
      `127.0.0.1:${metricsPort}`,
      "--retry-delay",
      "1",
      "--log-format",
      "json",
    ],
    { FLOE_FAULT_AT: "after-data-files:2", FLOE_FAULT: "pause", FLOE_FAULT_FILE: pauseFile },
  );
  await until("the first run lands batch A", () =>
    runsOf(storePath, ws.name).some((r) => r.outcome === "complete" && r.messages === 200),
  );
  // The run is recorded complete a moment before the service has measured the lag and counted the run.
  let metrics = "";
  await until("the metrics count the first run", async () => {
    metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return /floe_runs_total\{job="[^"]+",outcome="complete"\} \d/.test(metrics);
  });
  // The probes beside the metrics: live, and ready while the jobs' loops run.
  const probe = async (path: string) => {
    const answer = await fetch(`http://127.0.0.1:${metricsPort}${path}`);
    return { status: answer.status, body: await answer.json() };
  };
  assert.deepEqual(await probe("/healthz"), { status: 200, body: { status: "ok" } });
  assert.deepEqual(await probe("/readyz"), { status: 200, body: { status: "ok" } });
  const labels = `job="${ws.name}",table="${ws.namespace}.t"`;
  assert.match(metrics, new RegExp(`floe_messages_read_total\\{${labels}\\} 200\\n`));
  assert.match(metrics, new RegExp(`floe_records_added_total\\{${labels}\\} 200\\n`));
  assert.match(metrics, new RegExp(`floe_partition_lag\\{job="${ws.name}",topic="${topic}",partition="1"\\} 0\\n`));
  assert.match(metrics, new RegExp(`floe_last_success_timestamp_seconds\\{job="${ws.name}"\\} \\d+`));
  assert.match(metrics, new RegExp(`floe_runs_total\\{job="${ws.name}",outcome="complete"\\} \\d+`));
  assert.match(metrics, /floe_run_duration_seconds_count\{job="[^"]+",outcome="complete"\} \d+/);

  const second = await floe(["run", "--config", job1, ...state]).done;
  assert.equal(second.code, EXIT_BUSY, second.stderr);
  assert.match(
    second.stderr,
    new RegExp(`job ${ws.name} is scheduled by process ${first.child.pid} on .* \\(floe run --config ${job1}\\)`),
  );

  await batch(150, 0);
  await until("batch B's run stands before its commit", () => existsSync(pauseFile));
  const held = runsOf(storePath, ws.name).find((r) => r.outcome === "running");
  assert.ok(held, "the held run is recorded as running");
  const follow = floe(["logs", held.runId, ...state, "--follow"]);
  const standby = floe(["run", "--config", job1, ...state, "--wait", "--log-format", "json"]);
  const sync = await floe(["sync", "--config", job1, ...state]).done;
  assert.equal(sync.code, EXIT_BUSY, sync.stderr);
  assert.match(
    sync.stderr,
    new RegExp(`job ${ws.name} is being synced by process ${first.child.pid} on .*floe run --config`),
  );
  first.child.kill("SIGTERM");
  // Stopping (its held run still to commit): alive, no longer ready.
  await until("the stopping service is no longer ready", async () => (await probe("/readyz")).status === 503);
  assert.deepEqual(await probe("/readyz"), { status: 503, body: { status: "unavailable", reason: "stopping" } });
  assert.equal((await probe("/healthz")).status, 200);
  await new Promise((resolve) => setTimeout(resolve, 500));
  rmSync(pauseFile);
  const firstOut = await first.done;
  outputs.push(firstOut.stdout, firstOut.stderr);
  assert.equal(firstOut.code, 0, firstOut.stderr);
  // logs --follow printed the held run's lines as they came, and returned when it ended.
  const followed = await follow.done;
  assert.equal(followed.code, 0, followed.stderr);
  assert.match(
    followed.stdout,
    /INFO +run started\n(.*\n)*.*INFO +committed .*\n(.*\n)*.*INFO +run complete: 150 messages/,
  );
  // The standby takes the job over once the first process is gone, and stops on SIGTERM.
  await until("the standby schedules the job", () => /"msg":"scheduled: every 2s"/.test(standby.output()));
  standby.child.kill("SIGTERM");
  const standbyOut = await standby.done;
  outputs.push(standbyOut.stdout, standbyOut.stderr);
  assert.equal(standbyOut.code, 0, standbyOut.stderr);
  const afterFirst = runsOf(storePath, ws.name);
  assert.deepEqual(
    afterFirst.filter((r) => r.messages > 0).map((r) => [r.outcome, r.messages]),
    [
      ["complete", 200],
      ["complete", 150],
    ],
    "the run stopped by SIGTERM committed what it had read",
  );
  // Every log line of a run carries its id, as JSON on a pipe.
  const runLines = firstOut.stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { runId?: string; msg: string });
  assert.ok(runLines.some((l) => l.msg === "run started" && afterFirst.some((r) => r.runId === l.runId)));
  assert.ok(runLines.filter((l) => /^committed /.test(l.msg)).every((l) => typeof l.runId === "string"));

  // 2. Two jobs in one process and one store; Kafka away for job 1, then back.
  await produce(topic2, [{ value: "not json", partition: 0 }]);
  await setTopicConfig(topic2, "retention.ms", "3600000");
  const seeded = RunStore.open(storePath);
  const oldStart = Date.now() - 55 * 60_000;
  seeded.saveRun({
    runId: `${job2}-old`,
    job: job2,
    trigger: "schedule",
    startedAt: oldStart,
    endedAt: oldStart + 1000,
    durationMs: 1000,
    outcome: "complete",
    messages: 0,
    bytes: 0,
    deadLetters: 0,
    tables: [],
    error: null,
    pid: 1,
    host: "elsewhere",
  });
  seeded.close();
  await proxy.down();
  await batch(100, undefined, 1);
  const before2 = runsOf(storePath, ws.name).length;
  const metricsPort2 = await freePort();
  const secondRun = floe([
    "run",
    "--config",
    job1,
    "--config",
    job2File,
    ...state,
    "--retry-delay",
    "1",
    "--log-format",
    "json",
    "--log-level",
    "debug",
    // For job 2, whose file names no webhook.
    "--webhook",
    `http://127.0.0.1:${receiver.port}/hook/${token}`,
    "--metrics",
    `127.0.0.1:${metricsPort2}`,
  ]);
  await until("a run of job 1 fails without Kafka", () =>
    runsOf(storePath, ws.name)
      .slice(before2)
      .some((r) => r.outcome === "failed"),
  );
  await proxy.up();
  await until("a run of job 1 lands batch C", () =>
    runsOf(storePath, ws.name)
      .slice(before2)
      .some((r) => r.outcome === "complete" && r.messages === 100),
  );
  await until("job 2 fails and its retention alert is sent", () =>
    receiver.received.some((a) => a.body.floe.kind === "retention" && a.body.floe.job === job2),
  );
  await until("the dead letter's alert is sent", () =>
    receiver.received.some((a) => a.body.floe.kind === "dead-letters"),
  );
  const metrics2 = await (await fetch(`http://127.0.0.1:${metricsPort2}/metrics`)).text();
  assert.match(metrics2, new RegExp(`floe_errors_total\\{job="${ws.name}",kind="connection"\\} [1-9]`));
  assert.match(metrics2, new RegExp(`floe_errors_total\\{job="${job2}",kind="bad-message"\\} [1-9]`));
  assert.match(metrics2, new RegExp(`floe_dead_letters_total\\{${labels}\\} 1\\n`));
  assert.match(metrics2, new RegExp(`floe_messages_read_total\\{${labels}\\} 100\\n`));
  assert.match(metrics2, new RegExp(`floe_partition_lag\\{job="${job2}",topic="${topic2}",partition="0"\\} 1\\n`));
  const stoppedAt = Date.now();
  secondRun.child.kill("SIGTERM");
  const secondOut = await secondRun.done;
  outputs.push(secondOut.stdout, secondOut.stderr);
  assert.equal(secondOut.code, 0, secondOut.stderr);

  const failed = runsOf(storePath, ws.name)
    .slice(before2)
    .filter((r) => r.outcome === "failed");
  assert.ok(failed.length >= 1);
  for (const r of failed) {
    assert.equal(r.error?.kind, "connection");
    assert.equal(r.error?.retryable, true);
    assert.match(r.error!.message, new RegExp(`127\\.0\\.0\\.1:${proxy.port}`));
  }
  const alerts = receiver.received;
  assert.ok(alerts.every((a) => a.path === `/hook/${token}`));
  const failedAlert = alerts.find((a) => a.body.floe.kind === "run-failed" && a.body.floe.job === ws.name);
  assert.match(
    failedAlert!.body.text,
    new RegExp(`^floe: run \\S+ of job ${ws.name} failed \\(connection, retryable\\): `),
  );
  const deadLetterAlert = alerts.find((a) => a.body.floe.kind === "dead-letters")!;
  assert.match(
    deadLetterAlert.body.text,
    new RegExp(`of job ${ws.name} wrote 1 dead letters: 1 into ${ws.namespace}\\.t__dlq$`),
  );
  const retention = alerts.find((a) => a.body.floe.kind === "retention")!;
  assert.match(
    retention.body.text,
    new RegExp(`job ${job2}: the last successful run started 5\\dm ago, near the retention of topic ${topic2}`),
  );
  // Job 2 runs every two seconds, so SIGTERM may stop one of its runs before it meets the bad
  // message: that run, the last, ends having read nothing. Every other run fails on it.
  const job2Runs = runsOf(storePath, job2).filter((r) => r.runId !== `${job2}-old`);
  const failedOnMessage = (r: (typeof job2Runs)[number]) => r.outcome === "failed" && r.error?.kind === "bad-message";
  const stoppedEarly = job2Runs.filter((r) => !failedOnMessage(r));
  assert.ok(job2Runs.some(failedOnMessage), JSON.stringify(job2Runs));
  assert.ok(
    stoppedEarly.length <= 1 &&
      stoppedEarly.every((r) => r === job2Runs.at(-1) && (r.endedAt ?? 0) >= stoppedAt && r.messages === 0),
    JSON.stringify(stoppedEarly),
  );

  const status2 = await floe(["status", "--config", job2File, ...state, "--json"]).done;
  assert.equal(status2.code, 0, status2.stderr);
  const [s2] = JSON.parse(status2.stdout);
  assert.match(
    s2.retentionWarning,
    new RegExp(`near the retention of topic ${topic2} \\(retention\\.ms 3600000, 1h\\)`),
  );
  assert.equal(s2.lastSuccess.runId, `${job2}-old`);
  assert.deepEqual(
    s2.lag.partitions.map((p: { lag: string; highWatermark: string }) => [p.highWatermark, p.lag]),
    [["1", "1"]],
  );
  assert.equal(s2.schedule, "*/2 * * * * *");
  assert.ok(s2.nextRun > Date.now() - 60_000);

  // 3. SIGTERM while a run stands before its commit, past --stop-timeout: abandoned.
  await batch(120);
  const pauseFile3 = join(ws.dir, "pause-3");
  const third = floe(["run", "--config", job1, ...state, "--stop-timeout", "2", "--log-format", "json"], {
    FLOE_FAULT_AT: "after-data-files",
    FLOE_FAULT: "pause",
    FLOE_FAULT_FILE: pauseFile3,
  });
  await until("batch D's run stands before its commit", () => existsSync(pauseFile3));
  third.child.kill("SIGTERM");
  const thirdOut = await third.done;
  outputs.push(thirdOut.stdout, thirdOut.stderr);
  rmSync(pauseFile3, { force: true });
  assert.equal(thirdOut.code, 1, thirdOut.stderr);
  assert.match(thirdOut.stdout, /stopped without waiting for 1 running sync\(s\): marked abandoned/);
  const abandoned = runsOf(storePath, ws.name).at(-1)!;
  assert.equal(abandoned.outcome, "abandoned");

  const status1 = await floe(["status", "--config", job1, ...state, "--json"]).done;
  const [s1] = JSON.parse(status1.stdout);
  assert.equal(s1.lastRun.outcome, "abandoned");
  assert.equal(
    s1.lag.partitions.reduce((sum: bigint, p: { lag: string }) => sum + BigInt(p.lag), 0n),
    120n,
    "the abandoned run committed nothing",
  );
  assert.equal(s1.retentionWarning, null);
  const text = await floe(["status", "--config", job1, ...state]).done;
  assert.match(text.stdout, new RegExp(`job ${ws.name} \\(schedule: every 2s\\)\\n  last run .* abandoned`));

  const last = await floe(["sync", "--config", job1, ...state]).done;
  assert.equal(last.code, 0, last.stderr);
  await readers.assertRows({ catalog: ws.catalogRef, namespace: ws.namespace, table: "t" }, model.rows(["seq"]), {
    columns: modelColumns(["seq"]),
    orderBy: ["_kafka_partition", "_kafka_offset"],
  });

  await readers.assertRows(
    { catalog: ws.catalogRef, namespace: ws.namespace, table: "t__dlq" },
    model.deadLetterRows(),
    { columns: deadLetterColumns, orderBy: ["_kafka_partition", "_kafka_offset"] },
  );

  // floe history: every run, newest first.
  const history = await floe(["history", "--config", job1, ...state, "--json", "--limit", "1000"]).done;
  assert.equal(history.code, 0, history.stderr);
  const runs = (JSON.parse(history.stdout) as RunRecord[]).reverse();
  const landed = runs.filter((r) => r.messages > 0 && (r.outcome === "complete" || r.outcome === "partial"));
  assert.deepEqual(
    landed.map((r) => [r.messages, r.trigger]),
    [
      [200, "schedule"],
      [150, "schedule"],
      [100, landed[2]!.trigger],
      [120, "sync"],
    ],
  );
  assert.ok(["schedule", "retry"].includes(landed[2]!.trigger));
  const firstFailure = runs.findIndex((r) => r.outcome === "failed");
  const successAfter = runs.findIndex((r, i) => i > firstFailure && r.outcome === "complete" && r.messages === 100);
  assert.ok(firstFailure >= 0 && successAfter > firstFailure, "a failed run, then a successful one");
  assert.equal(runs.filter((r) => r.outcome === "abandoned").length, 1);
  assert.equal(landed[3]!.tables[0]!.recordsAdded, 120);
  assert.equal(landed[0]!.bytes, landed[0]!.tables[0]!.bytesRead);
  assert.equal(landed[2]!.deadLetters, 1);
  assert.equal(landed[2]!.tables[0]!.recordsAdded, 99);
  const historyText = await floe(["history", "--config", job1, ...state, "--limit", "1000"]).done;
  assert.match(historyText.stdout, /^run id +started +duration +outcome +trigger +messages +bytes +dead letters\n/);
  assert.match(historyText.stdout, /\n {4}error \(connection, retryable\): cannot connect to Kafka/);
  assert.match(historyText.stdout, new RegExp(`\\n {4}${ws.namespace}\\.t: 120 messages, 120 records added`));

  // floe logs: a failed run's lines, its errors alone, as JSON.
  const failedId = runs[firstFailure]!.runId;
  const logs = await floe(["logs", failedId, ...state]).done;
  assert.equal(logs.code, 0, logs.stderr);
  assert.match(logs.stdout, /INFO +run started\n/);
  assert.match(logs.stdout, /ERROR +run failed \(connection\): cannot connect to Kafka/);
  const errors = await floe(["logs", failedId, ...state, "--errors", "--json"]).done;
  const errorLines = errors.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  assert.ok(errorLines.length >= 1);
  assert.ok(errorLines.every((l) => l.level >= 50 && l.runId === failedId && l.kind === "connection"));
  const unknown = await floe(["logs", "nope", ...state]).done;
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no run nope in /);
  // --follow on an ended run prints its lines and returns.
  const ended = await floe(["logs", landed[3]!.runId, ...state, "--follow"]).done;
  assert.match(ended.stdout, /run complete: 120 messages/);

  // The webhook's token is a secret: in no output, in no file of the state root.
  for (const output of [...outputs, history.stdout, historyText.stdout, logs.stdout, status1.stdout, status2.stdout]) {
    assert.ok(!output.includes(token), "the webhook token appears in an output");
  }
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
  for (const file of files(stateRoot)) {
    assert.ok(!readFileSync(file).includes(token), `the webhook token appears in ${file}`);
  }
});

test("two floe run processes of one job with separate state roots (no shared lock) land every message once", async () => {
  // Copies of a job on two machines: each has its own lock, so their runs overlap, and the offset
  // check of every commit is what keeps the table right; a run that loses a race fails
  // (retryable) and is retried.
  const twin = syncWorkspace("svc_twin");
  const twinTopic = `${twin.name}_t`;
  await createTopic(twinTopic, 4);
  try {
    const file = join(twin.dir, "job.yaml");
    writeJobFile(file, {
      name: twin.name,
      kafka: { topic_pattern: `^${twinTopic}$`, max_threads: 4 },
      iceberg: { catalog: { type: "sql", warehouse: twin.warehouse } },
      streams: { [twinTopic]: { mode: "append", table: "t" } },
      schedule: "every 1s",
      maintenance: { enabled: false },
      commit: { max_messages: 300 },
    });
    const processes = ["a", "b"].map((root) =>
      floe([
        "run",
        "--config",
        file,
        "--state-dir",
        join(twin.dir, root),
        "--retry-delay",
        "1",
        "--log-format",
        "json",
      ]),
    );
    const counter = new OffsetCounter();
    const model = new AppendModel();
    for (let round = 0; round < 6; round++) {
      const messages = counter.assign(
        Array.from({ length: 1000 }, (_, i) => ({ partition: i % 4, key: null, value: { seq: round * 1000 + i } })),
      );
      await produceExactly(twinTopic, messages, counter);
      model.apply(messages);
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
    const lag = async () => {
      const status = await floe(["status", "--config", file, "--state-dir", join(twin.dir, "a"), "--json"]).done;
      const [s] = JSON.parse(status.stdout);
      return s.lag?.partitions.reduce((sum: bigint, p: { lag: string }) => sum + BigInt(p.lag), 0n);
    };
    await until("both processes drained the topic", async () => (await lag()) === 0n);
    for (const p of processes) p.child.kill("SIGTERM");
    for (const p of processes) {
      const out = await p.done;
      assert.equal(out.code, 0, out.stderr);
    }
    await readers.assertRows({ catalog: twin.catalogRef, namespace: twin.namespace, table: "t" }, model.rows(["seq"]), {
      columns: modelColumns(["seq"]),
      orderBy: ["_kafka_partition", "_kafka_offset"],
    });
    const failures: string[] = [];
    for (const root of ["a", "b"]) {
      const store = RunStore.open(join(twin.dir, root, "floe.db"));
      for (const run of store.runs(twin.name).filter((r) => r.outcome === "failed")) {
        assert.ok(run.error?.retryable, `${root}: ${run.error?.kind}: ${run.error?.message}`);
        failures.push(run.error!.kind);
      }
      store.close();
    }
    console.log(`two schedulers: ${failures.length} runs lost a race (${[...new Set(failures)].join(", ") || "none"})`);
  } finally {
    await deleteTopic(twinTopic);
  }
});

test("a catalog token that a refusing catalog echoes back appears in no log line, error, run record or store file", async () => {
  const secret = `tok${ws.run.replace(/_/g, "")}catalog`;
  const catalog = createHttpServer((request, response) => {
    response.writeHead(401, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        error: { message: `bad token ${request.headers.authorization}`, type: "NotAuthorizedException", code: 401 },
      }),
    );
  });
  await new Promise<void>((resolve) => catalog.listen(0, "127.0.0.1", resolve));
  try {
    const file = join(ws.dir, "token.yaml");
    writeJobFile(file, {
      name: `${ws.name}_tok`,
      kafka: { topic_pattern: `^${topic}$` },
      iceberg: {
        catalog: {
          type: "rest",
          uri: `http://127.0.0.1:${(catalog.address() as { port: number }).port}`,
          token: envRef("FLOE_TEST_CATALOG_TOKEN"),
        },
      },
    });
    const root = join(ws.dir, "token-state");
    const env = { FLOE_TEST_CATALOG_TOKEN: secret };
    const sync = await floe(["sync", "--config", file, "--state-dir", root, "--log-level", "debug"], env).done;
    assert.equal(sync.code, 1, sync.stderr);
    assert.match(sync.stderr, /rejected the credentials \(HTTP 401: bad token Bearer \*\*\*\)/);
    const json = await floe(["sync", "--config", file, "--state-dir", root, "--json"], env).done;
    assert.equal(JSON.parse(json.stdout).kind, "auth");
    const history = await floe(["history", "--config", file, "--state-dir", root, "--json"], env).done;
    const runs = JSON.parse(history.stdout) as RunRecord[];
    assert.deepEqual(
      runs.map((r) => [r.outcome, r.error?.kind]),
      [
        ["failed", "auth"],
        ["failed", "auth"],
      ],
    );
    const logs = await floe(["logs", runs[0]!.runId, "--state-dir", root, "--json"]).done;
    assert.match(logs.stdout, /"kind":"auth"/);
    for (const output of [sync.stdout, sync.stderr, json.stdout, history.stdout, logs.stdout]) {
      assert.ok(!output.includes(secret), "the catalog token appears in an output");
    }
    for (const name of readdirSync(root)) {
      const path = join(root, name);
      if (statSync(path).isFile()) assert.ok(!readFileSync(path).includes(secret), `the token appears in ${path}`);
    }
  } finally {
    catalog.close();
  }
});
