// Schema inference and evolution: the table's columns from the messages' top-level fields.
//
// A JSON value has a type (valueTypeOf):
//   true/false                                   boolean
//   integer (written without . or exponent)      long; beyond the long range "huge"
//   other number (99.19, 1299.0, 1e3)            double
//   timestamp string (see timestamp.ts)          timestamptz (UTC)
//   other string                                 string
//   object                                       struct, array: list (nested-values.ts); a string
//                                                column (declared `json`, or a table's string
//                                                column) holds the JSON text instead, and a
//                                                column declared `map` is map<string, V>
//   null                                         nothing: a field seen only as null gets no
//                                                column until a value shows its type, because
//                                                a guess (string) would refuse the first real
//                                                value (a number) of a later commit
//
// What a column takes (fits), the same for every column whether declared, inferred or made by
// another writer:
//   string       any value: a string as it is, any other value as its JSON text (1 as "1")
//   long         an integer in the long range; a whole decimal (5.0) up to 2^53
//   double       any number; an integer beyond 2^53 is rounded to the nearest double, and one
//                beyond a double's range (over 308 digits) is refused
//   timestamptz  a timestamp string
//   boolean      true, false
//   int, float   (tables made by others) an integer in the int range; a number a float holds
//                exactly. Iceberg's promotions widen them when a value needs it: int to long,
//                float to double
//   struct/list  an object/array whose members fit their fields (nested-values.ts); a member the
//                struct lacks adds a field inside it (add-column with the struct as parent)
//   map          (string keys) an object whose member values fit the value type
//   other types  nothing: floe does not convert JSON values into them
//
// Where a column's type comes from:
// - the job file's `columns:` (declared): the column is there from the start, with that type,
//   which never changes;
// - the table, for the columns it has;
// - otherwise the values of the commit batch in which the field first shows up: the column is
//   "open" while that batch is read, and the general type wins within it (a decimal makes an
//   open long column double; a string that is no timestamp, or a nested value, makes an open
//   timestamptz column string). The commit closes it (settle).
//
// A record with a value that fits neither its column nor a widening of it is refused: observe()
// returns a SchemaMismatch naming the field, the column's type and the value's type, and the
// sync treats the message as a bad message for the table (on_error). observe() looks at every
// field before it changes anything, so a refused record adds and widens no column. The same
// holds for a field named like a system column, a new field equal to a column but for case, a
// missing value for a required column, and an integer beyond the long range for a column that
// does not hold it (new columns included: floe does not silently round ids).
//
// New columns get ids after the table's last column id, declared ones first (in the order of
// the job file), then the others in the order their fields were first seen, and are optional.

import { withFreshIds } from "../iceberg/spec/fresh-ids.ts";
import type { Schema } from "../iceberg/spec/schema.ts";
import { type IcebergType, type NestedField, type PrimitiveType, typeToString } from "../iceberg/spec/types.ts";
import { type DeclarableType, type DeclaredColumns, NO_DECLARED_COLUMNS } from "./declared-columns.ts";
import type { DecodedRecord, JsonValue } from "./json-message.ts";
import {
  evolved,
  fitsNested,
  isNested,
  type LeafRules,
  mapShapeOf,
  type NestedAddition,
  NestedMismatch,
  numberNewFields,
  shapeOf,
} from "./nested-values.ts";
import type { SchemaMismatch, SchemaMismatchReason } from "./schema-mismatch.ts";
import { FLOE_ID, floeIdForm, isSystemColumn, SYSTEM_COLUMNS } from "./system-columns.ts";
import { timestampMicros } from "./timestamp.ts";

export type ColumnChange =
  | { readonly kind: "add-column"; readonly field: NestedField; readonly parent?: readonly string[] }
  | {
      readonly kind: "widen";
      readonly name: string;
      readonly from: PrimitiveType;
      readonly to: PrimitiveType;
      /** The struct fields down to the struct that has the field; none for a top-level column. */
      readonly parent?: readonly string[];
    };

/** The table an inference starts from: its current schema and its last-column-id. */
export interface TableSchema {
  readonly schema: Schema;
  readonly lastColumnId: number;
}

/** What a JSON value says about its column's type; "huge" is an integer beyond the long range. */
export type ValueType = "boolean" | "long" | "double" | "timestamptz" | "string" | "object" | "array" | "huge";

/** A declared column type that the table's column has and cannot be widened to. */
export class DeclaredColumnError extends Error {
  readonly column: string;

  constructor(column: string, problem: string) {
    super(`column ${JSON.stringify(column)} declared under columns: ${problem}`);
    this.name = "DeclaredColumnError";
    this.column = column;
  }
}

interface Column {
  readonly name: string;
  readonly id: number;
  type: IcebergType;
  /** The type in the table before this inference; undefined for a column it adds. */
  readonly tableType: IcebergType | undefined;
  readonly required: boolean;
  readonly doc: string | undefined;
  /** A new, undeclared column whose type may still generalize within its batch. */
  open: boolean;
}

/** A field of the record under observation that does not fit as it is. */
interface Pending {
  readonly name: string;
  readonly value: JsonValue;
  readonly whole: boolean;
  /** Undefined for a field without a column. */
  readonly column: Column | undefined;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

export class SchemaInference {
  readonly #base: Schema;
  /** No table yet: the schema is the one to create the table with, id 0. */
  readonly #creating: boolean;
  /** The message fields' columns by name; system columns are not here, so a field cannot match one. */
  readonly #columns = new Map<string, Column>();
  /** Columns this inference adds, in id order. */
  readonly #added: Column[] = [];
  readonly #requiredColumns: Column[] = [];
  readonly #namesByLowerCase = new Map<string, string>();
  /** Fields this inference adds inside the table's struct columns, in id order. */
  readonly #nestedAdded: NestedAddition[] = [];
  /** Fields declared map that have no column yet: their first object makes a map column. */
  readonly #declaredMaps = new Set<string>();
  #nextId: number;

  /**
   * Starts from an existing table, or from floe's system columns alone for a table to create,
   * with the stream's declared columns. Throws DeclaredColumnError when the table has a declared
   * column with a type that cannot be widened to the declared one.
   */
  constructor(table?: TableSchema, declared: DeclaredColumns = NO_DECLARED_COLUMNS) {
    this.#base = table?.schema ?? { schemaId: 0, fields: SYSTEM_COLUMNS };
    this.#creating = table === undefined;
    this.#nextId = table?.lastColumnId ?? SYSTEM_COLUMNS.length;
    for (const system of SYSTEM_COLUMNS) this.#namesByLowerCase.set(system.name.toLowerCase(), system.name);
    for (const field of this.#base.fields) {
      this.#namesByLowerCase.set(field.name.toLowerCase(), field.name);
      if (isSystemColumn(field.name)) {
        checkSystemColumn(field);
        continue;
      }
      const column: Column = {
        name: field.name,
        id: field.id,
        type: field.type,
        tableType: field.type,
        required: field.required,
        doc: field.doc,
        open: false,
      };
      this.#columns.set(field.name, column);
      if (field.required) this.#requiredColumns.push(column);
    }
    for (const system of SYSTEM_COLUMNS) {
      if (!this.#base.fields.some((f) => f.name === system.name))
        this.#add(system.name, system.type, system.doc, false);
    }
    for (const [name, type] of declared) this.#declareColumn(name, type);
  }

  /**
   * Declares the columns a value's schema gives (a JSON Schema's properties) that neither the
   * table nor this sync has yet: the schema says what they are before any value does. A column
   * that exists keeps its type (values still have to fit it), and a name that differs from one
   * only in case or is a system column is left to observe(), which refuses its values.
   */
  declareNew(columns: DeclaredColumns): void {
    for (const [name, type] of columns) {
      if (this.#namesByLowerCase.has(name.toLowerCase())) continue;
      this.#declareColumn(name, type);
    }
  }

  /**
   * Takes one record's fields into the schema, or refuses the record (and changes nothing):
   * the mismatch says which field does not fit and why.
   */
  observe(decoded: DecodedRecord): SchemaMismatch | undefined {
    const { record, wholeDecimals } = decoded;
    let pending: Pending[] | undefined;
    for (const name in record) {
      const value = record[name]!;
      const column = this.#columns.get(name);
      if (value === null) {
        if (column?.required) return nullInRequired(column);
        continue;
      }
      const whole = wholeDecimals?.has(name) === true;
      if (column !== undefined && fits(column, value, whole)) continue;
      if (pending === undefined) pending = [];
      pending.push({ name, value, whole, column });
    }
    for (const column of this.#requiredColumns) {
      if (!Object.hasOwn(record, column.name)) return nullInRequired(column);
    }
    return pending === undefined ? undefined : this.#evolve(pending);
  }

  /** Closes the new columns' types: their values are about to be converted and written. */
  settle(): void {
    for (const column of this.#added) column.open = false;
  }

  /** The type a field's column has now; undefined when the field has none (yet). */
  columnType(name: string): IcebergType | undefined {
    return this.#columns.get(name)?.type;
  }

  /**
   * The table's schema with this inference's changes. Its id is 0 for a table to create, else
   * the base's, plus one if anything changed (the commit gives the id the table will use).
   */
  get schema(): Schema {
    const changed = !this.#creating && this.changes().length > 0;
    const fields = this.#base.fields.map((field) => {
      const column = this.#columns.get(field.name);
      return column && column.type !== field.type ? { ...field, type: column.type } : field;
    });
    for (const column of this.#added) fields.push(toField(column));
    return { ...this.#base, schemaId: changed ? this.#base.schemaId + 1 : this.#base.schemaId, fields };
  }

  /** The highest column id assigned: the table's last-column-id after these changes. */
  get lastColumnId(): number {
    return this.#nextId;
  }

  /** New columns (system columns the table lacked first), then widened ones, as the commit applies them. */
  changes(): ColumnChange[] {
    const changes: ColumnChange[] = this.#added.map((column) => ({ kind: "add-column", field: toField(column) }));
    for (const { parent, field } of this.#nestedAdded) changes.push({ kind: "add-column", field, parent });
    for (const column of this.#columns.values()) {
      if (column.tableType !== undefined && !isNested(column.tableType) && column.type !== column.tableType) {
        changes.push({
          kind: "widen",
          name: column.name,
          from: column.tableType as PrimitiveType,
          to: column.type as PrimitiveType,
        });
      }
    }
    return changes;
  }

  #declareColumn(name: string, declared: DeclarableType): void {
    const column = this.#columns.get(name);
    if (declared === "map") {
      if (column === undefined) {
        const existing = this.#namesByLowerCase.get(name.toLowerCase());
        if (existing !== undefined) {
          throw new DeclaredColumnError(name, `the table's column ${JSON.stringify(existing)} differs only in case`);
        }
        this.#declaredMaps.add(name);
      } else if (typeof column.type !== "object" || column.type.kind !== "map") {
        throw new DeclaredColumnError(
          name,
          `the table has it as ${typeToString(column.type)}, and Iceberg cannot change it to a map; ` +
            "give the stream a new table (table:) to have the declared type",
        );
      }
      return;
    }
    // A json column is a string column of the JSON text (column-value.ts writes any value so).
    const type = declared === "json" ? "string" : declared;
    if (column === undefined) {
      const existing = this.#namesByLowerCase.get(name.toLowerCase());
      if (existing !== undefined) {
        throw new DeclaredColumnError(name, `the table's column ${JSON.stringify(existing)} differs only in case`);
      }
      this.#add(name, type, undefined, false);
    } else if (column.type !== type) {
      if (promoted(column.type, type) !== type) {
        throw new DeclaredColumnError(
          name,
          `the table has it as ${typeToString(column.type)}, and Iceberg cannot change ${typeToString(column.type)} ` +
            `to ${type} (it only widens int to long and float to double); declare ${typeToString(column.type)}, ` +
            "or give the stream a new table (table:) to have the declared type",
        );
      }
      column.type = type;
    }
  }

  #add(name: string, shape: IcebergType, doc: string | undefined, open: boolean): void {
    const id = ++this.#nextId;
    const { type, lastId } = withFreshIds(shape, id);
    this.#nextId = lastId;
    const column: Column = { name, id, type, tableType: undefined, required: false, doc, open };
    this.#added.push(column);
    this.#namesByLowerCase.set(name.toLowerCase(), name);
    if (!isSystemColumn(name)) this.#columns.set(name, column);
  }

  /** The slow path: some fields need a new column or a wider type, or do not fit at all. */
  #evolve(pending: readonly Pending[]): SchemaMismatch | undefined {
    const types: (IcebergType | undefined)[] = [];
    let newNames: Map<string, string> | undefined;
    for (const p of pending) {
      const kind = valueTypeOf(p.value, p.whole);
      if (p.column === undefined) {
        if (isSystemColumn(p.name)) {
          return mismatch("reserved-name", p.name, "the name is reserved for floe's system column");
        }
        const lower = p.name.toLowerCase();
        const existing = this.#namesByLowerCase.get(lower) ?? newNames?.get(lower);
        if (existing !== undefined) {
          return mismatch(
            "case-collision",
            p.name,
            `column ${JSON.stringify(existing)} differs only in case, and Spark, Databricks and Trino match column names without case`,
          );
        }
        if (newNames === undefined) newNames = new Map();
        newNames.set(lower, p.name);
        if (kind === "huge") return outOfRange(p.name, undefined, p.value);
        if (this.#declaredMaps.has(p.name)) {
          if (kind !== "object") {
            return mismatch("type-mismatch", p.name, `column declared map, value type ${describeValueType(kind)}`);
          }
          try {
            types.push(mapShapeOf(p.value, NESTED_RULES, []));
          } catch (error) {
            return nestedMismatch(p.name, error);
          }
        } else if (kind === "object" || kind === "array") {
          try {
            types.push(shapeOf(p.value, NESTED_RULES));
          } catch (error) {
            return nestedMismatch(p.name, error);
          }
        } else types.push(columnTypeFor(kind));
      } else if (isNested(p.column.type)) {
        try {
          types.push(evolved(p.column.type, p.value, NESTED_RULES, p.column.open, []));
        } catch (error) {
          if (error instanceof NestedMismatch && error.path.length === 0) return typeMismatch(p.column, kind);
          return nestedMismatch(p.name, error);
        }
      } else {
        const type = p.column.open ? generalized(p.column.type, kind) : promoted(p.column.type, kind);
        if (type === undefined || !fitsType(type, p.value)) {
          return kind === "huge" ? outOfRange(p.name, p.column, p.value) : typeMismatch(p.column, kind);
        }
        types.push(type);
      }
    }
    for (let i = 0; i < pending.length; i++) {
      const p = pending[i]!;
      const type = types[i];
      // An empty object or array, or one of nulls only, shows no type: no column yet.
      if (type === undefined) continue;
      if (p.column === undefined) this.#add(p.name, type, undefined, true);
      else if (isNested(type)) {
        // A new column's struct is added whole with the column; a table's struct gets its new fields.
        const numbered = numberNewFields(type, [p.name], this.#nextId, p.column.open ? [] : this.#nestedAdded);
        this.#nextId = numbered.lastId;
        p.column.type = numbered.type;
      } else p.column.type = type;
    }
    return undefined;
  }
}

/** Does the value go into the column as it is? The fast path, run for every field of every record. */
function fits(column: Column, value: JsonValue, whole: boolean): boolean {
  switch (column.type) {
    case "string":
      return true;
    case "long":
      if (typeof value === "number") return Number.isSafeInteger(value) && (!column.open || !whole);
      return typeof value === "bigint" && value >= INT64_MIN && value <= INT64_MAX;
    default:
      return fitsType(column.type, value);
  }
}

/** Does the value go into a column of this type as it is (a column whose type no longer generalizes)? */
export function fitsType(type: IcebergType, value: JsonValue): boolean {
  switch (type) {
    case "string":
      return true;
    case "long":
      if (typeof value === "number") return Number.isSafeInteger(value);
      return typeof value === "bigint" && value >= INT64_MIN && value <= INT64_MAX;
    case "double":
      // Integers too long for a double (more than 308 digits) would be infinities.
      return typeof value === "number" || (typeof value === "bigint" && Number.isFinite(Number(value)));
    case "timestamptz":
      return typeof value === "string" && timestampMicros(value) !== undefined;
    case "boolean":
      return typeof value === "boolean";
    case "int":
      return typeof value === "number" && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX;
    case "float":
      return typeof value === "number" && Math.fround(value) === value;
    default:
      return isNested(type) && fitsNested(type, value, NESTED_RULES);
  }
}

/** The type of a non-null JSON value; `whole`: a number written as a decimal or with an exponent. */
export function valueTypeOf(value: JsonValue, whole: boolean): ValueType {
  switch (typeof value) {
    case "boolean":
      return "boolean";
    case "number":
      // An integer beyond 2^53 as a number was written as a decimal (the decoder makes integer
      // literals beyond 2^53 bigints): it is not exact, so not an integer either.
      return Number.isSafeInteger(value) && !whole ? "long" : "double";
    case "bigint":
      return value >= INT64_MIN && value <= INT64_MAX ? "long" : "huge";
    case "string":
      return timestampMicros(value) === undefined ? "string" : "timestamptz";
    default:
      return Array.isArray(value) ? "array" : "object";
  }
}

/** The column a new field gets from its first value ("huge" gets none). */
export function columnTypeFor(kind: Exclude<ValueType, "huge">): Exclude<DeclarableType, "json" | "map"> {
  return kind === "object" || kind === "array" ? "string" : kind;
}

/** Iceberg's promotions, for a column whose values have been written. */
function promoted(type: IcebergType, kind: ValueType): IcebergType | undefined {
  if (type === "int" && kind === "long") return "long";
  if (type === "float" && (kind === "double" || kind === "long" || kind === "huge")) return "double";
  return undefined;
}

/** The more general of an open column's type so far and a value's kind. */
function generalized(type: IcebergType, kind: ValueType): IcebergType | undefined {
  if (type === "long" && kind === "double") return "double";
  if (type === "timestamptz" && (kind === "string" || kind === "object" || kind === "array")) return "string";
  return undefined;
}

export function describeValueType(kind: ValueType): string {
  return kind === "huge" ? "integer beyond the long range" : kind;
}

/** The primitive rules, for the leaves of nested values (whole decimals are tracked at the top level only). */
const NESTED_RULES: LeafRules = {
  kindOf: (value) => valueTypeOf(value, false),
  typeFor: (kind) => columnTypeFor(kind),
  fits: fitsType,
  generalized,
};

function nestedMismatch(field: string, error: unknown): SchemaMismatch {
  if (!(error instanceof NestedMismatch)) throw error;
  return mismatch("type-mismatch", [field, ...error.path].join("."), error.message);
}

function mismatch(reason: SchemaMismatchReason, field: string, problem: string): SchemaMismatch {
  return { reason, field, detail: `field ${JSON.stringify(field)}: ${problem}` };
}

function typeMismatch(column: Column, kind: ValueType): SchemaMismatch {
  const type = typeToString(column.type);
  let detail = `column type ${type}, value type ${describeValueType(kind)}`;
  if (column.type === "timestamptz" && kind === "string")
    detail += " (a timestamp needs a date, a time and a zone offset)";
  else if (column.open) detail += ` (the column is new in this commit, and ${type} so far)`;
  return mismatch("type-mismatch", column.name, detail);
}

function outOfRange(field: string, column: Column | undefined, value: JsonValue): SchemaMismatch {
  const type = column === undefined ? "(new column)" : typeToString(column.type);
  const holds =
    column?.type === "double" || column?.type === "float"
      ? "a double holds about ±1.8e308"
      : "a long holds -2^63 to 2^63-1";
  return mismatch(
    "out-of-range",
    field,
    `column type ${type}, value type ${describeValueType("huge")} ` +
      `(${String(value).replace("-", "").length} digits; ${holds}): produce it as a string, or declare the column string`,
  );
}

function nullInRequired(column: Column): SchemaMismatch {
  return mismatch(
    "null-in-required",
    column.name,
    `column type ${typeToString(column.type)} (required), value type null: the table requires a value`,
  );
}

function toField(column: Column): NestedField {
  return {
    id: column.id,
    name: column.name,
    required: column.required,
    type: column.type,
    ...(column.doc === undefined ? {} : { doc: column.doc }),
  };
}

function checkSystemColumn(field: NestedField): void {
  const expected = SYSTEM_COLUMNS.find((f) => f.name === field.name)!;
  // A table keeps the `_floe_id` form it was created with: fixed[16] or binary bytes, or hex text.
  if (
    field.name === FLOE_ID
      ? floeIdForm(field.type) === undefined
      : typeToString(field.type) !== typeToString(expected.type)
  ) {
    const wanted = field.name === FLOE_ID ? "fixed[16] (binary and string also hold it)" : typeToString(expected.type);
    throw new TypeError(
      `the table's column ${field.name} is ${typeToString(field.type)}; floe's system column is ${wanted}`,
    );
  }
}
