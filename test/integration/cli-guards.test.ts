// Inputs that must stop floe with a clear message instead of a hang, a page of HTML or a bare
// library error, each tried as a user meets it: `node src/cli/main.ts sync|check --config job.yaml`
// in a child process, against local servers made for the case (a TCP server that accepts and
// never answers, an HTTP server that answers an HTML 404) and the real broker.
//
// The timeouts are set short in the job files, so a run that is not bounded hits the child's own
// kill timeout (minutes) and fails the test; nothing here measures how long a run took.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { TARGET_ENGINES } from "#src/job/target-engines.ts";
import { bootstrapServers, createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type FloeOutcome, floe as runFloe } from "../helpers/floe-cli.ts";
import { type IcebergSection, writeJobFile } from "../helpers/job-file.ts";

const run = `${process.pid}_${Date.now()}`;
const dir = mkdtempSync(join(tmpdir(), "floe-guards-"));
const topic = `guards${run}`;

function floe(args: string[], options: { uid?: number; gid?: number } = {}): Promise<FloeOutcome> {
  // Far above the timeouts the job files set, far below the minutes an unbounded wait takes.
  return runFloe(args, { cwd: dir, timeoutMs: 120_000, ...options });
}

/** A job over the test topic; `kafkaTimeouts` adds short connect and request timeouts. */
function jobFile(
  name: string,
  kafka: string,
  catalog: IcebergSection["catalog"] = { type: "sql", warehouse: `./warehouse_${name}` },
  kafkaTimeouts = false,
) {
  return writeJobFile(join(dir, `${name}.yaml`), {
    name,
    kafka: {
      bootstrap_servers: [kafka],
      topic_pattern: `^${topic}$`,
      ...(kafkaTimeouts && { connect_timeout: "2s", request_timeout: "2s" }),
    },
    iceberg: { catalog },
  });
}

/** A TCP server on 127.0.0.1 that accepts every connection and never sends a byte. */
async function silentServer(): Promise<{ address: string; accepted: () => number; close: () => Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    socket.on("error", () => {});
    sockets.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    accepted: () => sockets.length,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

before(async () => {
  await createTopic(topic);
});
after(async () => {
  await deleteTopic(topic);
  rmSync(dir, { recursive: true, force: true });
});

test("a bootstrap server that accepts and never answers: sync and check fail after request_timeout, naming the server and the step", async () => {
  const silent = await silentServer();
  try {
    const file = jobFile("silent_kafka", silent.address, undefined, true);
    for (const command of ["sync", "check"]) {
      const outcome = await floe([command, "--config", file]);
      assert.equal(outcome.code, 1, `${command}: ${outcome.stderr}`);
      assert.match(
        outcome.stderr,
        new RegExp(
          `^floe ${command}: Kafka at ${silent.address} over PLAINTEXT did not answer within 2 s \\(request_timeout\\): ` +
            `reading the cluster metadata: ${silent.address} accepted the connection but answered no request\\. `,
        ),
      );
      assert.match(outcome.stderr, /source\.kafka\.request_timeout sets how long floe waits/);
    }
    assert.ok(silent.accepted() > 0, "floe did connect");
  } finally {
    await silent.close();
  }
});

test("a REST catalog that accepts and never answers: the sync fails after request_timeout, naming the URL and the call", async () => {
  const silent = await silentServer();
  try {
    const file = jobFile("silent_catalog", bootstrapServers, {
      type: "rest",
      uri: `http://${silent.address}`,
      request_timeout: "1s",
    });
    for (const command of ["sync", "check"]) {
      const outcome = await floe([command, "--config", file]);
      assert.equal(outcome.code, 1, outcome.stderr);
      assert.match(
        outcome.stderr,
        new RegExp(
          `^floe ${command}: getConfig: the catalog at http://${silent.address}/v1/config did not answer within 1 s \\(request_timeout\\); check \`uri\` and that the catalog is up\\n$`,
        ),
      );
    }
  } finally {
    await silent.close();
  }
});

test("a catalog URL that answers an HTML 404 page: not an Iceberg REST endpoint, with the usual paths, without the page", async () => {
  const page = `<!DOCTYPE html><html><head><title>404 Not Found</title></head><body>${"<p>nothing here</p>".repeat(50)}</body></html>`;
  const server = createHttpServer((_request, response) => {
    response.writeHead(404, { "content-type": "text/html; charset=utf-8" });
    response.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  try {
    const file = jobFile("html_catalog", bootstrapServers, { type: "rest", uri: `http://127.0.0.1:${port}/workspace` });
    const outcome = await floe(["sync", "--config", file]);
    assert.equal(outcome.code, 1, outcome.stderr);
    assert.match(
      outcome.stderr,
      new RegExp(
        `^floe sync: getConfig: http://127\\.0\\.0\\.1:${port}/workspace does not look like an Iceberg REST catalog endpoint: ` +
          `GET http://127\\.0\\.0\\.1:${port}/workspace/v1/config answered HTTP 404 with an HTML page \\("404 Not Found"\\)\\. `,
      ),
    );
    assert.match(
      outcome.stderr,
      /for Databricks Unity Catalog it is https:\/\/<workspace>\/api\/2\.1\/unity-catalog\/iceberg-rest/,
    );
    assert.doesNotMatch(outcome.stderr, /<p>|<html|DOCTYPE/i, "the page itself is not printed");
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test("a read-only warehouse directory: the error names the database path and what floe tried to do there", async () => {
  // root writes through any permission bits, so as root the run is made as nobody (65534):
  // then, as for any other user, a directory without write permission is read-only.
  const asRoot = process.getuid?.() === 0;
  const shared = join(dir, "readonly");
  mkdirSync(shared);
  const warehouse = join(shared, "warehouse");
  mkdirSync(warehouse);
  chmodSync(dir, 0o755);
  chmodSync(shared, 0o755);
  chmodSync(warehouse, 0o555);
  const file = jobFile("readonly", bootstrapServers, { type: "sql", warehouse });
  chmodSync(file, 0o644);
  const asUser = asRoot ? { uid: 65534, gid: 65534 } : {};
  // nobody must reach node and floe's sources: a checkout in a private directory (mktemp -d
  // makes it 0700) is opened for traversal, only for this test.
  const reopened = asRoot ? openForTraversal([process.execPath, import.meta.filename]) : [];
  try {
    // The default state directory, .floe beside the job file, is not writable either.
    const noState = await floe(["sync", "--config", file], asUser);
    assert.equal(noState.code, 1, noState.stderr);
    assert.match(
      noState.stderr,
      new RegExp(`cannot create the state directory ${dir}/\\.floe/readonly .*pass --state-dir`),
    );
    const stateDir = join(dir, "readonly-state");
    mkdirSync(stateDir);
    chmodSync(stateDir, 0o777);
    const outcome = await floe(["sync", "--config", file, "--state-dir", stateDir], asUser);
    assert.equal(outcome.code, 1, outcome.stderr);
    const uid = asRoot ? 65534 : process.getuid?.();
    assert.equal(
      outcome.stderr,
      `floe sync: opening the sql catalog in ${warehouse}: cannot open or create the catalog database ${warehouse}/catalog.db: ` +
        `SQLite cannot create or open the file (unable to open database file): the directory ${warehouse} must be writable ` +
        `by this user (uid ${uid}), for the database and its -wal and -shm files\n`,
    );
  } finally {
    chmodSync(warehouse, 0o755);
    for (const { path, mode } of reopened) chmodSync(path, mode);
  }
});

/** Adds o+x to every ancestor directory of `files` that lacks it; returns their old modes. */
function openForTraversal(files: readonly string[]): { path: string; mode: number }[] {
  const changed = new Map<string, number>();
  for (const file of files) {
    for (let d = dirname(realpathSync(file)); d !== dirname(d); d = dirname(d)) {
      const mode = statSync(d).mode & 0o7777;
      if ((mode & 0o001) === 0 && !changed.has(d)) {
        changed.set(d, mode);
        chmodSync(d, mode | 0o001);
      }
    }
  }
  return [...changed].map(([path, mode]) => ({ path, mode }));
}

test("an invalid topic_pattern exits 2 naming source.kafka.topic_pattern", async () => {
  const file = join(dir, "bad_pattern.yaml");
  // Written as text: the message names the line and column of the key.
  writeFileSync(
    file,
    `name: bad_pattern
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    topic_pattern: orders(
streams:
  orders: {mode: append}
`,
  );
  for (const command of ["sync", "check"]) {
    const outcome = await floe([command, "--config", file]);
    assert.equal(outcome.code, 2, outcome.stderr);
    assert.equal(
      outcome.stderr,
      `floe ${command}: ${file}: invalid job file\n` +
        `  ${file}:5:20: source.kafka.topic_pattern: not a regular expression: Invalid regular expression: /orders(/: Unterminated group\n`,
    );
  }
});

test("an unknown name in target_engines exits 2 listing the known engines", async () => {
  const file = join(dir, "bad_engine.yaml");
  // Written as text: the message names the line and column of the misspelt engine.
  writeFileSync(
    file,
    `name: bad_engine
source:
  kafka:
    bootstrap_servers: [${bootstrapServers}]
    topic_pattern: ^${topic}$
destination:
  iceberg:
    target_engines: [duckdb, snowflak]
`,
  );
  const outcome = await floe(["sync", "--config", file]);
  assert.equal(outcome.code, 2, outcome.stderr);
  assert.equal(
    outcome.stderr,
    `floe sync: ${file}: invalid job file\n` +
      `  ${file}:8:30: destination.iceberg.target_engines[1]: expected ${TARGET_ENGINES.join(" | ")}, got "snowflak"\n`,
  );
});
