// A message that the table's schema cannot take. The sync fails on it with nothing committed,
// and the message says where the message is, so that the producer can be found and fixed.

/** Where a message sits in Kafka; decode knows no Kafka types, the caller fills this in. */
export interface MessagePosition {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
}

export type SchemaConflictReason =
  /** The value's type is neither the column's nor one Iceberg can widen it to. */
  | "type-change"
  /** An integer outside the long range, for a column that is not double. */
  | "out-of-range"
  /** null in a column the table declares required. */
  | "null-in-required"
  /** A top-level field named like one of floe's system columns. */
  | "reserved-name"
  /** A new field equal to an existing column but for case: Spark, Databricks and Trino resolve names case-insensitively. */
  | "case-collision";

export class SchemaConflictError extends Error {
  readonly reason: SchemaConflictReason;
  readonly position: MessagePosition;
  readonly field: string;

  constructor(reason: SchemaConflictReason, position: MessagePosition, field: string, problem: string) {
    super(
      `${position.topic} partition ${position.partition} offset ${position.offset}: field ${JSON.stringify(field)}: ${problem}`,
    );
    this.name = "SchemaConflictError";
    this.reason = reason;
    this.position = position;
    this.field = field;
  }
}
