// An embedded SQLite catalog in a temporary folder for one test file: opened before its tests with
// a namespace `ns`, closed and removed after them, and a fresh table per call (unpartitioned
// unless given a spec), so that each test starts from an empty table of its own.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before } from "node:test";
import { openSqlCatalog, type SqlCatalog } from "#src/iceberg/catalog/sql-catalog.ts";
import { type PartitionSpec, unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import type { NestedField } from "#src/iceberg/spec/types.ts";
import { Table } from "#src/iceberg/table.ts";
import { narrowFields } from "./tables.ts";

export interface ScratchCatalog {
  /** The open catalog (inside a test, after `before` ran). */
  readonly catalog: () => SqlCatalog;
  /** A new table `ns.t<n>` of `fields` (by default id, name, amount) with `properties`. */
  readonly newTable: (options?: {
    fields?: readonly NestedField[];
    properties?: Record<string, string>;
    spec?: PartitionSpec;
  }) => Promise<Table>;
}

export function scratchCatalog(prefix: string): ScratchCatalog {
  let warehouse: string | undefined;
  let catalog: SqlCatalog | undefined;
  let tables = 0;
  before(async () => {
    warehouse = await mkdtemp(join(tmpdir(), `floe-${prefix}-`));
    catalog = await openSqlCatalog({ warehouse, name: "floe" });
    await catalog.createNamespace(["ns"]);
  });
  after(async () => {
    await catalog?.close();
    if (warehouse) await rm(warehouse, { recursive: true, force: true });
  });
  const open = () => {
    if (!catalog) throw new Error("scratchCatalog: used before its before() hook ran");
    return catalog;
  };
  return {
    catalog: open,
    newTable: async ({ fields = narrowFields, properties = {}, spec = unpartitioned } = {}) => {
      const identifier = { namespace: ["ns"], name: `t${tables++}` };
      const metadata = await open().createTable(identifier, {
        schema: { schemaId: 0, fields },
        spec,
        properties,
      });
      return new Table(open(), metadata);
    },
  };
}
