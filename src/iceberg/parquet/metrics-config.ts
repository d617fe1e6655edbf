// Which column metrics a data file carries, from the table properties, as Iceberg Java decides
// (MetricsConfig; the property names are the spec's "Write properties"):
//   write.metadata.metrics.default          none | counts | truncate(N) | full; truncate(16) if unset
//   write.metadata.metrics.column.<name>    the same, for one column by its full dotted name
//   write.metadata.metrics.max-inferred-column-defaults   100
// Without an explicit default, a schema of more than 100 primitive columns (list elements and
// map keys/values count) keeps the default mode for its first 100, breadth first, and `none`
// for the rest: wide tables would otherwise bloat their manifests. `counts` writes value, null
// and NaN counts; truncate(N) adds bounds, strings and binary cut to N characters or bytes;
// `full` adds untruncated bounds. Java also promotes sort-order columns; floe writes no sort order.
import type { Schema } from "../spec/schema.ts";
import { asStruct } from "../spec/schema.ts";
import {
  type MetricsMode,
  parseMetricsMode,
  propertyValue,
  WRITE_METADATA_METRICS_DEFAULT,
  WRITE_METADATA_METRICS_MAX_INFERRED_COLUMN_DEFAULTS,
  writeMetadataMetricsColumn,
} from "../spec/table-properties.ts";
import { childFields, type IcebergType, isPrimitive } from "../spec/types.ts";

export { type MetricsMode, parseMetricsMode };

export const DEFAULT_METRICS_MODE: MetricsMode = { kind: "truncate", length: 16 };

/** The metrics mode of every primitive field of the schema, nested ones included, by field id. */
export function metricsModes(
  schema: Schema,
  properties: Readonly<Record<string, string>> = {},
): Map<number, MetricsMode> {
  const columns = primitiveColumns(asStruct(schema));
  const configured = propertyValue(properties, WRITE_METADATA_METRICS_DEFAULT);
  const modes = new Map<number, MetricsMode>();
  if (configured !== undefined) {
    for (const column of columns) modes.set(column.id, configured);
  } else {
    const limit = propertyValue(properties, WRITE_METADATA_METRICS_MAX_INFERRED_COLUMN_DEFAULTS);
    const kept = new Set(columns.slice(0, limit).map((c) => c.id));
    for (const column of columns) modes.set(column.id, kept.has(column.id) ? DEFAULT_METRICS_MODE : { kind: "none" });
  }
  for (const column of columns) {
    const override = propertyValue(properties, writeMetadataMetricsColumn(column.name));
    if (override !== undefined) modes.set(column.id, override);
  }
  return modes;
}

interface Column {
  id: number;
  name: string;
}

/**
 * Primitive columns with their dotted names, in the order Java's limit takes them: a struct's
 * primitive fields first, then its nested fields' columns, each in field order.
 */
function primitiveColumns(type: IcebergType, prefix = ""): Column[] {
  const children = childFields(type).map((field) => ({ field, name: prefix + field.name }));
  return [
    ...children.filter(({ field }) => isPrimitive(field.type)).map(({ field, name }) => ({ id: field.id, name })),
    ...children.flatMap(({ field, name }) => (isPrimitive(field.type) ? [] : primitiveColumns(field.type, `${name}.`))),
  ];
}
