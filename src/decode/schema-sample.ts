// What a sample of a topic's messages says about its table's columns: the column each field
// gets (declared, the table's, or inferred as the commit that creates it would), the types of
// the sampled values, how many of them the column refuses, and a `columns:` entry to declare
// where the sample mixes types. A column inferred from mixed values depends on which values
// the commit that creates it happens to see (ints alone make long, and a later decimal is a
// bad message); declared, it is the same whatever the commit interval.
//
// The proposal for a field is the narrowest declarable type that takes every sampled value:
// double for ints and decimals, string for any other mix (a string column takes any value, as
// its JSON text) and for integers beyond the long range (kept exactly). It is made for fields
// that have no column yet and no declaration, when their sampled values would make columns of
// more than one type, or of none: a table's column keeps its type whatever the job file says,
// beyond Iceberg's int-to-long and float-to-double.

import { typeToString } from "../iceberg/spec/types.ts";
import { stringifyJson } from "../lib/int64-json.ts";
import { afterImageOf, type CdcEnvelope, readChange } from "./cdc-envelope.ts";
import { type DeclarableType, type DeclaredColumns, NO_DECLARED_COLUMNS } from "./declared-columns.ts";
import { columnTypeFor, type SchemaInference, type TableSchema, type ValueType, valueTypeOf } from "./infer-schema.ts";
import { type BadMessageKind, decodeJsonMessage, type JsonRecord, type JsonValue } from "./json-message.ts";
import { isSystemColumn } from "./system-columns.ts";

/** registry: from the schema registry's schema of an Avro or Protobuf stream. */
export type ColumnSource = "declared" | "table" | "inferred" | "registry";

export interface SampledColumn {
  readonly name: string;
  /** The column's type after the sample; undefined when no sampled value gave it one (only nulls, or refused values). */
  readonly type: string | undefined;
  readonly source: ColumnSource;
  /** Sampled values of the field by type; null counts too. */
  readonly values: Readonly<Partial<Record<ValueType | "null", number>>>;
  /** Sampled messages that are bad messages because of this field (the column refuses the value). */
  readonly misfits: number;
  /** The table's column requires a value; a column floe adds never does. */
  readonly required: boolean;
  /** The JSON text of the first non-null sampled value, cut to EXAMPLE_MAX_CHARS; undefined when there is none. */
  readonly example: string | undefined;
}

/** Examples are for a glance at a table of columns: a long value is cut, and the cut marked with "…". */
export const EXAMPLE_MAX_CHARS = 80;

export interface StreamSample {
  readonly messages: number;
  readonly tombstones: number;
  /** Messages the decoder refuses (not JSON, too deep, not framed, ...), by reason. */
  readonly bad: Readonly<Record<string, number>>;
  /** Top-level fields in the order first seen; declared ones the sample lacks too, and the table's other columns are left out. */
  readonly columns: readonly SampledColumn[];
  /** The `columns:` entries to declare, in the order of `columns`. */
  readonly proposed: ReadonlyMap<string, DeclarableType>;
}

interface FieldStats {
  values: Partial<Record<ValueType | "null", number>>;
  misfits: number;
  example: string | undefined;
}

export class SchemaSample {
  readonly #inference: SchemaInference;
  readonly #tableColumns: ReadonlySet<string>;
  readonly #requiredColumns: ReadonlySet<string>;
  readonly #declared: DeclaredColumns;
  readonly #fields = new Map<string, FieldStats>();
  readonly #bad: Partial<Record<BadMessageKind, number>> = {};
  #messages = 0;
  #tombstones = 0;
  /** A change stream's envelope: its after images are what the columns come from. */
  readonly #envelope: CdcEnvelope | undefined;
  readonly #imageOf: ((root: JsonRecord) => unknown) | undefined;

  /** `inference` starts from the same table and declarations, as the sync's would. */
  constructor(
    inference: SchemaInference,
    table: TableSchema | undefined,
    declared: DeclaredColumns = NO_DECLARED_COLUMNS,
    envelope?: CdcEnvelope,
  ) {
    this.#envelope = envelope;
    this.#imageOf = envelope === undefined ? undefined : (root) => afterImageOf(root, envelope);
    this.#inference = inference;
    this.#tableColumns = new Set(table?.schema.fields.map((f) => f.name) ?? []);
    this.#requiredColumns = new Set(table?.schema.fields.filter((f) => f.required).map((f) => f.name) ?? []);
    this.#declared = declared;
    for (const name of declared.keys()) this.#stats(name);
  }

  /** One message value, as it comes from Kafka. */
  add(value: Uint8Array | null): void {
    this.#messages++;
    let decoded = decodeJsonMessage(value, this.#imageOf);
    if (decoded.kind === "tombstone") {
      this.#tombstones++;
      return;
    }
    if (decoded.kind === "bad") {
      this.#bad[decoded.reason] = (this.#bad[decoded.reason] ?? 0) + 1;
      return;
    }
    if (this.#envelope !== undefined) {
      // A delete lands no row, and an envelope that does not parse is a dead letter: neither makes columns.
      const change = readChange(decoded.record, this.#envelope);
      if ("problem" in change || change.kind === "delete") return;
      decoded = { kind: "record", record: change.image, wholeDecimals: decoded.wholeDecimals };
    }
    const { record, wholeDecimals } = decoded;
    for (const name in record) {
      if (isSystemColumn(name)) continue;
      const value = record[name]!;
      const kind = value === null ? "null" : valueTypeOf(value, wholeDecimals?.has(name) === true);
      const stats = this.#stats(name);
      stats.values[kind] = (stats.values[kind] ?? 0) + 1;
      if (stats.example === undefined && value !== null) stats.example = exampleOf(value);
    }
    const mismatch = this.#inference.observe(decoded);
    if (mismatch !== undefined && this.#fields.has(mismatch.field)) this.#fields.get(mismatch.field)!.misfits++;
  }

  result(): StreamSample {
    const columns: SampledColumn[] = [];
    const proposed = new Map<string, DeclarableType>();
    for (const [name, stats] of this.#fields) {
      const type = this.#inference.columnType(name);
      const source: ColumnSource = this.#declared.has(name)
        ? "declared"
        : this.#tableColumns.has(name)
          ? "table"
          : "inferred";
      columns.push({
        name,
        type: type === undefined ? undefined : typeToString(type),
        source,
        values: { ...stats.values },
        misfits: stats.misfits,
        required: this.#requiredColumns.has(name),
        example: stats.example,
      });
      if (source === "inferred") {
        const proposal = proposedType(stats.values);
        if (proposal !== undefined) proposed.set(name, proposal);
      }
    }
    return { messages: this.#messages, tombstones: this.#tombstones, bad: { ...this.#bad }, columns, proposed };
  }

  #stats(name: string): FieldStats {
    let stats = this.#fields.get(name);
    if (stats === undefined) {
      stats = { values: {}, misfits: 0, example: undefined };
      this.#fields.set(name, stats);
    }
    return stats;
  }
}

/** A value's JSON text (int64s exact), cut to EXAMPLE_MAX_CHARS characters. */
export function exampleOf(value: JsonValue): string {
  const text = stringifyJson(value);
  if (text.length <= EXAMPLE_MAX_CHARS) return text;
  // Cut between code points, never inside a surrogate pair.
  return `${text.slice(0, EXAMPLE_MAX_CHARS).replace(/[\uD800-\uDBFF]$/, "")}…`;
}

/** The type to declare for a field whose values are of these types; undefined when one inferred type fits them all. */
export function proposedType(values: Partial<Record<ValueType | "null", number>>): DeclarableType | undefined {
  const types = new Set<DeclarableType | "huge" | "object" | "array">();
  for (const kind of Object.keys(values) as (ValueType | "null")[]) {
    if (kind === "null") continue;
    types.add(kind === "huge" ? "huge" : kind === "object" || kind === "array" ? kind : columnTypeFor(kind));
  }
  if (types.size === 0 || (types.size === 1 && !types.has("huge"))) return undefined;
  if (types.size === 2 && types.has("long") && types.has("double")) return "double";
  // An object or array among other values: their JSON text is the one column that holds them all.
  return values.object !== undefined || values.array !== undefined ? "json" : "string";
}
