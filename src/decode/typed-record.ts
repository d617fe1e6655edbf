// A message decoded with a schema from a registry (Avro, Protobuf): its top-level fields already
// in the representation of their columns (src/iceberg/parquet's column builders), because the
// schema, not the value, says what a column is:
//
//   boolean               boolean
//   int, date             number (days since 1970-01-01 for a date)
//   long                  number when a safe integer, else bigint
//   float, double         number
//   time                  microseconds from midnight
//   timestamp(tz)         microseconds since the epoch: number when safe, else bigint
//   decimal(p, s)         the unscaled value as a bigint (12.34 in decimal(5, 2) is 1234n)
//   uuid                  its text form, 8-4-4-4-12 hex digits
//   string                the string; a nested value (record, array, map, oneof) as its JSON text
//   binary, fixed         the bytes
import type { PrimitiveType } from "../iceberg/spec/types.ts";
import type { CdcEnvelope, Change } from "./cdc-envelope.ts";

export type TypedValue = boolean | number | bigint | string | Uint8Array | null;

/** Field name -> the column value; a field the value does not carry is absent or null. */
export type TypedRecord = { [field: string]: TypedValue };

/** A column a registry schema gives a field: top-level fields only, always optional in the table. */
export interface SchemaColumn {
  readonly name: string;
  readonly type: PrimitiveType;
  readonly doc?: string;
}

/** The columns of one registry schema, and the decoder of its payloads. */
export interface SchemaDecoder {
  /** The columns of the schema's (first) message type: what a listing of the schema shows. */
  readonly columns: readonly SchemaColumn[];
  /**
   * The record of one payload (after the wire-format header) with the columns of its type (a
   * Protobuf file holds several message types; the message indexes say which), or what is wrong.
   */
  decode(
    payload: Uint8Array,
    messageIndexes: readonly number[],
  ): { readonly record: TypedRecord; readonly columns: readonly SchemaColumn[] } | { readonly problem: string };
  /**
   * The decoder of a change stream whose values are this schema's envelopes (Avro only); throws
   * UnsupportedSchemaError when the schema is no such envelope.
   */
  changes?(envelope: CdcEnvelope): ChangeDecoder;
}

/** A change stream's envelopes with a registry schema: the row image with the columns of the after record. */
export interface ChangeDecoder {
  readonly columns: readonly SchemaColumn[];
  decode(
    payload: Uint8Array,
  ):
    | { readonly record: TypedRecord; readonly change: Change }
    | { readonly problem: string /** The datum decodes, but is no change event. */; readonly envelope: boolean };
}

/** Microseconds (or a count of any unit) as a number while exact, else a bigint. */
export function exactInteger(value: bigint): number | bigint {
  const small = Number(value);
  return Number.isSafeInteger(small) ? small : value;
}

/** A schema the decoders make no columns of; the messages framed with it are bad messages. */
export class UnsupportedSchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnsupportedSchemaError";
  }
}
