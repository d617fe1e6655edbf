// The command line as a user meets it, with no service running: usage, flags that are wrong, a
// job file that is wrong, and the exit codes they give (src/cli/exit-codes.ts). Each case runs
// `node src/cli/main.ts ...` in a child process; nothing here reaches Kafka or a catalog.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type FloeOutcome, floe as runFloe } from "../../helpers/floe-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-cli-args-"));

function floe(...args: string[]): Promise<FloeOutcome> {
  return runFloe(args, { cwd: dir, timeoutMs: 60_000 });
}

test("--help lists every command; each command's --help shows its options, an example and its exit codes", async () => {
  const top = await floe("--help");
  assert.equal(top.code, 0);
  for (const command of ["sync", "check", "config"]) assert.match(top.stdout, new RegExp(`\\n  ${command}\\b`));
  for (const [args, options] of [
    [
      ["sync", "--help"],
      ["--config <file>", "--json", "--accept-data-loss", "--resume-from", "--wait"],
    ],
    [
      ["check", "--help"],
      ["--config <file>", "--json", "--sample <messages>"],
    ],
    [["config", "schema", "--help"], []],
  ] as const) {
    const help = await floe(...args);
    assert.equal(help.code, 0, args.join(" "));
    for (const option of options) assert.ok(help.stdout.includes(option), `${args.join(" ")}: ${option}`);
    assert.match(help.stdout, /Example:/);
    assert.match(help.stdout, /Exit codes: 0/);
  }
  assert.match((await floe("--version")).stdout, /^\d+\.\d+\.\d+\n$/);
});

test("every command and subcommand listed by --help has an example and its exit codes in its own --help", async () => {
  const top = await floe("--help");
  const commands = [...top.stdout.matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1]!).filter((c) => c !== "help");
  assert.deepEqual(commands.sort(), [
    "check",
    "config",
    "discover",
    "history",
    "init",
    "logs",
    "maintain",
    "run",
    "serve",
    "status",
    "sync",
  ]);
  for (const args of [...commands.map((c) => [c]), ["config", "schema"]]) {
    const help = await floe(...args, "--help");
    assert.equal(help.code, 0, args.join(" "));
    assert.match(help.stdout, /\nExample:\n {2}floe /, args.join(" "));
    assert.match(help.stdout, /\nExit codes: 0/, args.join(" "));
  }
});

test("usage errors exit 2 and say what was wrong: unknown command or option, a missing --config, bad values", async () => {
  const cases: [string[], RegExp][] = [
    [["nosuch"], /unknown command 'nosuch'/],
    [["sync", "--config", "job.yaml", "--no-such-flag"], /unknown option '--no-such-flag'/],
    [["sync"], /required option '-c, --config <file>' not specified/],
    [["check"], /required option '-c, --config <file>' not specified/],
    [["history", "--limit", "0"], /expected a positive integer/],
    [["history", "--limit", "1.5"], /expected a positive integer/],
    [["sync", "--config", "job.yaml", "--wait", "-3"], /expected a number of seconds/],
    [["check", "--config", "job.yaml", "--sample", "some"], /'--sample <messages>' argument 'some' is invalid/],
    [["check", "--config", "job.yaml", "--sample", "-1"], /'--sample <messages>' argument '-1' is invalid/],
    [["discover", "--config", "job.yaml", "--sample", "1.5"], /'--sample <messages>' argument '1.5' is invalid/],
    [["discover", "--config", "job.yaml", "--sample", ""], /'--sample <messages>' argument '' is invalid/],
    [["config", "nosuch"], /unknown command 'nosuch'/],
    [["serve", "--listen", "127.0.0.1:99999"], /--listen 127\.0\.0\.1:99999: expected HOST:PORT/],
  ];
  for (const [args, message] of cases) {
    const outcome = await floe(...args);
    assert.equal(outcome.code, 2, `${args.join(" ")}: ${outcome.stderr}`);
    assert.match(outcome.stderr, message, args.join(" "));
    assert.equal(outcome.stdout, "");
  }
});

test("a job file that is missing or wrong exits 2 before any connection, naming file, line and path", async () => {
  const missing = await floe("sync", "--config", join(dir, "none.yaml"));
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /none\.yaml: cannot read the job file: ENOENT/);

  const file = join(dir, "bad.yaml");
  writeFileSync(
    file,
    "name: bad\nsource:\n  kafka:\n    bootstrap_servers: [nohost]\n    security: {protocol: SASL_SSL}\nstreams:\n  t: {mode: upsert}\n",
  );
  for (const command of ["sync", "check"]) {
    const outcome = await floe(command, "--config", file, "--json");
    assert.equal(outcome.code, 2, outcome.stderr);
    const { error } = JSON.parse(outcome.stdout) as { error: string };
    assert.match(error, /bad\.yaml: 3 problems in job file/);
    assert.match(error, /bad\.yaml:3:\d+: source\.kafka\.sasl: required when security\.protocol is SASL_SSL/);
    assert.match(error, /bad\.yaml:4:\d+: source\.kafka\.bootstrap_servers\[0\]: expected host:port/);
    assert.match(error, /bad\.yaml:7:\d+: streams\.t\.dedup_keys: required when mode is upsert/);
  }
});

test("config schema prints the job file's JSON Schema and exits 0", async () => {
  const outcome = await floe("config", "schema");
  assert.equal(outcome.code, 0, outcome.stderr);
  const schema = JSON.parse(outcome.stdout) as { $schema: string; title: string; required: string[] };
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.equal(schema.title, "floe job file");
  assert.deepEqual(schema.required, ["name", "source"]);
  const config = await floe("config");
  assert.equal(config.code, 2, "a command group without its subcommand is a usage error");
  assert.match(config.stderr, /schema\s+print the JSON Schema of the job file/);
});
