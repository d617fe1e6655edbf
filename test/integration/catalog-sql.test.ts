// floe's embedded SQL catalog: the same flow as the REST catalog on a temporary warehouse,
// concurrent writers (one process and two) that must never lose a commit, and the database
// shared both ways with PyIceberg's SqlCatalog (the reader venv's PyIceberg 0.12).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { CommitConflictError, isCatalogError, isNoSuch, type TableIdentifier } from "#src/iceberg/catalog/catalog.ts";
import { metadataFileVersion } from "#src/iceberg/catalog/metadata-file.ts";
import { openSqlCatalog, type SqlCatalog } from "#src/iceberg/catalog/sql-catalog.ts";
import type { Schema } from "#src/iceberg/spec/schema.ts";
import { MAIN_BRANCH, newSnapshotId } from "#src/iceberg/spec/snapshot.ts";
import { readerEnv } from "../../dev/services/readers.ts";

const run = promisify(execFile);
const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: "id", required: true, type: "long" },
    { id: 2, name: "payload", required: false, type: "string" },
  ],
};
const unpartitioned = { specId: 0, fields: [] };
const orders: TableIdentifier = { namespace: ["kafka_topics"], name: "orders" };

let warehouse: string;
let catalog: SqlCatalog;

before(async () => {
  warehouse = await mkdtemp(join(tmpdir(), "floe-sql-catalog-"));
  catalog = await openSqlCatalog({ warehouse, name: "floe" });
});

after(async () => {
  await catalog.close();
  await rm(warehouse, { recursive: true, force: true });
});

test("namespaces are created, listed, found and refused twice", async () => {
  await catalog.createNamespace(["kafka_topics"], { owner: "floe" });
  await catalog.createNamespace(["kafka_topics", "dead_letters"]);
  assert.ok(await catalog.namespaceExists(["kafka_topics"]));
  assert.ok(await catalog.namespaceExists(["kafka_topics", "dead_letters"]));
  assert.equal(await catalog.namespaceExists(["kafka"]), false, "a name prefix is not a parent namespace");
  assert.deepEqual(await catalog.listNamespaces(), [["kafka_topics"]]);
  assert.deepEqual(await catalog.listNamespaces(["kafka_topics"]), [["kafka_topics", "dead_letters"]]);
  await assert.rejects(catalog.createNamespace(["kafka_topics"]), (e) => isCatalogError(e, "already-exists"));
  await assert.rejects(
    catalog.dropNamespace(["kafka_topics"]),
    (e) => isCatalogError(e, "validation") && /not empty|still holds/.test(String(e)),
  );
  await catalog.dropNamespace(["kafka_topics", "dead_letters"]);
  assert.deepEqual(await catalog.listNamespaces(["kafka_topics"]), []);
});

test("a created table is format v3, at <warehouse>/<namespace>/<table>, with metadata file 00000", async () => {
  const created = await catalog.createTable(orders, { schema, spec: unpartitioned });
  assert.equal(created.metadata.formatVersion, 3);
  assert.equal(created.metadata.location, `${warehouse}/kafka_topics/orders`);
  assert.match(created.metadataLocation, /^.*\/kafka_topics\/orders\/metadata\/00000-[0-9a-f-]{36}\.metadata\.json$/);
  assert.ok(existsSync(created.metadataLocation));

  const loaded = await catalog.loadTable(orders);
  assert.equal(loaded.metadata.tableUuid, created.metadata.tableUuid);
  assert.equal(loaded.metadataLocation, created.metadataLocation);
  assert.deepEqual(await catalog.listTables(["kafka_topics"]), [orders]);
  assert.ok(await catalog.tableExists(orders));
  await assert.rejects(catalog.createTable(orders, { schema, spec: unpartitioned }), (e) =>
    isCatalogError(e, "already-exists"),
  );
  await assert.rejects(
    catalog.createTable({ namespace: ["missing"], name: "t" }, { schema, spec: unpartitioned }),
    (e) => isNoSuch(e, "namespace"),
  );
});

test("a commit writes metadata file 00001, logs 00000 and swaps the row; a stale one conflicts", async () => {
  const base = await catalog.loadTable(orders);
  const committed = await catalog.commitTable(
    orders,
    [
      { type: "assert-table-uuid", uuid: base.metadata.tableUuid },
      { type: "assert-ref-snapshot-id", ref: MAIN_BRANCH, snapshotId: null },
    ],
    [{ action: "set-properties", updates: { "floe.topic": "orders" } }],
  );
  assert.match(committed.metadataLocation, /\/metadata\/00001-[0-9a-f-]{36}\.metadata\.json$/);
  assert.deepEqual(
    committed.metadata.metadataLog.map((e) => e.metadataFile),
    [base.metadataLocation],
  );
  assert.deepEqual(row(join(warehouse, "catalog.db"), "floe", "kafka_topics", "orders"), {
    metadata_location: committed.metadataLocation,
    previous_metadata_location: base.metadataLocation,
    iceberg_type: "TABLE",
  });

  await assert.rejects(
    catalog.commitTable(
      orders,
      [{ type: "assert-ref-snapshot-id", ref: MAIN_BRANCH, snapshotId: newSnapshotId() }],
      [{ action: "set-properties", updates: { "floe.topic": "lost" } }],
    ),
    (error: unknown) => {
      assert.ok(error instanceof CommitConflictError, String(error));
      assert.match(error.message, /^commitTable kafka_topics\.orders: assert-ref-snapshot-id failed/);
      return true;
    },
  );
  assert.equal((await catalog.loadTable(orders)).metadata.properties["floe.topic"], "orders");
});

test("of two concurrent commits on the same base, exactly one wins", async () => {
  // Two connections to the database, as two floe processes would have.
  const other = await openSqlCatalog({ warehouse, name: "floe" });
  try {
    const base = await catalog.loadTable(orders);
    const requirements = [{ type: "assert-table-uuid" as const, uuid: base.metadata.tableUuid }];
    const results = await Promise.allSettled([
      catalog.commitTable(orders, requirements, [{ action: "set-properties", updates: { winner: "a" } }]),
      other.commitTable(orders, requirements, [{ action: "set-properties", updates: { winner: "b" } }]),
    ]);
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r) => r.status === "rejected");
    assert.equal(won.length, 1, JSON.stringify(results.map((r) => r.status)));
    assert.ok(lost[0]?.reason instanceof CommitConflictError, String(lost[0]?.reason));
    assert.match(lost[0].reason.message, /another writer committed first/);

    const current = await catalog.loadTable(orders);
    assert.equal(current.metadataLocation, won[0]?.value.metadataLocation);
    const metadataFiles = await readdir(join(warehouse, "kafka_topics", "orders", "metadata"));
    assert.equal(metadataFiles.length, 3, `the loser's metadata file is deleted: ${metadataFiles.join(", ")}`);
  } finally {
    await other.close();
  }
});

test("two processes committing in retry loops lose no commit", { timeout: 60_000 }, async (t) => {
  const commits = 25;
  const worker = `
    import { openSqlCatalog } from ${JSON.stringify(new URL("../../src/iceberg/catalog/sql-catalog.ts", import.meta.url).href)};
    import { CommitConflictError } from ${JSON.stringify(new URL("../../src/iceberg/catalog/catalog.ts", import.meta.url).href)};
    const catalog = await openSqlCatalog({ warehouse: process.env.WAREHOUSE, name: "floe" });
    const id = { namespace: ["kafka_topics"], name: "orders" };
    // Both processes start committing at the same moment, past their start-up.
    await new Promise((resolve) => setTimeout(resolve, Number(process.env.START_AT) - Date.now()));
    let conflicts = 0;
    for (let i = 0; i < ${commits}; i++) {
      for (;;) {
        const table = await catalog.loadTable(id);
        try {
          await catalog.commitTable(id, [{ type: "assert-table-uuid", uuid: table.metadata.tableUuid }],
            [{ action: "set-properties", updates: { [process.env.WHO + "." + i]: "1" } }]);
          break;
        } catch (error) {
          if (!(error instanceof CommitConflictError)) throw error;
          conflicts++;
        }
      }
    }
    await catalog.close();
    console.log(JSON.stringify({ conflicts }));`;
  const startAt = String(Date.now() + 2_000);
  const start = (who: string) =>
    run(process.execPath, ["--input-type=module", "-e", worker], {
      env: { ...process.env, WAREHOUSE: warehouse, WHO: who, START_AT: startAt },
    });
  const before = await catalog.loadTable(orders);
  const outputs = await Promise.all([start("p1"), start("p2")]);
  const conflicts = outputs.reduce((n, { stdout }) => n + (JSON.parse(stdout) as { conflicts: number }).conflicts, 0);
  t.diagnostic(`${conflicts} conflicts retried`);

  const after = await catalog.loadTable(orders);
  const keys = Object.keys(after.metadata.properties).filter((k) => /^p[12]\.\d+$/.test(k));
  assert.equal(keys.length, 2 * commits, "every commit of both processes is in the table");
  assert.equal(after.metadata.metadataLog.length, before.metadata.metadataLog.length + 2 * commits);
});

test("PyIceberg's SqlCatalog opens floe's database and sees the table and its properties", async () => {
  const out = await pyiceberg("inspect", join(warehouse, "catalog.db"), warehouse, "floe", "kafka_topics.orders");
  assert.equal(out.loaded_from, (await catalog.loadTable(orders)).metadataLocation);
  assert.equal(out.format_version, 3);
  assert.equal(out.location, `${warehouse}/kafka_topics/orders`);
  assert.deepEqual(out.fields, ["id", "payload"]);
  assert.equal((out.properties as Record<string, string>)["floe.topic"], "orders");
  assert.deepEqual(out.namespaces, [["kafka_topics"]]);
  assert.deepEqual(out.namespace_properties, { owner: "floe", exists: "true" });
  assert.deepEqual(out.tables, [["kafka_topics", "orders"]]);
});

test("floe opens a database PyIceberg created, and the two commit in turn", async () => {
  const pyWarehouse = await mkdtemp(join(tmpdir(), "floe-pyiceberg-"));
  try {
    const db = join(pyWarehouse, "pyiceberg.db");
    const created = await pyiceberg("create", db, pyWarehouse, "py", "shop.customers");
    const theirs = await openSqlCatalog({ warehouse: pyWarehouse, uri: `sqlite:///${db}`, name: "py" });
    try {
      const id = { namespace: ["shop"], name: "customers" };
      assert.deepEqual(await theirs.listNamespaces(), [["shop"]]);
      assert.deepEqual(await theirs.listTables(["shop"]), [id]);
      const table = await theirs.loadTable(id);
      assert.equal(table.metadataLocation, created.metadata_location);
      assert.equal(table.metadata.tableUuid, created.uuid);
      assert.deepEqual(
        table.metadata.schemas[0]?.fields.map((f) => f.name),
        ["id", "name"],
      );
      assert.equal(table.metadata.properties.owner, "py");
      await assert.rejects(theirs.loadTable({ namespace: ["shop"], name: "missing" }), (e) => isNoSuch(e, "table"));

      // PyIceberg 0.12 writes format v2 only, so its table is the one both sides commit to.
      const committed = await theirs.commitTable(
        id,
        [{ type: "assert-table-uuid", uuid: table.metadata.tableUuid }],
        [{ action: "set-properties", updates: { "set.by": "floe" } }],
      );
      assert.equal(metadataFileVersion(committed.metadataLocation), 1);
      const seen = await pyiceberg("commit", db, pyWarehouse, "py", "shop.customers");
      assert.equal(seen.loaded_from, committed.metadataLocation);
      assert.equal((seen.properties as Record<string, string>)["set.by"], "floe");

      const after = await theirs.loadTable(id);
      assert.equal(after.metadataLocation, seen.committed_to);
      assert.equal(metadataFileVersion(after.metadataLocation), 2, "PyIceberg numbers its file after floe's");
      assert.equal(after.metadata.properties["set.by"], "pyiceberg");
      assert.equal(after.metadata.metadataLog.at(-1)?.metadataFile, committed.metadataLocation);
    } finally {
      await theirs.close();
    }
  } finally {
    await rm(pyWarehouse, { recursive: true, force: true });
  }
});

function row(db: string, catalogName: string, namespace: string, table: string): unknown {
  const sqlite = new DatabaseSync(db, { readOnly: true });
  try {
    return {
      ...sqlite
        .prepare(
          "SELECT metadata_location, previous_metadata_location, iceberg_type FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
        )
        .get(catalogName, namespace, table),
    };
  } finally {
    sqlite.close();
  }
}

/**
 * Runs PyIceberg's SqlCatalog on a database: "create" makes the namespace and a table;
 * "inspect" reports what it sees of the table; "commit" also sets set.by=pyiceberg on it.
 */
async function pyiceberg(
  mode: "inspect" | "commit" | "create",
  db: string,
  warehouse: string,
  name: string,
  table: string,
) {
  assert.ok(
    existsSync(readerEnv.python),
    `PyIceberg's venv is missing at ${readerEnv.python}: run \`npm run services -- install readers\``,
  );
  const script = `
import json, sys
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

mode, db, warehouse, name, ident = sys.argv[1:6]
catalog = SqlCatalog(name, uri=f"sqlite:///{db}", warehouse=warehouse)
namespace = ident.rsplit(".", 1)[0]
if mode == "create":
    catalog.create_namespace(namespace)
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "name", StringType(), required=False))
    t = catalog.create_table(ident, schema=schema, properties={"owner": "py"})
    print(json.dumps({"metadata_location": t.metadata_location, "uuid": str(t.metadata.table_uuid)}))
    sys.exit(0)
t = catalog.load_table(ident)
out = {
    "loaded_from": t.metadata_location,
    "format_version": t.metadata.format_version,
    "location": t.location(),
    "fields": [f.name for f in t.schema().fields],
    "properties": dict(t.properties),
    "namespaces": [list(n) for n in catalog.list_namespaces()],
    "namespace_properties": dict(catalog.load_namespace_properties(namespace)),
    "tables": [list(i) for i in catalog.list_tables(namespace)],
}
if mode == "commit":
    with t.transaction() as tx:
        tx.set_properties({"set.by": "pyiceberg"})
    out["committed_to"] = catalog.load_table(ident).metadata_location
print(json.dumps(out))
`;
  const { stdout } = await run(readerEnv.python, ["-c", script, mode, db, warehouse, name, table]);
  return JSON.parse(stdout) as Record<string, unknown>;
}
