// The error model of iceberg/: each kind's retryable flag, the kinds of the errors callers tell
// apart (the one CatalogError by its kind), what an HTTP status says, and the commit loop retrying exactly what the kind allows.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type Catalog,
  CatalogError,
  CommitConflictError,
  commitStateUnknown,
  isCatalogError,
  isNoSuch,
  kindOfStatus,
  type LoadedTable,
  noSuch,
  refused,
} from "#src/iceberg/catalog/catalog.ts";
import { commitWithRetries } from "#src/iceberg/commit/retry.ts";
import { ValidationError } from "#src/iceberg/commit/validation-error.ts";
import {
  decodingFile,
  errorKind,
  ICEBERG_ERROR_KINDS,
  IcebergError,
  type IcebergErrorKind,
  isRetryable,
} from "#src/iceberg/errors.ts";
import { UnsupportedLocationError } from "#src/iceberg/io/file-io.ts";
import { localFileIO } from "#src/iceberg/io/local-file-io.ts";
import { ColumnTypeError } from "#src/iceberg/parquet/column-builders.ts";
import { UnsupportedDeleteFileError } from "#src/iceberg/scan/plan-files.ts";
import { unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import { newTableMetadata } from "#src/iceberg/spec/table-update.ts";
import { Table } from "#src/iceberg/table.ts";

test("only conflicts, unknown commit outcomes and failures on the way are worth retrying", () => {
  const retryable = ICEBERG_ERROR_KINDS.filter((kind) => new IcebergError(kind, "x").retryable);
  assert.deepEqual(retryable.sort(), ["commit-state-unknown", "conflict", "io"]);
  assert.deepEqual([...ICEBERG_ERROR_KINDS].sort(), [
    "already-exists",
    "auth",
    "commit-state-unknown",
    "conflict",
    "corrupt",
    "io",
    "not-found",
    "unsupported",
    "validation",
  ]);
});

test("the errors callers tell apart take their kind from the one model", () => {
  const cases: [Error, IcebergErrorKind][] = [
    [noSuch("table", "loadTable ns.t"), "not-found"],
    [noSuch("namespace", "listTables ns"), "not-found"],
    [new CatalogError("already-exists", "createTable ns.t", "it already exists"), "already-exists"],
    [new CatalogError("validation", "dropNamespace ns", "not empty"), "validation"],
    [commitStateUnknown("commitTable ns.t", "HTTP 502"), "commit-state-unknown"],
    [new CatalogError("auth", "loadTable ns.t", "denied", { status: 403 }), "auth"],
    [new CatalogError("io", "getConfig", "ECONNREFUSED"), "io"],
    [refused("commitTable ns.t", "bad", 400), "validation"],
    [refused("loadTable ns.t", "overloaded", 503), "io"],
    [refused("getConfig", "not JSON", 200, "corrupt"), "corrupt"],
    [new CommitConflictError("assert-ref-snapshot-id failed"), "conflict"],
    [new ValidationError("a data file was compacted away"), "validation"],
    [new UnsupportedDeleteFileError("ns.t", "/x/pos-deletes.parquet"), "unsupported"],
    [new UnsupportedLocationError("s3://bucket/t"), "unsupported"],
    [new ColumnTypeError({ id: 1, name: "id", required: true, type: "long" }, "1.5 is not a long"), "validation"],
  ];
  for (const [error, kind] of cases) {
    assert.ok(error instanceof IcebergError, error.name);
    assert.equal(errorKind(error), kind, error.name);
    assert.equal(isRetryable(error), new IcebergError(kind, "").retryable, error.name);
  }
  const call = noSuch("table", "loadTable ns.t");
  assert.ok(call instanceof CatalogError);
  assert.equal(call.call, "loadTable ns.t");
  assert.equal(String(call), "CatalogError: loadTable ns.t: the table does not exist");
  assert.equal(
    String(refused("loadTable ns.t", "overloaded", 503)),
    "CatalogError: loadTable ns.t: HTTP 503: overloaded",
  );
  assert.equal(refused("loadTable ns.t", "overloaded", 503).status, 503);
  assert.equal(
    commitStateUnknown("commitTable ns.t", "HTTP 502").message,
    "commitTable ns.t: commit state unknown: HTTP 502; reload the table to see whether the commit landed",
  );
});

test("callers tell catalog failures apart by kind, and a missing table from a missing namespace", () => {
  const table = noSuch("table", "loadTable ns.t");
  const namespace = noSuch("namespace", "listTables ns");
  const warehouse = refused("getConfig", "no such warehouse", 404);
  assert.ok(isCatalogError(table, "not-found") && isCatalogError(warehouse, "not-found"));
  assert.ok(!isCatalogError(table, "already-exists"));
  assert.ok(!isCatalogError(new IcebergError("not-found", "x"), "not-found"));
  assert.deepEqual(
    [table, namespace, warehouse].map((e) => [isNoSuch(e), isNoSuch(e, "table"), isNoSuch(e, "namespace")]),
    [
      [true, true, false],
      [true, false, true],
      [false, false, false],
    ],
  );
});

test("errorKind and isRetryable of errors from elsewhere", () => {
  assert.equal(errorKind(new Error("x")), undefined);
  assert.equal(errorKind("a string"), undefined);
  assert.equal(isRetryable(new Error("x")), false);
  assert.equal(isRetryable(undefined), false);
  // An error of another module may carry its own flag.
  assert.equal(isRetryable(Object.assign(new Error("x"), { retryable: true })), true);
  assert.equal(isRetryable(Object.assign(new Error("x"), { retryable: "yes" })), false);
});

test("an HTTP status says the kind of a refused request", () => {
  const kinds = [400, 401, 403, 404, 405, 406, 408, 409, 419, 422, 429, 500, 501, 502, 503, 504].map(
    (status) => `${status} ${kindOfStatus(status)}`,
  );
  assert.deepEqual(kinds, [
    "400 validation",
    "401 auth",
    "403 auth",
    "404 not-found",
    "405 unsupported",
    "406 unsupported",
    "408 io",
    "409 conflict",
    "419 auth",
    "422 validation",
    "429 io",
    "500 io",
    "501 unsupported",
    "502 io",
    "503 io",
    "504 io",
  ]);
  assert.equal(kindOfStatus(undefined), "validation");
});

test("decodingFile names the file of a decoder's failure and keeps other kinds as they are", () => {
  assert.throws(
    () =>
      decodingFile("/t/metadata/snap-1.avro", () => {
        throw new IcebergError("corrupt", "truncated Avro block");
      }),
    (e: unknown) =>
      errorKind(e) === "corrupt" && (e as Error).message === "/t/metadata/snap-1.avro: truncated Avro block",
  );
  assert.throws(
    () =>
      decodingFile("/t/data/a.parquet", () => {
        throw new RangeError("Offset is outside the bounds of the DataView");
      }),
    (e: unknown) =>
      errorKind(e) === "corrupt" && /^\/t\/data\/a\.parquet: Offset is outside/.test((e as Error).message),
  );
  const unsupported = new IcebergError("unsupported", "Avro codec snappy");
  assert.throws(
    () =>
      decodingFile("/t/m.avro", () => {
        throw unsupported;
      }),
    (e: unknown) => e === unsupported,
  );
});

test("a local file that is not there is not-found, naming it", async () => {
  await assert.rejects(localFileIO("/", {}).read("/nonexistent/floe/metadata.json"), (e: unknown) => {
    assert.equal(errorKind(e), "not-found");
    assert.match((e as Error).message, /^cannot read \/nonexistent\/floe\/metadata\.json: ENOENT/);
    return true;
  });
});

/** A table whose catalog fails each commit with the next error of `failures`, then accepts. */
function scriptedTable(failures: Error[]): { table: Table; commits: () => number; refreshes: () => number } {
  const metadata = newTableMetadata(
    { location: "/tmp/floe-retry", schema: { schemaId: 0, fields: [] }, spec: unpartitioned },
    0n,
  );
  const loaded: LoadedTable = {
    identifier: { namespace: ["ns"], name: "t" },
    metadata: { ...metadata, properties: { "commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "2" } },
    metadataLocation: "/tmp/floe-retry/metadata/00000.metadata.json",
    io: localFileIO("/", {}),
  };
  let commits = 0;
  let refreshes = 0;
  const catalog = {
    name: "scripted",
    loadTable: async () => {
      refreshes++;
      return loaded;
    },
    commitTable: async () => {
      const failure = failures[commits++];
      if (failure) throw failure;
      return loaded;
    },
  } as unknown as Catalog;
  return { table: new Table(catalog, loaded), commits: () => commits, refreshes: () => refreshes };
}

const request = async () => ({ requirements: [], updates: [] });

test("the commit loop retries conflicts, unknown outcomes and failures on the way", async () => {
  const { table, commits, refreshes } = scriptedTable([
    new CommitConflictError("commitTable ns.t: branch main moved"),
    commitStateUnknown("commitTable ns.t", "HTTP 502: bad gateway"),
    new CatalogError("io", "commitTable ns.t", "ECONNREFUSED"),
    refused("commitTable ns.t", "slow down", 429),
  ]);
  await commitWithRetries(table, request);
  assert.equal(commits(), 5);
  assert.equal(refreshes(), 4);
});

test("the commit loop throws at once what retrying cannot fix", async () => {
  for (const error of [
    refused("commitTable ns.t", "invalid update", 400),
    new CatalogError("auth", "commitTable ns.t", "denied", { status: 403 }),
    noSuch("table", "commitTable ns.t"),
    new Error("a bug"),
  ]) {
    const { table, commits, refreshes } = scriptedTable([error]);
    await assert.rejects(commitWithRetries(table, request), (e: unknown) => e === error);
    assert.equal(commits(), 1, error.message);
    assert.equal(refreshes(), 0, error.message);
  }
});

test("giving up keeps the last failure's kind", async () => {
  const conflicts = scriptedTable(Array.from({ length: 10 }, () => new CommitConflictError("moved")));
  await assert.rejects(commitWithRetries(conflicts.table, request), (e: unknown) => {
    assert.ok(e instanceof CommitConflictError, String(e));
    assert.match((e as Error).message, /^ns\.t: gave up after 10 commit attempts; last error: moved$/);
    return true;
  });
  const unknown = scriptedTable(Array.from({ length: 10 }, () => commitStateUnknown("commitTable ns.t", "502")));
  await assert.rejects(commitWithRetries(unknown.table, request), (e: unknown) => {
    assert.equal(errorKind(e), "commit-state-unknown");
    assert.ok(isCatalogError((e as Error).cause, "commit-state-unknown"));
    return true;
  });
});
