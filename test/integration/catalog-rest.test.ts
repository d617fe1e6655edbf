// floe's REST catalog client against Apache Iceberg's REST fixture (the reference server):
// namespaces, a format v3 table, commits that land and commits that must conflict, drop; and
// an unreachable catalog named as such.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { after, before, test } from "node:test";
import { CommitConflictError, isCatalogError, isNoSuch, type TableIdentifier } from "#src/iceberg/catalog/catalog.ts";
import { connectRestCatalog, type RestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import type { Schema } from "#src/iceberg/spec/schema.ts";
import { MAIN_BRANCH, newSnapshotId } from "#src/iceberg/spec/snapshot.ts";
import { icebergRest, restCatalog } from "../../dev/services/iceberg-rest.ts";

const namespace = [`floe_rest_${randomUUID().replaceAll("-", "")}`];
const nested = [...namespace, "inner"];
const orders: TableIdentifier = { namespace, name: "orders" };
const schema: Schema = {
  schemaId: 0,
  fields: [
    { id: 1, name: "id", required: true, type: "long" },
    { id: 2, name: "payload", required: false, type: "string" },
  ],
};

let catalog: RestCatalog;

before(async () => {
  await icebergRest.install();
  await icebergRest.start();
  catalog = await connectRestCatalog({ uri: restCatalog.uri, warehouse: restCatalog.warehouse });
});

after(async () => {
  for (const id of [orders, { namespace: nested, name: "events" }]) {
    if (await catalog.tableExists(id)) await catalog.dropTable(id, { purge: true });
  }
  for (const ns of [nested, namespace]) {
    if (await catalog.namespaceExists(ns)) await catalog.dropNamespace(ns);
  }
});

test("namespaces, one level and nested, are created, listed and found", async () => {
  await catalog.createNamespace(namespace, { owner: "floe" });
  await catalog.createNamespace(nested);
  assert.ok(await catalog.namespaceExists(namespace));
  assert.ok(await catalog.namespaceExists(nested), "the multi-level namespace travels as one %1F-joined segment");
  assert.equal(await catalog.namespaceExists([`${namespace[0]}_missing`]), false);
  const top = await catalog.listNamespaces();
  assert.ok(
    top.some((ns) => ns.length === 1 && ns[0] === namespace[0]),
    JSON.stringify(top),
  );
  assert.deepEqual(await catalog.listNamespaces(namespace), [nested]);
});

test("a created table is format v3 and loads back as created", async () => {
  const created = await catalog.createTable(orders, { schema, spec: { specId: 0, fields: [] } });
  assert.equal(created.metadata.formatVersion, 3);
  assert.equal(created.metadata.nextRowId, 0n);
  assert.equal(created.metadata.location, `${restCatalog.warehouse}/${namespace[0]}/orders`);
  assert.match(created.metadataLocation, /\/metadata\/00000-[0-9a-f-]{36}\.metadata\.json$/);

  const loaded = await catalog.loadTable(orders);
  assert.equal(loaded.metadata.formatVersion, 3);
  assert.equal(loaded.metadata.tableUuid, created.metadata.tableUuid);
  assert.equal(loaded.metadataLocation, created.metadataLocation);
  assert.deepEqual(
    loaded.metadata.schemas[0]?.fields.map((f) => f.name),
    ["id", "payload"],
  );
  assert.deepEqual(await catalog.listTables(namespace), [orders]);
  assert.ok(await catalog.tableExists(orders));
});

test("a table in a nested namespace round-trips", async () => {
  const events = { namespace: nested, name: "events" };
  const created = await catalog.createTable(events, { schema, spec: { specId: 0, fields: [] } });
  assert.equal(created.metadata.location, `${restCatalog.warehouse}/${nested.join("/")}/events`);
  assert.deepEqual(await catalog.listTables(nested), [events]);
  await catalog.dropTable(events);
  assert.equal(await catalog.tableExists(events), false);
});

test("a commit whose requirements hold lands; a stale one is a CommitConflictError", async () => {
  const base = await catalog.loadTable(orders);
  const committed = await catalog.commitTable(
    orders,
    [
      { type: "assert-table-uuid", uuid: base.metadata.tableUuid },
      { type: "assert-ref-snapshot-id", ref: MAIN_BRANCH, snapshotId: null },
    ],
    [{ action: "set-properties", updates: { "floe.topic": "orders" } }],
  );
  assert.equal(committed.metadata.properties["floe.topic"], "orders");
  assert.notEqual(committed.metadataLocation, base.metadataLocation);
  assert.match(committed.metadataLocation, /\/00001-[0-9a-f-]{36}\.metadata\.json$/);

  // The table has no snapshot; asserting main is at one (an int64 beyond 2^53) must fail.
  const stale = newSnapshotId() | (1n << 60n);
  await assert.rejects(
    catalog.commitTable(
      orders,
      [{ type: "assert-ref-snapshot-id", ref: MAIN_BRANCH, snapshotId: stale }],
      [{ action: "set-properties", updates: { "floe.topic": "lost" } }],
    ),
    (error: unknown) => {
      assert.ok(error instanceof CommitConflictError, String(error));
      assert.match(error.message, new RegExp(`^commitTable ${namespace[0]}\\.orders: `));
      return true;
    },
  );
  await assert.rejects(
    catalog.commitTable(
      orders,
      [{ type: "assert-table-uuid", uuid: randomUUID() }],
      [{ action: "set-properties", updates: { "floe.topic": "lost" } }],
    ),
    CommitConflictError,
  );

  const reloaded = await catalog.loadTable(orders);
  assert.equal(reloaded.metadata.properties["floe.topic"], "orders");
  assert.equal(reloaded.metadataLocation, committed.metadataLocation);
  assert.equal(reloaded.metadata.metadataLog.at(-1)?.metadataFile, base.metadataLocation);
});

test("a dropped table is gone, and missing tables and namespaces say so", async () => {
  await catalog.dropTable(orders, { purge: true });
  assert.equal(await catalog.tableExists(orders), false);
  await assert.rejects(catalog.loadTable(orders), (error: unknown) => {
    assert.ok(isNoSuch(error, "table"), String(error));
    assert.match(error.message, new RegExp(`^loadTable ${namespace[0]}\\.orders: `));
    return true;
  });
  await assert.rejects(catalog.dropTable(orders), (e) => isNoSuch(e, "table"));
  await assert.rejects(catalog.listTables([`${namespace[0]}_missing`]), (e) => isNoSuch(e, "namespace"));
  // (The fixture's JdbcCatalog is not strict: it creates a table in a missing namespace.)
});

test("a catalog URI where nothing listens is an io CatalogError naming the URL", async () => {
  const port = await closedPort();
  const uri = `http://127.0.0.1:${port}`;
  await assert.rejects(
    connectRestCatalog({ uri, warehouse: "w", retry: { attempts: 2, initialDelayMs: 10 } }),
    (error: unknown) => {
      assert.ok(isCatalogError(error, "io") && error.status === undefined, String(error));
      assert.match(error.message, /^getConfig: cannot reach the catalog at http:\/\/127\.0\.0\.1:\d+\/v1\/config/);
      assert.ok(error.message.includes(uri), error.message);
      assert.match(error.message, /ECONNREFUSED.*check `uri`/);
      return true;
    },
  );
});

/** A port that was free a moment ago: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
