// Smoke tests of the verification readers: each engine starts offline, and a table written by
// PyIceberg (independent of floe) reads back identically, value for value, in DuckDB,
// PyIceberg and Spark, from the REST catalog, from a SQLite catalog and by metadata path,
// before and after Spark deletes a row with a v3 deletion vector. DuckDB's extensions and
// secrets in the user's home take no part.
import { deepStrictEqual, ok } from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  allEngines,
  type Readers,
  type Row,
  restTable,
  type SqlCatalogRef,
  startReaders,
  type TableRef,
} from "../../dev/readers.ts";
import { readerEnv } from "../../dev/services/readers.ts";

const namespace = "readers_smoke";

// sample_table.py's rows, in the readers' default order (by id, then the other columns).
const alpha: Row = {
  id: 1n,
  small: 7,
  name: "alpha",
  price: "9.90",
  ratio: 0.5,
  day: "2024-01-31",
  at: "2024-01-31T13:45:00.123456Z",
  local_at: "2024-01-31T13:45:00.000000",
  flag: true,
  payload: Buffer.from([0x00, 0xff]),
  uid: "123e4567-e89b-12d3-a456-426614174000",
  address: { city: "Oslo", zip: 150 },
  tags: ["a", null, "b"],
  attrs: [
    ["w", 2n],
    ["x", 1n],
  ],
};
const allNull: Row = {
  id: 3n,
  ...Object.fromEntries(Object.keys(alpha).flatMap((k) => (k === "id" ? [] : [[k, null]]))),
};
// Beyond Number.MAX_SAFE_INTEGER, NaN, the epoch, empty binary/list/map, a struct of nulls.
const beta: Row = {
  id: 9007199254740993n,
  small: -1,
  name: "beta",
  price: "-0.05",
  ratio: Number.NaN,
  day: "1970-01-01",
  at: "1970-01-01T00:00:00.000000Z",
  local_at: "2000-02-29T23:59:59.999999",
  flag: false,
  payload: Buffer.alloc(0),
  uid: null,
  address: { city: null, zip: null },
  tags: [],
  attrs: [],
};

function writeSampleTable(table: TableRef): string {
  const script = join(dirname(fileURLToPath(import.meta.url)), "readers", "sample_table.py");
  const output = execFileSync(readerEnv.python, [script, JSON.stringify(table)], { encoding: "utf8" });
  return (JSON.parse(output) as { metadataLocation: string }).metadataLocation;
}

/** The extensions come from the pip packages, installed into .local (not ~/.duckdb), and DuckDB
 * would neither fetch nor load one by itself. */
async function assertDuckDBExtensions(readers: Readers): Promise<void> {
  const extensionDirectory = join(readerEnv.duckdb, "extensions");
  const rows = await readers.sql(
    "duckdb",
    "SELECT extension_name, install_path, installed_from FROM duckdb_extensions() WHERE loaded AND extension_name IN ('avro', 'aws', 'httpfs', 'iceberg') ORDER BY 1",
    null,
  );
  deepStrictEqual(
    rows.map((row) => row.extension_name),
    ["avro", "httpfs", "iceberg"],
  );
  for (const { extension_name: name, install_path: path, installed_from: origin } of rows) {
    ok(
      String(path).startsWith(`${extensionDirectory}/`),
      `${name} loaded from ${path}, not from ${extensionDirectory}`,
    );
    ok(
      String(origin).includes(`/site-packages/duckdb_extension_${name}/`),
      `${name} installed from ${origin}, not from its pip package`,
    );
  }
  deepStrictEqual(
    await readers.sql(
      "duckdb",
      "SELECT current_setting('autoinstall_known_extensions') AS autoinstall, current_setting('autoload_known_extensions') AS autoload, current_setting('extension_directory') AS directory",
      null,
    ),
    [{ autoinstall: false, autoload: false, directory: extensionDirectory }],
  );
}

/** Reads with every engine, reporting each one's latency. */
async function assertEveryEngine(
  readers: Readers,
  table: TableRef,
  expected: Row[],
  report: (message: string) => void,
): Promise<void> {
  for (const engine of readers.engines) {
    const started = performance.now();
    const rows = await readers.rows(engine, table);
    report(`${engine} read in ${(performance.now() - started).toFixed(0)} ms`);
    deepStrictEqual(rows, expected, `${engine} read other rows than expected`);
  }
}

describe("verification readers", () => {
  let readers: Readers;
  const scratch = mkdtempSync(join(tmpdir(), "floe-readers-"));

  before(async () => {
    readers = await startReaders();
  });

  after(async () => {
    await readers?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  test("all engines start, Spark included", (t) => {
    deepStrictEqual(readers.engines, allEngines);
    t.diagnostic(`startup seconds: ${JSON.stringify(readers.startup)}`);
  });

  test("DuckDB loads the extensions of the pip packages from its own directory, offline", async () => {
    await assertDuckDBExtensions(readers);
  });

  test("reader processes that start together on an empty extension directory all connect", async () => {
    // Test files run side by side, each with its reader process; DuckDB fails, rather than
    // waits, when two connections install an extension into one directory at once.
    const directory = join(scratch, "duckdb-together");
    const engines = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dev", "readers");
    const connect = [
      "import sys",
      `sys.path.insert(0, ${JSON.stringify(engines)})`,
      "import engines",
      `print(engines.connect_duckdb(${JSON.stringify(directory)}).execute("SELECT 42").fetchone()[0])`,
    ].join("\n");
    const runs = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          new Promise<{ code: number | null; output: string }>((resolve) => {
            const child = spawn(readerEnv.python, ["-c", connect], { stdio: ["ignore", "pipe", "pipe"] });
            let output = "";
            child.stdout.on("data", (chunk) => (output += chunk));
            child.stderr.on("data", (chunk) => (output += chunk));
            child.on("close", (code) => resolve({ code, output }));
          }),
      ),
    );
    for (const run of runs) {
      deepStrictEqual({ code: run.code, output: run.output.trim().split("\n").at(-1) }, { code: 0, output: "42" });
    }
  });

  test("a HOME with DuckDB extensions and secrets of its own changes nothing", async () => {
    const home = join(scratch, "home");
    const extensions = join(home, ".duckdb", "extensions", "v1.5.5", "linux_amd64");
    mkdirSync(extensions, { recursive: true });
    for (const name of ["avro", "httpfs", "iceberg", "aws"]) {
      writeFileSync(join(extensions, `${name}.duckdb_extension`), "not an extension");
    }
    // DuckDB reads every persistent secret of its secret directory on the first secret lookup
    // (an ATTACH does one) and fails on one it cannot parse.
    const secrets = join(home, ".duckdb", "stored_secrets");
    mkdirSync(secrets, { recursive: true });
    writeFileSync(join(secrets, "other.duckdb_secret"), "not a secret", { mode: 0o600 });

    const table = restTable(namespace, "home_sample");
    const metadataLocation = writeSampleTable(table);
    const duckdb = await startReaders({ engines: ["duckdb"], env: { HOME: home } });
    try {
      await duckdb.assertRows(table, [alpha, allNull, beta]);
      await duckdb.assertRows({ metadataLocation }, [alpha, allNull, beta]);
      await assertDuckDBExtensions(duckdb);
    } finally {
      await duckdb.close();
    }
  });

  test("Spark with the Iceberg runtime lists the REST catalog's namespaces", async () => {
    await readers.spark(`CREATE NAMESPACE IF NOT EXISTS rest.${namespace}`);
    const rows = await readers.spark("SHOW NAMESPACES IN rest");
    ok(
      rows.some((row) => row.namespace === namespace),
      `${namespace} missing from ${JSON.stringify(rows)}`,
    );
  });

  test("a PyIceberg table in the REST catalog reads the same everywhere, deletion vectors applied", async (t) => {
    const table = restTable(namespace, "sample");
    writeSampleTable(table);
    await assertEveryEngine(readers, table, [alpha, allNull, beta], (m) => t.diagnostic(m));

    // PyIceberg 0.12 cannot write v3; Spark upgrades the table and deletes with a DV.
    await readers.spark(
      `ALTER TABLE rest.${namespace}.sample SET TBLPROPERTIES ('format-version' = '3', 'write.delete.mode' = 'merge-on-read')`,
    );
    await readers.spark(`DELETE FROM rest.${namespace}.sample WHERE name = 'beta'`);
    deepStrictEqual(
      await readers.spark(`SELECT content, file_format, record_count FROM rest.${namespace}.sample.delete_files`),
      [{ content: 1, file_format: "PUFFIN", record_count: 1n }],
    );
    await assertEveryEngine(readers, table, [alpha, allNull], (m) => t.diagnostic(m));
  });

  test("a PyIceberg table in a SQLite catalog reads the same everywhere, by catalog and by path", async (t) => {
    const catalog: SqlCatalogRef = {
      type: "sql",
      name: "floe_readers",
      uri: join(scratch, "catalog.db"),
      warehouse: join(scratch, "warehouse"),
    };
    const metadataLocation = writeSampleTable({ catalog, namespace, table: "sample" });
    await assertEveryEngine(readers, { catalog, namespace, table: "sample" }, [alpha, allNull, beta], (m) =>
      t.diagnostic(m),
    );
    await readers.assertRows({ metadataLocation }, [alpha, allNull, beta]);
    await readers.assertRows({ metadataLocation }, [{ name: "alpha" }, { name: "beta" }, { name: null }], {
      columns: ["name"],
      orderBy: ["name"],
    });
  });

  test("a failing query names the engine, the query and Python's message", async () => {
    await readers.spark("SELECT * FROM rest.no_such_namespace.no_such_table").then(
      () => Promise.reject(new Error("the query should have failed")),
      (error: Error) => {
        ok(error.message.startsWith("spark failed on SELECT * FROM rest.no_such_namespace"), error.message);
        ok(error.message.includes("TABLE_OR_VIEW_NOT_FOUND"), error.message);
      },
    );
  });
});
