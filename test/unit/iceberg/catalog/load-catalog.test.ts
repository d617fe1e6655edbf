import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { loadCatalog } from "#src/iceberg/catalog/load-catalog.ts";
import { RestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { databasePath, SqlCatalog } from "#src/iceberg/catalog/sql-catalog.ts";
import { fakeServer } from "./fake-http-server.ts";

test("type sql opens <warehouse>/catalog.db unless a database uri is given", async () => {
  const dir = await mkdtemp(join(tmpdir(), "floe-load-catalog-"));
  try {
    const catalog = await loadCatalog({ type: "sql", warehouse: join(dir, "wh") });
    assert.ok(catalog instanceof SqlCatalog);
    assert.equal(catalog.name, "floe");
    assert.ok(existsSync(join(dir, "wh", "catalog.db")));
    await catalog.close();

    const named = await loadCatalog({ type: "sql", name: "lake", warehouse: dir, uri: `sqlite:///${dir}/other.db` });
    assert.equal(named.name, "lake");
    assert.ok(existsSync(join(dir, "other.db")));
    await named.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("database URIs in PyIceberg's, Java's and plain form name the same file", () => {
  assert.equal(databasePath("sqlite:////tmp/c.db"), "/tmp/c.db");
  assert.equal(databasePath("jdbc:sqlite:file:/tmp/c.db"), "/tmp/c.db");
  assert.equal(databasePath("jdbc:sqlite:/tmp/c.db?busy_timeout=5000"), "/tmp/c.db");
  assert.equal(databasePath("file:///tmp/c.db"), "/tmp/c.db");
  assert.equal(databasePath("/tmp/c.db"), "/tmp/c.db");
  assert.equal(databasePath("sqlite:///c.db"), join(process.cwd(), "c.db"));
  assert.throws(() => databasePath("postgresql://host/db"), /not a SQLite database/);
});

test("type rest connects: GET /v1/config with the warehouse", async () => {
  const server = await fakeServer();
  try {
    server.routes.set("GET /v1/config", () => ({ json: { defaults: {}, overrides: {} } }));
    const catalog = await loadCatalog({ type: "rest", uri: server.uri, warehouse: "w", credential: { token: "t" } });
    assert.ok(catalog instanceof RestCatalog);
    assert.equal(server.requests[0]?.url, "/v1/config?warehouse=w");
    assert.equal(server.requests[0]?.headers.authorization, "Bearer t");
  } finally {
    await server.close();
  }
});
