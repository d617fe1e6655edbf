// The kind of every failure a sync can end with, and whether running it again may help: what the
// failed event carries, and what the CLI's exit code and a scheduler's retries are chosen from.
import assert from "node:assert/strict";
import { test } from "node:test";
import { DeclaredColumnError } from "#src/decode/infer-schema.ts";
import {
  CatalogError,
  CommitConflictError,
  commitStateUnknown,
  noSuch,
  refused,
} from "#src/iceberg/catalog/catalog.ts";
import { ValidationError } from "#src/iceberg/commit/validation-error.ts";
import { ConfigError } from "#src/job/config-error.ts";
import { TopicSelectionError } from "#src/job/topics.ts";
import { ConsumerGroupActiveError } from "#src/kafka/commit-offsets.ts";
import { KafkaAuthorizationError, KafkaConnectionError, KafkaError } from "#src/kafka/errors.ts";
import { MessagesLostError, OffsetsAheadError } from "#src/kafka/plan.ts";
import { KafkaReadError } from "#src/kafka/read.ts";
import { BadMessageError } from "#src/pipeline/binding-batch.ts";
import { classifyError } from "#src/pipeline/classify-error.ts";
import { ConcurrentSyncError } from "#src/pipeline/offset-claim.ts";
import { newRunId } from "#src/pipeline/run-id.ts";

test("each error class has its kind; retryable says whether the same sync, run again, may succeed", () => {
  const lost = {
    topic: "t",
    partition: 0,
    resumeOffset: 1n,
    startFrom: "table" as const,
    logStartOffset: 5n,
    lost: 4n,
  };
  const cases: [unknown, string, boolean][] = [
    [new ConfigError("job.yaml", [{ path: ["name"], message: "required" }]), "config", false],
    [new TopicSelectionError("selects none"), "config", false],
    [new DeclaredColumnError("amount", "the table has it as string"), "table-schema", false],
    [new MessagesLostError([lost]), "data-loss", false],
    [
      new OffsetsAheadError([{ topic: "t", partition: 0, resumeOffset: 9n, startFrom: "table", highWatermark: 3n }]),
      "offsets-ahead",
      false,
    ],
    [new BadMessageError("t", 0, 3n, "not-json", "x"), "bad-message", false],
    [new ConcurrentSyncError("another writer"), "concurrent-sync", true],
    [
      new ConsumerGroupActiveError({ group: "g", exists: true, state: "Stable", type: "classic", members: [] }),
      "consumer-group-active",
      false,
    ],
    [new KafkaConnectionError(["k:1"], "cannot connect", "check it"), "connection", true],
    [new KafkaConnectionError(["k:1"], "refused", "check it", { reason: "refused" }), "connection", true],
    [new KafkaConnectionError(["k:1"], "wrong password", "check it", { reason: "authentication" }), "auth", false],
    [new KafkaConnectionError(["k:1"], "no SCRAM-SHA-256", "check it", { reason: "mechanism" }), "auth", false],
    [new KafkaConnectionError(["k:1"], "untrusted CA", "check it", { reason: "untrusted-certificate" }), "auth", false],
    [new KafkaConnectionError(["k:1"], "wrong host", "check it", { reason: "hostname-mismatch" }), "auth", false],
    [new KafkaConnectionError(["k:1"], "no client cert", "check it", { reason: "client-certificate" }), "auth", false],
    [
      new KafkaAuthorizationError(
        "reading",
        { principal: "User:u" },
        [{ resource: "group", name: "g", operations: ["Read"] }],
        ["k:1"],
      ),
      "auth",
      false,
    ],
    [
      new KafkaReadError("t", 0, 4n, "not allowed", {
        cause: new KafkaAuthorizationError(
          "fetching",
          { principal: "User:u" },
          [{ resource: "topic", name: "t", operations: ["Read"] }],
          ["k:1"],
        ),
      }),
      "auth",
      false,
    ],
    [new CatalogError("io", "loadTable ns.t", "refused"), "connection", true],
    [new CatalogError("auth", "loadTable ns.t", "forbidden", { status: 403 }), "auth", false],
    [new CommitConflictError("assert-ref-snapshot-id failed"), "commit-conflict", true],
    [new ValidationError("a deleted-from data file was compacted away"), "commit-conflict", true],
    [commitStateUnknown("commitTable ns.t", "HTTP 503"), "commit-state-unknown", true],
    [new KafkaReadError("t", 0, 4n, "gone"), "kafka", true],
    [new KafkaError("no watermark"), "kafka", true],
    [noSuch("table", "loadTable ns.t"), "catalog", false],
    [refused("createTable ns.t", "bad request", 400), "catalog", false],
    [refused("loadTable ns.t", "busy", 503), "connection", true],
    [new TypeError("x is undefined"), "internal", false],
    ["a string", "internal", false],
  ];
  for (const [error, kind, retryable] of cases) {
    const classified = classifyError(error);
    assert.deepEqual([classified.kind, classified.retryable], [kind, retryable], String(error));
    assert.equal(classified.message, error instanceof Error ? error.message : String(error));
  }
  assert.equal(classifyError(new ConcurrentSyncError("x")).name, "ConcurrentSyncError");
});

test("run ids are UUIDv7: the start time first, so that they sort by it, then random bits", () => {
  const early = newRunId(1_700_000_000_000);
  const late = newRunId(1_700_000_000_001);
  assert.match(early, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.ok(early < late);
  assert.equal(Number.parseInt(early.replaceAll("-", "").slice(0, 12), 16), 1_700_000_000_000);
  assert.notEqual(newRunId(5), newRunId(5));
});

test("object-store failures have their own kinds: auth and not-found are final, an unreachable store is retryable", async () => {
  const { StorageError } = await import("#src/iceberg/io/storage-error.ts");
  const cases: [string, string, boolean][] = [
    ["invalid-credentials", "storage-auth", false],
    ["access-denied", "storage-auth", false],
    ["expired-credentials", "storage-auth", false],
    ["no-such-bucket", "storage-not-found", false],
    ["not-found", "storage-not-found", false],
    ["unreachable", "storage-connection", true],
    ["wrong-region", "config", false],
    ["not-s3", "config", false],
    ["failed", "storage", false],
  ];
  for (const [storageKind, kind, retryable] of cases) {
    const error = new StorageError(storageKind as never, "write", "s3://b/k", "what the store said");
    assert.deepEqual([classifyError(error).kind, classifyError(error).retryable], [kind, retryable], storageKind);
    // Under another error (a table writer's), the store's kind still decides.
    const wrapped = new Error("writing a data file failed", { cause: error });
    assert.equal(classifyError(wrapped).kind, kind, `${storageKind} wrapped`);
  }
  const throttled = new StorageError("failed", "write", "s3://b/k", "SlowDown", {
    cause: Object.assign(new Error("SlowDown"), { $metadata: { httpStatusCode: 503 } }),
  });
  assert.deepEqual([classifyError(throttled).kind, classifyError(throttled).retryable], ["storage-connection", true]);
});
