// Schema inference and evolution: the table's columns from the messages' top-level fields.
//
// A JSON value gives a type:
//   true/false                                   boolean
//   integer (written without . or exponent)      long
//   other number (99.19, 1299.0, 1e3)            double
//   timestamp string (see timestamp.ts)          timestamptz (UTC)
//   other string                                 string
//   object or array                              string, holding the JSON text
//   null                                         nothing: a field seen only as null gets no
//                                                column until a value shows its type, because
//                                                a guess (string) would turn the first real
//                                                value (a number) into a failing type change
//
// New columns (fields the table lacks) stay open while the sample that introduces them is
// read: a column seen as long and then as double is double, a column seen as timestamp and
// then as another string is string (the general type wins within a sample). `settle()` closes
// them, once their values are converted: from then on, as for the table's own columns, only
// Iceberg's promotions apply: an int column that gets a long widens to long, a float column
// that gets a double it cannot hold exactly widens to double (floe never creates int or float
// columns; tables created by others may have them). Anything else, e.g. a double or a string
// for a long column, a non-timestamp string for a timestamptz column, is a SchemaConflictError
// naming topic, partition, offset and field: the sync fails with nothing committed.
//
// An integer outside the long range is a conflict too (reason "out-of-range"), except for a
// double column: floe does not silently round ids. New columns get ids after the table's last
// column id, in the order their fields were first seen, and are optional.
import type { Schema } from "../iceberg/spec/schema.ts";
import { type IcebergType, type NestedField, type PrimitiveType, typeToString } from "../iceberg/spec/types.ts";
import type { DecodedRecord, JsonValue } from "./json-message.ts";
import { type MessagePosition, SchemaConflictError } from "./schema-conflict.ts";
import { isSystemColumn, SYSTEM_COLUMNS } from "./system-columns.ts";
import { timestampMicros } from "./timestamp.ts";

export type ColumnChange =
  | { readonly kind: "add-column"; readonly field: NestedField }
  | { readonly kind: "widen"; readonly name: string; readonly from: PrimitiveType; readonly to: PrimitiveType };

/** The table an inference starts from: its current schema and its last-column-id. */
export interface TableSchema {
  readonly schema: Schema;
  readonly lastColumnId: number;
}

/** What a JSON value says about its column's type; "huge" is an integer beyond the long range. */
type ValueKind = "boolean" | "long" | "double" | "timestamptz" | "string" | "json" | "huge";

interface Column {
  readonly name: string;
  readonly id: number;
  type: IcebergType;
  /** The type in the table before this inference; undefined for a column it adds. */
  readonly tableType: IcebergType | undefined;
  readonly required: boolean;
  readonly doc: string | undefined;
  /** False while a new column's type may still generalize within its sample. */
  settled: boolean;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

export class SchemaInference {
  private readonly base: Schema;
  /** No table yet: the schema is the one to create the table with, id 0. */
  private readonly creating: boolean;
  /** The message fields' columns by name; system columns are not here, so a field cannot match one. */
  private readonly columns = new Map<string, Column>();
  /** Columns this inference adds, in id order. */
  private readonly added: Column[] = [];
  private readonly requiredColumns: Column[] = [];
  private readonly namesByLowerCase = new Map<string, string>();
  private nextId: number;

  /** Starts from an existing table, or from floe's system columns alone for a table to create. */
  constructor(table?: TableSchema) {
    this.base = table?.schema ?? { schemaId: 0, fields: SYSTEM_COLUMNS };
    this.creating = table === undefined;
    this.nextId = table?.lastColumnId ?? SYSTEM_COLUMNS.length;
    for (const system of SYSTEM_COLUMNS) this.namesByLowerCase.set(system.name.toLowerCase(), system.name);
    for (const field of this.base.fields) {
      this.namesByLowerCase.set(field.name.toLowerCase(), field.name);
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
        settled: true,
      };
      this.columns.set(field.name, column);
      if (field.required) this.requiredColumns.push(column);
    }
    for (const system of SYSTEM_COLUMNS) {
      if (!this.base.fields.some((f) => f.name === system.name)) this.add(system.name, system.type, system.doc, true);
    }
  }

  /**
   * Takes one record's fields into the schema. `position` is only read to report a conflict,
   * so the caller can pass the Kafka message itself (it has topic, partition and offset).
   */
  observe(decoded: DecodedRecord, position: MessagePosition): void {
    const { record, wholeDecimals } = decoded;
    for (const name in record) {
      const value = record[name]!;
      const column = this.columns.get(name);
      const whole = wholeDecimals?.has(name) === true;
      if (column === undefined) {
        if (value !== null) this.addField(name, value, whole, position);
      } else if (value === null) {
        if (column.required) throw nullInRequired(column, position);
      } else if (!fits(column, value, whole)) {
        this.evolve(column, value, whole, position);
      }
    }
    for (const column of this.requiredColumns) {
      if (record[column.name] === undefined) throw nullInRequired(column, position);
    }
  }

  /** Closes the new columns' types: their values are about to be converted and written. */
  settle(): void {
    for (const column of this.added) column.settled = true;
  }

  /**
   * The table's schema with this inference's changes. Its id is 0 for a table to create, else
   * the base's, plus one if anything changed (the commit gives the id the table will use).
   */
  get schema(): Schema {
    const changed = !this.creating && this.changes().length > 0;
    const fields = this.base.fields.map((field) => {
      const column = this.columns.get(field.name);
      return column && column.type !== field.type ? { ...field, type: column.type } : field;
    });
    for (const column of this.added) fields.push(toField(column));
    return { ...this.base, schemaId: changed ? this.base.schemaId + 1 : this.base.schemaId, fields };
  }

  /** The highest column id assigned: the table's last-column-id after these changes. */
  get lastColumnId(): number {
    return this.nextId;
  }

  /** New columns (system columns the table lacked first), then widened ones, as the commit applies them. */
  changes(): ColumnChange[] {
    const changes: ColumnChange[] = this.added.map((column) => ({ kind: "add-column", field: toField(column) }));
    for (const column of this.columns.values()) {
      if (column.tableType !== undefined && column.type !== column.tableType) {
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

  private addField(name: string, value: JsonValue, whole: boolean, position: MessagePosition): void {
    if (isSystemColumn(name)) {
      throw new SchemaConflictError("reserved-name", position, name, "the name is reserved for floe's system column");
    }
    const existing = this.namesByLowerCase.get(name.toLowerCase());
    if (existing !== undefined) {
      throw new SchemaConflictError(
        "case-collision",
        position,
        name,
        `column ${JSON.stringify(existing)} differs only in case, and Spark, Databricks and Trino match column names without case`,
      );
    }
    const kind = kindOf(value, whole);
    if (kind === "huge") throw outOfRange(name, value, position);
    this.add(name, kind === "json" ? "string" : kind, undefined, false);
  }

  private add(name: string, type: IcebergType, doc: string | undefined, settled: boolean): void {
    const column: Column = { name, id: ++this.nextId, type, tableType: undefined, required: false, doc, settled };
    this.added.push(column);
    this.namesByLowerCase.set(name.toLowerCase(), name);
    if (!isSystemColumn(name)) this.columns.set(name, column);
  }

  /** The slow path: a value that does not fit its column as it is. */
  private evolve(column: Column, value: JsonValue, whole: boolean, position: MessagePosition): void {
    const kind = kindOf(value, whole);
    const type = column.settled ? promoted(column.type, kind) : generalized(column.type, kind);
    if (type !== undefined) {
      column.type = type;
      return;
    }
    if (kind === "huge") throw outOfRange(column.name, value, position);
    const where = column.settled ? "column is" : "column is so far";
    throw new SchemaConflictError(
      "type-change",
      position,
      column.name,
      `${where} ${typeToString(column.type)} and the message has ${describeKind(kind)}; ` +
        "Iceberg only widens int to long and float to double",
    );
  }
}

/** Does the value go into the column as it is? The fast path, run for every field of every record. */
function fits(column: Column, value: JsonValue, whole: boolean): boolean {
  switch (column.type) {
    case "string":
      return typeof value === "string" || typeof value === "object";
    case "long":
      if (typeof value === "number") return Number.isInteger(value) && (column.settled || !whole);
      return typeof value === "bigint" && value >= INT64_MIN && value <= INT64_MAX;
    case "double":
      return typeof value === "number" || typeof value === "bigint";
    case "timestamptz":
      return typeof value === "string" && timestampMicros(value) !== undefined;
    case "boolean":
      return typeof value === "boolean";
    case "int":
      return typeof value === "number" && Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX;
    case "float":
      return typeof value === "number" && Math.fround(value) === value;
    default:
      return false;
  }
}

function kindOf(value: JsonValue, whole: boolean): ValueKind {
  switch (typeof value) {
    case "boolean":
      return "boolean";
    case "number":
      return Number.isInteger(value) && !whole ? "long" : "double";
    case "bigint":
      return value >= INT64_MIN && value <= INT64_MAX ? "long" : "huge";
    case "string":
      return timestampMicros(value) === undefined ? "string" : "timestamptz";
    default:
      return "json";
  }
}

/** Iceberg's promotions, for a column whose values have been written. */
function promoted(type: IcebergType, kind: ValueKind): IcebergType | undefined {
  if (type === "int" && kind === "long") return "long";
  if (type === "float" && (kind === "double" || kind === "long" || kind === "huge")) return "double";
  return undefined;
}

/** The more general of a new column's type so far and a value's kind. */
function generalized(type: IcebergType, kind: ValueKind): IcebergType | undefined {
  if (type === "long" && kind === "double") return "double";
  if (type === "timestamptz" && (kind === "string" || kind === "json")) return "string";
  return undefined;
}

function describeKind(kind: ValueKind): string {
  switch (kind) {
    case "json":
      return "a nested object or array (a JSON string column)";
    case "long":
      return "an integer (long)";
    case "huge":
      return "an integer beyond the long range";
    case "timestamptz":
      return "a timestamp string (timestamptz)";
    default:
      return `a ${kind}`;
  }
}

function outOfRange(field: string, value: JsonValue, position: MessagePosition): SchemaConflictError {
  const digits = String(value).length;
  return new SchemaConflictError(
    "out-of-range",
    position,
    field,
    `an integer of ${digits} digits is beyond the long range (-2^63 to 2^63-1); produce it as a string`,
  );
}

function nullInRequired(column: Column, position: MessagePosition): SchemaConflictError {
  return new SchemaConflictError("null-in-required", position, column.name, "the table requires a value");
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
  if (typeToString(field.type) !== typeToString(expected.type)) {
    throw new TypeError(
      `the table's column ${field.name} is ${typeToString(field.type)}; floe's system column is ${typeToString(expected.type)}`,
    );
  }
}
