// The service commands as a user meets them, with no service running: their help, usage
// errors and job files that `floe run` cannot schedule, with their exit codes; history, logs
// and status over a run store that the test fills, without Kafka.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { RunStore } from "#src/state/run-store.ts";
import { type FloeOutcome, floe as runFloe } from "../../helpers/floe-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-cli-service-"));

function floe(...args: string[]): Promise<FloeOutcome> {
  return runFloe(args, { cwd: dir, timeoutMs: 60_000 });
}

const jobFile = (name: string, extra: string) => {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${name}\nsource: {kafka: {bootstrap_servers: [127.0.0.1:1], topic_pattern: ^t$}}\n${extra}\n`,
  );
  return file;
};

test("run, status, history and logs: listed, each with its options, an example and its exit codes", async () => {
  const top = await floe("--help");
  for (const command of ["run", "status", "history", "logs"])
    assert.match(top.stdout, new RegExp(`\\n  ${command}\\b`));
  for (const [command, options] of [
    [
      "run",
      [
        "--config <file>",
        "--state-dir",
        "--log-level",
        "--metrics <host:port>",
        "--webhook",
        "--stop-timeout",
        "--wait",
      ],
    ],
    ["status", ["--config <file>", "--json", "--state-dir"]],
    ["history", ["--config <file>", "--json", "--limit <n>"]],
    ["logs", ["<run-id>", "--errors", "--follow", "--json"]],
  ] as const) {
    const help = await floe(command, "--help");
    assert.equal(help.code, 0, command);
    for (const option of options) assert.ok(help.stdout.includes(option), `${command}: ${option}`);
    assert.match(help.stdout, /Example:/);
    assert.match(help.stdout, /Exit codes: 0/);
  }
});

test("usage errors exit 2: bad flags, a job without schedule, a bad schedule", async () => {
  const scheduled = jobFile("scheduled", "schedule: every 1m");
  const cases: [string[], RegExp][] = [
    [["run"], /required option '-c, --config <file>' not specified/],
    [["run", "--config", scheduled, "--metrics", "9464"], /expected HOST:PORT, e\.g\. 127\.0\.0\.1:9464/],
    [["run", "--config", scheduled, "--webhook", "ftp://x"], /expected an http:\/\/ or https:\/\/ URL/],
    [["run", "--config", scheduled, "--stop-timeout", "0"], /expected a positive number of seconds/],
    [["run", "--config", scheduled, "--log-level", "loud"], /Allowed choices are trace, debug, info/],
    [
      ["run", "--config", jobFile("unscheduled", "")],
      /unscheduled\.yaml: schedule: floe run needs a schedule: \(e\.g\. every 5m, or continuous\) or --continuous/,
    ],
    [["run", "--config", jobFile("badschedule", "schedule: every 5w")], /schedule: "every 5w": expected/],
    [["history"], /required option '-c, --config <file>' not specified/],
    [["history", "--config", scheduled, "--limit", "0"], /expected a positive integer/],
    [["history", "--config", scheduled, "--outcome", "great"], /expected one of running, complete/],
    [["logs"], /missing required argument 'run-id'/],
  ];
  for (const [args, message] of cases) {
    const outcome = await floe(...args);
    assert.equal(outcome.code, 2, `${args.join(" ")}: ${outcome.stderr}`);
    assert.match(outcome.stderr, message, args.join(" "));
  }
});

test("history, logs and status read the run store of the job file's state root", async () => {
  const file = jobFile("stored", "schedule: every 1h");
  const store = RunStore.open(join(dir, ".floe", "floe.db"));
  const base = {
    job: "stored",
    trigger: "schedule" as const,
    messages: 0,
    bytes: 0,
    deadLetters: 0,
    tables: [],
    pid: 1,
    host: "h",
  };
  store.saveRun({
    ...base,
    runId: "r1",
    startedAt: 1_000_000,
    endedAt: 1_001_500,
    durationMs: 1500,
    outcome: "failed",
    error: { kind: "connection", retryable: true, name: "KafkaConnectionError", message: "no broker at 127.0.0.1:1" },
  });
  store.saveRun({
    ...base,
    runId: "r2",
    startedAt: 2_000_000,
    endedAt: 2_000_100,
    durationMs: 100,
    outcome: "complete",
    messages: 7,
    error: null,
  });
  store.appendLog("r1", 1_000_000, 30, "run started", { job: "stored" });
  store.appendLog("r1", 1_001_500, 50, "run failed (connection): no broker", { job: "stored", kind: "connection" });
  store.close();

  const history = await floe("history", "--config", file, "--json");
  assert.equal(history.code, 0, history.stderr);
  assert.deepEqual(
    JSON.parse(history.stdout).map((r: { runId: string; outcome: string }) => [r.runId, r.outcome]),
    [
      ["r2", "complete"],
      ["r1", "failed"],
    ],
  );
  const text = await floe("history", "--config", file, "--limit", "1");
  assert.match(text.stdout, /\nr2 +\S+ \S+ +0\.1 s +complete +schedule +7 +0 +0\n$/);
  const failed = await floe("history", "--config", file, "--outcome", "failed");
  assert.match(failed.stdout, /\n {4}error \(connection, retryable\): no broker at 127\.0\.0\.1:1\n$/);

  const logs = await floe("logs", "r1", "--config", file);
  assert.match(logs.stdout, /INFO +run started\n.*ERROR +run failed \(connection\): no broker +kind=connection\n$/);
  const errors = await floe("logs", "r1", "--config", file, "--errors", "--json");
  assert.deepEqual(JSON.parse(errors.stdout), {
    level: 50,
    time: 1_001_500,
    runId: "r1",
    job: "stored",
    kind: "connection",
    msg: "run failed (connection): no broker",
  });
  // From the job file's folder, the state root is ./.floe.
  assert.equal((await floe("logs", "r2")).code, 0);
  assert.equal((await floe("logs", "r1", "--state-dir", join(dir, "elsewhere"))).code, 1);

  // Without --config: the jobs of the store, from the store alone.
  const all = await floe("status", "--json");
  const [status] = JSON.parse(all.stdout);
  assert.equal(status.job, "stored");
  assert.equal(status.lastRun.runId, "r2");
  assert.equal(status.lastSuccess.runId, "r2");
  assert.equal(status.lag, null);
});
