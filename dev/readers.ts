// The verification readers of the integration tests and the demo: DuckDB (iceberg extension), PyIceberg and
// Spark (Iceberg runtime) in one long-lived Python process, dev/readers/reader_server.py,
// spoken to in JSON lines; each engine answers on a thread of its own, so requests to different
// engines run at the same time. Start it once per test file, Spark alone takes seconds to come up:
//
//   const readers = await startReaders();
//   after(() => readers.close());
//   await readers.assertRows(restTable("db", "orders"), [{ id: 1n, amount: "9.90" }]);
//
// Values are normalised so that the engines' rows compare equal with deepStrictEqual:
//   int8/16/32 -> number; int64 (Iceberg long) -> bigint; float/double -> number (NaN, ±Infinity too);
//   decimal -> string with the type's scale ("12.30"); string and uuid -> string;
//   binary and fixed -> Buffer; date -> "2024-01-31"; time -> "13:45:00.000000";
//   timestamp -> "2024-01-31T13:45:00.000000" (9 fraction digits for timestamp_ns);
//   timestamptz -> the same in UTC with a trailing "Z"; struct -> object; list -> array;
//   map -> array of [key, value] pairs sorted by key; null -> null.
import { deepStrictEqual } from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync } from "node:fs";
import type { Socket } from "node:net";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { restCatalog } from "./services/iceberg-rest.ts";
import { restS3Catalog } from "./services/iceberg-rest-s3.ts";
import { localDir, logDir } from "./services/lib.ts";
import { minio } from "./services/minio.ts";
import { readerEnv, sparkS3Jars } from "./services/readers.ts";
import { seaweedfs } from "./services/seaweedfs.ts";

export type Engine = "duckdb" | "pyiceberg" | "spark";
export const allEngines: readonly Engine[] = ["duckdb", "pyiceberg", "spark"];

export interface RestCatalogRef {
  type: "rest";
  uri: string;
  warehouse?: string;
  /** The catalog's name in DuckDB and Spark SQL. */
  name: string;
  /** Static S3 settings for tables in s3:// locations (DuckDB's S3 secret, PyIceberg's and Spark's S3FileIO properties). */
  s3?: S3Access;
  /** OAuth2 client credentials, for a catalog that wants a token (exchanged at <uri>/v1/oauth/tokens). */
  oauth2?: { clientId: string; clientSecret: string };
}

export interface S3Access {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The bucket these keys are for ("s3://bucket"): DuckDB picks an S3 secret by the longest scope, so two stores never mix. */
  scope: string;
}

export interface SqlCatalogRef {
  type: "sql";
  /** Path of the SQLite file (JDBC catalog layout, as floe and PyIceberg's SqlCatalog write it). */
  uri: string;
  warehouse: string;
  /** The catalog_name column the writer filled in; Spark's JDBC catalog must bear the same name. */
  name: string;
}

export type CatalogRef = RestCatalogRef | SqlCatalogRef;

/** A table in a catalog, or one that only a metadata file describes (read by path). */
export type TableRef = { catalog: CatalogRef; namespace: string; table: string } | { metadataLocation: string };

export type Row = Record<string, unknown>;

export interface RowsOptions {
  /** Columns to read (all by default). */
  columns?: string[];
  /** Sort keys, ascending, nulls last; by default every top-level column of primitive type, in
   * schema order, so engines that scan files in different orders return the same rows. */
  orderBy?: string[];
}

/** The test REST catalog (dev/services/iceberg-rest.ts), known as "rest" in SQL. */
export const testRestCatalog: RestCatalogRef = {
  type: "rest",
  name: "rest",
  uri: restCatalog.uri,
  warehouse: restCatalog.warehouse,
};

export function restTable(namespace: string, table: string): TableRef {
  return { catalog: testRestCatalog, namespace, table };
}

/**
 * The S3 REST fixture (dev/services/iceberg-rest-s3.ts), known as "rest_s3" in SQL, read with
 * MinIO's root credentials: the readers check what is in the bucket, whatever floe was vended.
 */
export const testRestS3Catalog: RestCatalogRef = {
  type: "rest",
  name: "rest_s3",
  uri: restS3Catalog.uri,
  warehouse: restS3Catalog.warehouse,
  s3: {
    endpoint: minio.endpoint,
    region: minio.region,
    accessKeyId: minio.rootUser,
    secretAccessKey: minio.rootPassword,
    scope: `s3://${minio.warehouseBucket}`,
  },
};

export function restS3Table(namespace: string, table: string): TableRef {
  return { catalog: testRestS3Catalog, namespace, table };
}

/**
 * SeaweedFS's own Iceberg catalog (dev/services/seaweedfs.ts), known as "seaweedfs" in SQL: its
 * table bucket as the warehouse, the admin identity's keys as OAuth2 client credentials and as
 * static S3 keys for the files.
 */
export const testSeaweedfsCatalog: RestCatalogRef = {
  type: "rest",
  name: "seaweedfs",
  uri: seaweedfs.catalogUri,
  warehouse: `s3://${seaweedfs.tableBucket}`,
  s3: {
    endpoint: seaweedfs.s3Endpoint,
    region: seaweedfs.region,
    accessKeyId: seaweedfs.accessKeyId,
    secretAccessKey: seaweedfs.secretAccessKey,
    scope: `s3://${seaweedfs.tableBucket}`,
  },
  oauth2: { clientId: seaweedfs.accessKeyId, clientSecret: seaweedfs.secretAccessKey },
};

export function seaweedfsTable(namespace: string, table: string): TableRef {
  return { catalog: testSeaweedfsCatalog, namespace, table };
}

export interface StartOptions {
  /** Engines to start now (default all three); assertRows checks these. */
  engines?: readonly Engine[];
  /** Spark driver heap, e.g. "1g" (the default). */
  sparkDriverMemory?: string;
  /** Environment variables of the reader process on top of this one's (a test's own HOME). */
  env?: Record<string, string>;
  /** Tables in s3:// locations will be read: Spark gets iceberg-aws-bundle on its class path. */
  s3?: boolean;
}

export interface Readers {
  readonly engines: readonly Engine[];
  /** Seconds each started engine took to come up. */
  readonly startup: Readonly<Partial<Record<Engine, number>>>;
  /** Every live row of the table (deletion vectors applied), normalised. */
  rows(engine: Engine, table: TableRef, options?: RowsOptions): Promise<Row[]>;
  /** A statement in DuckDB or Spark SQL, with the catalog attached under its name (default:
   * the test REST catalog as "rest"; null for none). Rows keep the query's order. */
  sql(engine: "duckdb" | "spark", query: string, catalog?: CatalogRef | null): Promise<Row[]>;
  /** Spark SQL against the test REST catalog, e.g. CALL rest.system.rewrite_data_files(...). */
  spark(query: string): Promise<Row[]>;
  /** Asserts that every started engine reads exactly `expected`, in the order of `options`. */
  assertRows(table: TableRef, expected: Row[], options?: RowsOptions): Promise<void>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A failure inside the reader process, naming the engine and what it was asked. */
export class ReaderError extends Error {
  readonly engine: string;
  readonly pythonTraceback: string;

  constructor(engine: string, what: string, message: string, pythonTraceback = "") {
    super(`${engine} failed on ${what}: ${message}`);
    this.name = "ReaderError";
    this.engine = engine;
    this.pythonTraceback = pythonTraceback;
  }
}

const serverScript = join(dirname(fileURLToPath(import.meta.url)), "readers", "reader_server.py");
const stderrTailChars = 4000;

interface Pending {
  engine: string;
  what: string;
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

export async function startReaders(options: StartOptions = {}): Promise<Readers> {
  if (!existsSync(readerEnv.python)) {
    throw new Error(`readers: no Python venv at ${readerEnv.python}; run: npm run services -- install readers`);
  }
  const engines = options.engines ?? allEngines;
  const server = new ReaderProcess(options.env);
  try {
    const startup = (await server.request(engines.join(", "), "start", {
      op: "start",
      engines,
      options: {
        sparkJars: readerEnv.sparkJars,
        sparkExtraJars: options.s3 ? [sparkS3Jars()] : [],
        sparkDriverMemory: options.sparkDriverMemory ?? "1g",
        duckdbDirectory: readerEnv.duckdb,
      },
    })) as Partial<Record<Engine, number>>;
    const readers: Readers = {
      engines,
      startup,
      async rows(engine, table, rowsOptions = {}) {
        return (await server.request(engine, `rows(${describe(table)})`, {
          op: "rows",
          engine,
          table,
          columns: rowsOptions.columns,
          orderBy: rowsOptions.orderBy,
        })) as Row[];
      },
      async sql(engine, query, catalog = testRestCatalog) {
        return (await server.request(engine, query, { op: "sql", engine, query, catalog })) as Row[];
      },
      spark(query) {
        return readers.sql("spark", query);
      },
      async assertRows(table, expected, rowsOptions) {
        // The engines read at the same time (each on its own thread of the reader process).
        const read = await Promise.all(engines.map((engine) => readers.rows(engine, table, rowsOptions)));
        for (const [i, engine] of engines.entries()) {
          deepStrictEqual(read[i], expected, `${engine} read other rows than expected from ${describe(table)}`);
        }
      },
      close: () => server.close(),
      [Symbol.asyncDispose]: () => server.close(),
    };
    return readers;
  } catch (error) {
    await server.close();
    throw error;
  }
}

function describe(table: TableRef): string {
  return "metadataLocation" in table
    ? table.metadataLocation
    : `${table.catalog.name}.${table.namespace}.${table.table}`;
}

/** The Python process and its request/response bookkeeping. */
class ReaderProcess {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #stderrTail = "";
  #exited: Promise<void>;
  #exitReason: string | undefined;

  constructor(env: Record<string, string> = {}) {
    mkdirSync(logDir, { recursive: true });
    const log = createWriteStream(join(logDir, "readers.log"), { flags: "a" });
    this.#child = spawn(readerEnv.python, [serverScript], {
      // Whatever a reader leaves in its working directory stays in the git-ignored .local/.
      cwd: localDir,
      // SPARK_LOCAL_IP keeps Spark from resolving the host name to a non-loopback address.
      // No __pycache__/ in the source tree next to reader_server.py.
      env: {
        ...process.env,
        ...env,
        SPARK_LOCAL_IP: "127.0.0.1",
        // The AWS SDKs of the readers look up neither instance metadata nor a region of their own.
        AWS_EC2_METADATA_DISABLED: "true",
        AWS_REGION: minio.region,
        PYTHONUNBUFFERED: "1",
        PYTHONDONTWRITEBYTECODE: "1",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.#child.stderr.on("data", (chunk: Buffer) => {
      log.write(chunk);
      this.#stderrTail = (this.#stderrTail + chunk.toString()).slice(-stderrTailChars);
    });
    // A write to a process that just died fails with EPIPE; the exit handler reports the death.
    this.#child.stdin.on("error", () => {});
    createInterface({ input: this.#child.stdout }).on("line", (line) => this.#answer(line));
    this.#exited = new Promise((resolve) => {
      this.#child.on("error", (error) => {
        this.#fail(`could not run ${readerEnv.python}: ${error.message}`);
        resolve();
      });
      this.#child.on("exit", (code, signal) => {
        this.#fail(`the reader process exited (${signal ?? `code ${code}`})`);
        log.end();
        resolve();
      });
    });
    this.#setActive(false);
  }

  request(engine: string, what: string, body: { op: string } & Record<string, unknown>): Promise<unknown> {
    if (this.#exitReason !== undefined) {
      return Promise.reject(new ReaderError(engine, what, this.#exitReason));
    }
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { engine, what, resolve, reject });
      this.#setActive(true);
      this.#child.stdin.write(`${JSON.stringify({ id, ...body })}\n`);
    });
  }

  async close(): Promise<void> {
    if (this.#exitReason === undefined) {
      this.#setActive(true);
      this.#child.stdin.end();
      const timeout = setTimeout(() => this.#child.kill("SIGKILL"), 30_000);
      await this.#exited;
      clearTimeout(timeout);
    }
  }

  #answer(line: string): void {
    const response = JSON.parse(line, revive) as {
      id: number;
      ok: boolean;
      result?: unknown;
      error?: string;
      traceback?: string;
    };
    const pending = this.#pending.get(response.id);
    if (pending === undefined) return;
    this.#pending.delete(response.id);
    if (this.#pending.size === 0) this.#setActive(false);
    if (response.ok) pending.resolve(response.result);
    else pending.reject(new ReaderError(pending.engine, pending.what, response.error ?? "", response.traceback));
  }

  #fail(reason: string): void {
    this.#exitReason ??= `${reason}; last output:\n${this.#stderrTail}`;
    for (const pending of this.#pending.values()) {
      pending.reject(new ReaderError(pending.engine, pending.what, this.#exitReason));
    }
    this.#pending.clear();
  }

  /** An idle reader must not keep a test file's process alive if the test forgets close(). */
  #setActive(active: boolean): void {
    for (const stream of [this.#child.stdin, this.#child.stdout, this.#child.stderr]) {
      const socket = stream as unknown as Socket;
      if (active) socket.ref();
      else socket.unref();
    }
    if (active) this.#child.ref();
    else this.#child.unref();
  }
}

/** Decodes the tagged values of arrow_json.py: {"$int64"}, {"$bytes"}, {"$float"}. */
function revive(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const tagged = value as Record<string, unknown>;
  const keys = Object.keys(tagged);
  if (keys.length !== 1) return value;
  switch (keys[0]) {
    case "$int64":
      return BigInt(tagged.$int64 as string);
    case "$bytes":
      return Buffer.from(tagged.$bytes as string, "base64");
    case "$float":
      return Number(tagged.$float);
    default:
      return value;
  }
}
