// Iceberg field ids in a Parquet file's schema (spec Appendix A, "Parquet": column ids are
// stored as the field_id of the schema nodes). Columns are found by id, never by name: a
// renamed column keeps its id, and a file written before the rename keeps the old name.
import { type FileMetaData, parquetSchema, type SchemaTree } from "hyparquet";

/**
 * The schema nodes from a top-level column down to the node carrying `fieldId` (ids are unique
 * in a schema), or undefined when the file has no such field.
 */
export function findFieldPath(metadata: FileMetaData, fieldId: number): SchemaTree[] | undefined {
  const visit = (node: SchemaTree): SchemaTree[] | undefined => {
    if (node.element.field_id === fieldId) return [node];
    for (const child of node.children) {
      const found = visit(child);
      if (found) return [node, ...found];
    }
    return undefined;
  };
  for (const column of parquetSchema(metadata).children) {
    const found = visit(column);
    if (found) return found;
  }
  return undefined;
}

/** The field id of each leaf column that has one, keyed by columnKey(path_in_schema). */
export function leafFieldIds(metadata: FileMetaData): Map<string, number> {
  const ids = new Map<string, number>();
  const visit = (node: SchemaTree): void => {
    if (node.children.length === 0 && node.element.field_id !== undefined) {
      ids.set(columnKey(node.path), node.element.field_id);
    }
    for (const child of node.children) visit(child);
  };
  for (const child of parquetSchema(metadata).children) visit(child);
  return ids;
}

export function columnKey(path: readonly string[]): string {
  return JSON.stringify(path);
}
