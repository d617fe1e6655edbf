// The table's columns of a stream whose values carry their schema (Avro or Protobuf through a
// schema registry): the columns come from the writer schemas, not from the values. The first
// message framed with a schema id brings that schema's columns in (observe); a later schema
// version evolves the table within the same sync:
//
//   a field the table lacks                         a new optional column (doc from the schema)
//   int -> long, float -> double                    the column widens (Iceberg's promotions),
//   decimal(p, s) -> decimal(p', s), p' > p          and so does a decimal's precision
//   a field the table has with the same type        nothing
//   a field the new schema drops                    nothing: its column stays, null from now on
//   anything else (long -> int, string -> long ...)  SchemaEvolutionError: the sync stops before
//                                                   it commits the batch, naming the field and
//                                                   the two schema ids
//
// A narrower schema than the column (int into a long column, after a widening) is fine: its
// values fit. System column names and columns that differ from another only in case are refused
// like that too, since no message of the schema could be a row.
import type { Schema } from "../iceberg/spec/schema.ts";
import {
  canPromote,
  type IcebergType,
  isPrimitive,
  type NestedField,
  type PrimitiveType,
  typeToString,
} from "../iceberg/spec/types.ts";
import type { ColumnChange, TableSchema } from "./infer-schema.ts";
import { isSystemColumn, SYSTEM_COLUMNS } from "./system-columns.ts";
import type { SchemaColumn } from "./typed-record.ts";

/** Where a message came from, for the error that names it. */
export interface MessagePlace {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
}

/** A schema version that the table cannot take: the sync fails and commits nothing of the batch. */
export class SchemaEvolutionError extends Error {
  readonly field: string;

  constructor(place: MessagePlace, field: string, problem: string) {
    super(
      `topic ${place.topic} partition ${place.partition} offset ${place.offset}: field ${JSON.stringify(field)}: ${problem}`,
    );
    this.name = "SchemaEvolutionError";
    this.field = field;
  }
}

interface Column {
  readonly name: string;
  readonly id: number;
  type: IcebergType;
  readonly tableType: IcebergType | undefined;
  readonly doc: string | undefined;
  /** The schema id that gave the column its type, when this sync saw one; undefined: the table's. */
  schemaId: number | undefined;
}

export class RegistrySchema {
  readonly #base: Schema;
  readonly #creating: boolean;
  readonly #columns = new Map<string, Column>();
  readonly #added: Column[] = [];
  readonly #namesByLowerCase = new Map<string, string>();
  readonly #seen = new Set<string>();
  #nextId: number;

  constructor(table?: TableSchema) {
    this.#base = table?.schema ?? { schemaId: 0, fields: SYSTEM_COLUMNS };
    this.#creating = table === undefined;
    this.#nextId = table?.lastColumnId ?? SYSTEM_COLUMNS.length;
    for (const field of this.#base.fields) {
      this.#namesByLowerCase.set(field.name.toLowerCase(), field.name);
      if (isSystemColumn(field.name)) continue;
      this.#columns.set(field.name, {
        name: field.name,
        id: field.id,
        type: field.type,
        tableType: field.type,
        doc: field.doc,
        schemaId: undefined,
      });
    }
    for (const system of SYSTEM_COLUMNS) {
      this.#namesByLowerCase.set(system.name.toLowerCase(), system.name);
      if (!this.#base.fields.some((f) => f.name === system.name))
        this.#add(system.name, system.type, system.doc, undefined);
    }
  }

  /**
   * Takes in the columns of a schema (of one of its message types, `variant`), met first at
   * `place`. Throws SchemaEvolutionError when a field's type cannot become its column's, and
   * changes nothing then.
   */
  observe(schemaId: number, columns: readonly SchemaColumn[], place: MessagePlace, variant = ""): void {
    const key = `${schemaId}/${variant}`;
    if (this.#seen.has(key)) return;
    const updates: { column: Column; type: PrimitiveType }[] = [];
    const additions: SchemaColumn[] = [];
    const newNames = new Map<string, string>();
    for (const field of columns) {
      if (isSystemColumn(field.name)) {
        throw new SchemaEvolutionError(
          place,
          field.name,
          `schema id ${schemaId}: the name is reserved for floe's system column`,
        );
      }
      const column = this.#columns.get(field.name);
      if (column === undefined) {
        const lower = field.name.toLowerCase();
        const existing = this.#namesByLowerCase.get(lower) ?? newNames.get(lower);
        if (existing !== undefined) {
          throw new SchemaEvolutionError(
            place,
            field.name,
            `schema id ${schemaId}: column ${JSON.stringify(existing)} differs only in case, and Spark, Databricks and Trino match column names without case`,
          );
        }
        newNames.set(lower, field.name);
        additions.push(field);
        continue;
      }
      const current = column.type;
      if (typeToString(current) === typeToString(field.type)) {
        column.schemaId ??= schemaId;
        continue;
      }
      if (!isPrimitive(current)) throw this.#conflict(place, column, field, schemaId);
      const currentPrimitive = current;
      // A narrower type than the column's (int for a long column) fits as it is.
      if (canPromote(field.type, currentPrimitive)) continue;
      if (!canPromote(currentPrimitive, field.type)) throw this.#conflict(place, column, field, schemaId);
      updates.push({ column, type: field.type });
    }
    for (const { column, type } of updates) {
      column.type = type;
      column.schemaId = schemaId;
    }
    for (const field of additions) this.#add(field.name, field.type, field.doc, schemaId);
    this.#seen.add(key);
  }

  /** Nothing to close: a registry schema's column types are known from the start. */
  settle(): void {}

  get lastColumnId(): number {
    return this.#nextId;
  }

  /** The table's schema with these changes; id 0 for a table to create, else the base's plus one if changed. */
  get schema(): Schema {
    const changed = !this.#creating && this.changes().length > 0;
    const fields: NestedField[] = this.#base.fields.map((field) => {
      const column = this.#columns.get(field.name);
      return column && column.type !== field.type ? { ...field, type: column.type } : field;
    });
    for (const column of this.#added) fields.push(toField(column));
    return { ...this.#base, schemaId: changed ? this.#base.schemaId + 1 : this.#base.schemaId, fields };
  }

  /** New columns, then widened ones, as the commit applies them. */
  changes(): ColumnChange[] {
    const changes: ColumnChange[] = this.#added.map((column) => ({ kind: "add-column", field: toField(column) }));
    for (const column of this.#columns.values()) {
      if (column.tableType !== undefined && typeToString(column.type) !== typeToString(column.tableType)) {
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

  #conflict(place: MessagePlace, column: Column, field: SchemaColumn, schemaId: number): SchemaEvolutionError {
    const before =
      column.schemaId === undefined
        ? `the table's column is ${typeToString(column.type)}`
        : `schema id ${column.schemaId} made it ${typeToString(column.type)}`;
    return new SchemaEvolutionError(
      place,
      field.name,
      `schema id ${schemaId} has it as ${typeToString(field.type)}, and ${before}: Iceberg only widens int to long, ` +
        "float to double and a decimal's precision; give the stream a new table (table:) for an incompatible schema",
    );
  }

  #add(name: string, type: IcebergType, doc: string | undefined, schemaId: number | undefined): void {
    const column: Column = { name, id: ++this.#nextId, type, tableType: undefined, doc, schemaId };
    this.#added.push(column);
    this.#namesByLowerCase.set(name.toLowerCase(), name);
    if (!isSystemColumn(name)) this.#columns.set(name, column);
  }
}

function toField(column: Column): NestedField {
  return {
    id: column.id,
    name: column.name,
    required: false,
    type: column.type,
    ...(column.doc === undefined ? {} : { doc: column.doc }),
  };
}
