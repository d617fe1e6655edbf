// Smoke tests of the verification readers: each engine starts offline, and a table written by
// PyIceberg (independent of floe) reads back identically, value for value, in DuckDB,
// PyIceberg and Spark, from the REST catalog, from a SQLite catalog and by metadata path,
// before and after Spark deletes a row with a v3 deletion vector.
import { deepStrictEqual, ok } from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
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
} from "../helpers/readers.ts";
import { readerEnv } from "../services/readers.ts";

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

  test("DuckDB loads the iceberg extension from the pip package, offline", async () => {
    const rows = await readers.sql(
      "duckdb",
      "SELECT extension_name, installed FROM duckdb_extensions() WHERE loaded AND extension_name IN ('avro', 'httpfs', 'iceberg') ORDER BY 1",
      null,
    );
    // Loaded by path, not installed: nothing came from DuckDB's extension repository.
    deepStrictEqual(rows, [
      { extension_name: "avro", installed: false },
      { extension_name: "httpfs", installed: false },
      { extension_name: "iceberg", installed: false },
    ]);
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
