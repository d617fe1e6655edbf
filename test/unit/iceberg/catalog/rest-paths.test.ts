import assert from "node:assert/strict";
import { test } from "node:test";
import { RestPaths } from "#src/iceberg/catalog/rest-paths.ts";

test("without a prefix, routes start at /v1", () => {
  const paths = new RestPaths(undefined);
  assert.equal(paths.namespaces(), "v1/namespaces");
  assert.equal(
    paths.table({ namespace: ["kafka_topics"], name: "orders" }),
    "v1/namespaces/kafka_topics/tables/orders",
  );
});

test("the config's prefix is used as given, even across segments (Unity's catalogs/<name>)", () => {
  assert.equal(new RestPaths("catalogs/main").namespaces(), "v1/catalogs/main/namespaces");
  assert.equal(new RestPaths("/ws/").tables(["a"]), "v1/ws/namespaces/a/tables");
  assert.equal(new RestPaths("").namespaces(), "v1/namespaces");
});

test("a multi-level namespace is one segment joined by %1F, each level URL-encoded", () => {
  const paths = new RestPaths("p");
  assert.equal(paths.namespace(["accounting", "tax"]), "v1/p/namespaces/accounting%1Ftax");
  assert.equal(paths.table({ namespace: ["a b", "c/d"], name: "e%f" }), "v1/p/namespaces/a%20b%1Fc%2Fd/tables/e%25f");
});

test("an announced namespace-separator replaces %1F in paths and the parent parameter", () => {
  const paths = new RestPaths(undefined, "%2E");
  assert.equal(paths.namespace(["accounting", "tax"]), "v1/namespaces/accounting%2Etax");
  assert.equal(paths.parentParam(["accounting", "tax"]), "accounting.tax");
  assert.equal(new RestPaths(undefined).parentParam(["accounting", "tax"]), "accounting\u001ftax");
});

test("an empty namespace is refused", () => {
  assert.throws(() => new RestPaths(undefined).namespace([]), /at least one level/);
});
