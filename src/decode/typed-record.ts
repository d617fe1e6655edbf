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
//   string                the string; a value kept as JSON text (a column declared json, a
//                         recursion, an Avro union of several types) as that text
//   binary, fixed         the bytes
//   struct                an object keyed by field name (no prototype), each field so
//   list                  an array of the element's values
//   map                   a Map from the key's values to the value's
import type { IcebergType } from "../iceberg/spec/types.ts";
import type { CdcEnvelope, Change } from "./cdc-envelope.ts";

export type TypedValue =
  | boolean
  | number
  | bigint
  | string
  | Uint8Array
  | null
  | TypedValue[]
  | { [field: string]: TypedValue }
  | Map<TypedValue, TypedValue>;

/** Field name -> the column value; a field the value does not carry is absent or null. */
export type TypedRecord = { [field: string]: TypedValue };

/**
 * A column a registry schema gives a top-level field, always optional in the table. A nested
 * type's fields, elements, keys and values have id 0 here: the table numbers them when it takes
 * the column in (registry-schema.ts), and they are optional too.
 */
export interface SchemaColumn {
  readonly name: string;
  readonly type: IcebergType;
  readonly doc?: string;
}

/** Names of top-level fields to decode as their JSON text, into string columns. */
export type TextColumns = ReadonlySet<string>;

export const NO_TEXT_COLUMNS: TextColumns = new Set();

/** The columns of one registry schema, and the decoder of its payloads. */
export interface SchemaDecoder {
  /** The columns of the schema's (first) message type: what a listing of the schema shows. */
  readonly columns: readonly SchemaColumn[];
  /** The columns of the message type the indexes name (a Protobuf file holds several); undefined for none. */
  columnsOf(messageIndexes: readonly number[]): readonly SchemaColumn[] | undefined;
  /**
   * The record of one payload (after the wire-format header) with the columns of its type (a
   * Protobuf file holds several message types; the message indexes say which), or what is wrong.
   * The fields named in `text` are their values' JSON text, in string columns.
   */
  decode(
    payload: Uint8Array,
    messageIndexes: readonly number[],
    text?: TextColumns,
  ): { readonly record: TypedRecord; readonly columns: readonly SchemaColumn[] } | { readonly problem: string };
  /**
   * The decoder of a change stream whose values are this schema's envelopes (Avro, Protobuf), the
   * after image's fields named in `text` as JSON text; throws UnsupportedSchemaError when the
   * schema is no such envelope.
   */
  changes?(envelope: CdcEnvelope, text?: TextColumns): ChangeDecoder;
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

/**
 * A schema's `changes`: one change decoder per envelope and set of text columns, made by `make`
 * the first time it is asked for (a decoder resolves the envelope's after record once).
 */
export function changeDecoders(
  make: (envelope: CdcEnvelope, text: TextColumns) => ChangeDecoder,
): (envelope: CdcEnvelope, text?: TextColumns) => ChangeDecoder {
  const made = new Map<CdcEnvelope, Map<TextColumns, ChangeDecoder>>();
  return (envelope, text = NO_TEXT_COLUMNS) => {
    let byText = made.get(envelope);
    if (byText === undefined) {
      byText = new Map();
      made.set(envelope, byText);
    }
    let decoder = byText.get(text);
    if (decoder === undefined) {
      decoder = make(envelope, text);
      byText.set(text, decoder);
    }
    return decoder;
  };
}

/** The columns with those named in `text` as string columns (their JSON text), cached per set. */
export function textColumnsOf(
  columns: readonly SchemaColumn[],
  text: TextColumns,
  cache: WeakMap<TextColumns, readonly SchemaColumn[]>,
): readonly SchemaColumn[] {
  if (text.size === 0) return columns;
  let found = cache.get(text);
  if (found === undefined) {
    found = columns.map((c) => (text.has(c.name) && c.type !== "string" ? { ...c, type: "string" } : c));
    cache.set(text, found);
  }
  return found;
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
