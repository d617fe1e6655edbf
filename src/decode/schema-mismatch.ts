// A record that the table's schema cannot take: one of its values does not fit its column, or
// its field names cannot be columns. It is a bad message for that table, routed like the
// decoder's (dead-letter table, fail or skip, per the stream's on_error), never an error that
// stops the stream. `detail` starts with the field, the column's type and the value's type:
//
//   field "amount": column type long, value type double
//
// so that a dead-letter row says what to change and can be found by field.

export type SchemaMismatchReason =
  /** The value's type is neither the column's nor one the column takes or can widen to. */
  | "type-mismatch"
  /** An integer beyond the long range, for a column that cannot hold it (every type but double and string). */
  | "out-of-range"
  /** No value for a column the table declares required. */
  | "null-in-required"
  /** A top-level field named like one of floe's system columns. */
  | "reserved-name"
  /** A new field equal to an existing column but for case: Spark, Databricks and Trino resolve names case-insensitively. */
  | "case-collision";

export interface SchemaMismatch {
  readonly reason: SchemaMismatchReason;
  readonly field: string;
  /** For the dead-letter row and the on_error: fail message; starts with the field. */
  readonly detail: string;
}
