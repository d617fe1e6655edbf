// The kinds of object-store failures, as `floe sync --json`, `floe history` and `floe run` see
// them, against MinIO and a closed port: a wrong secret is `storage-auth` (not retryable), an
// endpoint where nothing listens is `storage-connection` (retryable: `floe run` retries it with
// backoff instead of waiting for the next tick). `floe history` and `floe status` read the run
// store without the job's secrets in the environment.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${...} in plain strings is the job file's syntax
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { bootstrapServers, createTopic, deleteTopic, produce } from "../../dev/kafka.ts";
import { minio } from "../../dev/services/minio.ts";
import { floe } from "../helpers/floe-cli.ts";

const run = `${process.pid}_${Date.now()}`;
const topic = `storagekinds${run}`;
const dir = mkdtempSync(join(tmpdir(), "floe-storage-kinds-"));
const env = (extra: Record<string, string>) => {
  const { MINIO_TEST_SECRET: _drop, ...rest } = process.env;
  return { ...rest, AWS_EC2_METADATA_DISABLED: "true", ...extra };
};

before(async () => {
  await createTopic(topic, 1);
  await produce(topic, [{ value: JSON.stringify({ id: 1 }) }]);
});
after(async () => {
  await deleteTopic(topic);
  rmSync(dir, { recursive: true, force: true });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function jobFile(name: string, endpoint: string, schedule = ""): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    `name: ${name}
${schedule}
source:
  kafka: {bootstrap_servers: [${bootstrapServers}], topic_pattern: "^${topic}$"}
destination:
  iceberg:
    catalog: {type: sql, warehouse: "s3://${minio.warehouseBucket}/${name}", uri: ${join(dir, `${name}.db`)}}
    storage:
      s3: {endpoint: "${endpoint}", region: us-east-1, access_key_id: ${minio.rootUser}, secret_access_key: "\${MINIO_TEST_SECRET}"}
streams:
  ${topic}: {mode: append, table: events}
`,
  );
  return file;
}

const wrongSecretJob = jobFile(`wrongsecret${run}`, minio.endpoint);

test("a wrong S3 secret is storage-auth, not retryable", async () => {
  const file = wrongSecretJob;
  const synced = await floe(["sync", "--config", file, "--json"], {
    env: env({ MINIO_TEST_SECRET: "not-the-secret" }),
  });
  assert.equal(synced.code, 1, synced.stderr);
  const failure = JSON.parse(synced.stdout.trim().split("\n").at(-1)!);
  assert.deepEqual([failure.kind, failure.retryable], ["storage-auth", false], synced.stdout);
  assert.ok(!synced.stdout.includes("not-the-secret"));
});

test("floe history and floe status read the run store without the job's secrets in the environment", async () => {
  const file = wrongSecretJob;
  // No MINIO_TEST_SECRET in the environment: history needs none.
  const history = await floe(["history", "--config", file, "--json"], { env: env({}) });
  assert.equal(history.code, 0, history.stderr);
  const [last] = JSON.parse(history.stdout);
  assert.equal(last.outcome, "failed", history.stdout);
  assert.equal(last.error.kind, "storage-auth", history.stdout);
  const status = await floe(["status", "--config", file, "--json"], { env: env({}) });
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /MINIO_TEST_SECRET not set/);
});

test("an S3 endpoint where nothing listens is storage-connection, retryable, and floe run retries it with backoff", async () => {
  const endpoint = `http://127.0.0.1:${await closedPort()}`;
  const file = jobFile(`closed${run}`, endpoint);
  const synced = await floe(["sync", "--config", file, "--json"], {
    env: env({ MINIO_TEST_SECRET: minio.rootPassword }),
  });
  assert.equal(synced.code, 1, synced.stderr);
  const failure = JSON.parse(synced.stdout.trim().split("\n").at(-1)!);
  assert.deepEqual([failure.kind, failure.retryable], ["storage-connection", true], synced.stdout);

  // One tick, in a few seconds, then none for a day: a second attempt soon after is the retry.
  const tick = new Date(Date.now() + 4000);
  const cron = `${tick.getSeconds()} ${tick.getMinutes()} ${tick.getHours()} * * *`;
  const scheduled = jobFile(`closedrun${run}`, endpoint, `schedule: "${cron}"`);
  const child = spawn(
    process.execPath,
    [
      join(import.meta.dirname, "..", "..", "src", "cli", "main.ts"),
      "run",
      "--config",
      scheduled,
      "--retry-delay",
      "1",
      "--log-format",
      "json",
    ],
    { env: env({ MINIO_TEST_SECRET: minio.rootPassword }), stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no retry within 90 s:\n${out}`)), 120_000);
      child.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (/retrying after a retryable failure \(2 in a row\)/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("exit", (code) => reject(new Error(`floe run exited with ${code}:\n${out}`)));
    });
  } finally {
    child.kill("SIGTERM");
  }
  assert.match(out, /storage-connection/);
});
