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
import { IcebergError } from "../errors.ts";
import type { Schema } from "../spec/schema.ts";
import { asStruct } from "../spec/schema.ts";
import { type IcebergType, isPrimitive } from "../spec/types.ts";
import { childFields } from "./arrow-schema.ts";

export type MetricsMode =
  | { kind: "none" }
  | { kind: "counts" }
  | { kind: "truncate"; length: number }
  | { kind: "full" };

export const DEFAULT_METRICS_MODE: MetricsMode = { kind: "truncate", length: 16 };

const DEFAULT_MODE_PROPERTY = "write.metadata.metrics.default";
const COLUMN_MODE_PREFIX = "write.metadata.metrics.column.";
const MAX_INFERRED_PROPERTY = "write.metadata.metrics.max-inferred-column-defaults";
const MAX_INFERRED_DEFAULT = 100;

export function parseMetricsMode(text: string): MetricsMode {
  const mode = text.trim().toLowerCase();
  if (mode === "none" || mode === "counts" || mode === "full") return { kind: mode };
  const truncate = /^truncate\((\d+)\)$/.exec(mode);
  if (truncate && Number(truncate[1]) > 0) return { kind: "truncate", length: Number(truncate[1]) };
  throw new IcebergError("validation", `invalid metrics mode ${JSON.stringify(text)}`);
}

/** The metrics mode of every primitive field of the schema, nested ones included, by field id. */
export function metricsModes(
  schema: Schema,
  properties: Readonly<Record<string, string>> = {},
): Map<number, MetricsMode> {
  const columns = primitiveColumns(asStruct(schema));
  const configured = properties[DEFAULT_MODE_PROPERTY];
  const modes = new Map<number, MetricsMode>();
  if (configured !== undefined) {
    const mode = parseMetricsMode(configured);
    for (const column of columns) modes.set(column.id, mode);
  } else {
    const limitText = properties[MAX_INFERRED_PROPERTY];
    const limit = limitText === undefined ? MAX_INFERRED_DEFAULT : Number(limitText);
    const kept = new Set(columns.slice(0, limit).map((c) => c.id));
    for (const column of columns) modes.set(column.id, kept.has(column.id) ? DEFAULT_METRICS_MODE : { kind: "none" });
  }
  for (const column of columns) {
    const override = properties[COLUMN_MODE_PREFIX + column.name];
    if (override !== undefined) modes.set(column.id, parseMetricsMode(override));
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
