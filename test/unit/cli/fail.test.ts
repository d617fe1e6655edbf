// How a command reports a failure: the exit code by what failed, and in --json the Iceberg
// error's kind and retryable flag beside the message.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ExitCode } from "#src/cli/exit-codes.ts";
import { fail } from "#src/cli/fail.ts";
import { CatalogError, CommitConflictError } from "#src/iceberg/catalog/catalog.ts";
import { IcebergError } from "#src/iceberg/errors.ts";
import { ConfigError } from "#src/job/config-error.ts";
import { type LostMessages, MessagesLostError } from "#src/kafka/plan.ts";

/** fail() with --json, its exit code and the JSON it wrote. */
function failJson(error: unknown): { code: ExitCode; body: unknown } {
  const write = process.stdout.write;
  let out = "";
  process.stdout.write = ((chunk: string) => {
    out += chunk;
    return true;
  }) as typeof process.stdout.write;
  try {
    const code = fail("sync", error, true);
    return { code, body: JSON.parse(out) };
  } finally {
    process.stdout.write = write;
  }
}

test("a failure says its kind (the sync's classification) and whether to retry; the exit code keeps its meaning", () => {
  assert.deepEqual(failJson(new CatalogError("io", "getConfig", "ECONNREFUSED")), {
    code: ExitCode.FAILED,
    body: { error: "getConfig: ECONNREFUSED", kind: "connection", retryable: true },
  });
  assert.deepEqual(failJson(new IcebergError("corrupt", "/t/m.json: table-uuid: expected a string, got nothing")), {
    code: ExitCode.FAILED,
    body: { error: "/t/m.json: table-uuid: expected a string, got nothing", kind: "catalog", retryable: false },
  });
  assert.deepEqual(failJson(new ConfigError("job.yaml", [{ path: ["name"], message: "required" }])), {
    code: ExitCode.USAGE,
    body: { error: "job.yaml: invalid job file\n  job.yaml: name: required", kind: "config", retryable: false },
  });
});

test("commits that lost to other writers through every retry are BUSY: run again later", () => {
  const { code, body } = failJson(new CommitConflictError("ns.t: gave up after 10 commit attempts; last error: moved"));
  assert.equal(code, ExitCode.BUSY);
  assert.deepEqual(body, {
    error: "ns.t: gave up after 10 commit attempts; last error: moved",
    kind: "commit-conflict",
    retryable: true,
  });
});

test("expired messages are DATA_LOSS with the lost messages, int64s as strings", () => {
  const lost: LostMessages = {
    topic: "orders",
    partition: 0,
    lost: 5n,
    resumeOffset: 9007199254740993n,
    logStartOffset: 9007199254740993n,
    startFrom: "table",
  };
  const { code, body } = failJson(new MessagesLostError([lost]));
  assert.equal(code, ExitCode.DATA_LOSS);
  assert.deepEqual((body as { lostMessages: unknown }).lostMessages, [
    { ...lost, lost: "5", resumeOffset: "9007199254740993", logStartOffset: "9007199254740993" },
  ]);
});
