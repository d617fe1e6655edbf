// Table set-up shared by the Iceberg integration tests: a fresh table in the REST fixture
// catalog, rows turned into an Arrow batch of a table's current schema, rows put in id order
// for assertRows.
//
//   const { catalog, table } = await createRestTable(namespace, "orders");
//   await writeDataFiles(table, arrowRows(table, [{ id: 1n, name: "a", amount: 1.5 }]));
import type * as arrow from "apache-arrow";
import { type Catalog, isNoSuch } from "#src/iceberg/catalog/catalog.ts";
import { loadCatalog } from "#src/iceberg/catalog/load-catalog.ts";
import { connectRestCatalog, type RestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { ColumnBatchBuilder } from "#src/iceberg/parquet/column-batch.ts";
import { unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import { currentSchema } from "#src/iceberg/spec/table-metadata.ts";
import type { NestedField } from "#src/iceberg/spec/types.ts";
import { Table } from "#src/iceberg/table.ts";
import type { Job } from "#src/job/job.ts";
import { catalogConfig } from "#src/pipeline/connect.ts";
import type { Row } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";

/** id (long, required), name (string), amount (double). */
export const narrowFields: readonly NestedField[] = [
  { id: 1, name: "id", required: true, type: "long" },
  { id: 2, name: "name", required: false, type: "string" },
  { id: 3, name: "amount", required: false, type: "double" },
];

/** Creates `namespace` in the REST fixture catalog and in it an unpartitioned table `name`. */
export async function createRestTable(
  namespace: string,
  name: string,
  fields: readonly NestedField[] = narrowFields,
): Promise<{ catalog: RestCatalog; table: Table }> {
  const catalog = await connectRestCatalog({ uri: restCatalog.uri });
  await catalog.createNamespace([namespace]);
  const created = await catalog.createTable(
    { namespace: [namespace], name },
    { schema: { schemaId: 0, fields }, spec: unpartitioned },
  );
  return { catalog, table: new Table(catalog, created) };
}

/** `records` as one Arrow batch of the table's current schema. */
export function arrowRows(table: Table, records: Iterable<Row>): arrow.Table {
  const batch = new ColumnBatchBuilder(currentSchema(table.metadata));
  for (const record of records) batch.appendRow(record);
  return batch.build();
}

/** Rows in ascending `id` order (bigint or number ids). */
export const byId = (rows: Iterable<Row>): Row[] =>
  [...rows].sort((a, b) => (a.id! < b.id! ? -1 : a.id! > b.id! ? 1 : 0));

/** Table `name` of the job's namespace as it is now, through a catalog opened for the call. */
export async function loadJobTable(job: Job, name: string): Promise<Table> {
  const catalog = await loadCatalog(catalogConfig(job.destination));
  try {
    return await Table.load(catalog, { namespace: [job.namespace], name });
  } finally {
    await catalog.close();
  }
}

/** The table, or undefined when the catalog has no table of that name. */
export async function tableIfExists(catalog: Catalog, namespace: string, name: string): Promise<Table | undefined> {
  try {
    return await Table.load(catalog, { namespace: [namespace], name });
  } catch (error) {
    if (isNoSuch(error, "table")) return undefined;
    throw error;
  }
}
