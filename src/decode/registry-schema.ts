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
//
// Nested columns (struct, list, map) follow the same rules inside, field by field: a field new
// in a struct is added to it (add-column with the struct as parent, new ids after the table's
// last column id, spec "Schema Evolution"), a struct field's int -> long or float -> double
// widens it, a field the new schema drops stays, and anything else (a struct turned list, a
// map's key type changed, a list's or map's own primitive elements widened, which floe does
// not do) stops the sync naming the dotted path. A field declared json in the job file, or a
// nested field whose column the table has as a string (from before nested types), is decoded as
// its JSON text (textColumns) and so stays a string column.

import { withFreshIds } from "../iceberg/spec/fresh-ids.ts";
import type { Schema } from "../iceberg/spec/schema.ts";
import { canPromote, type IcebergType, isPrimitive, type NestedField, typeToString } from "../iceberg/spec/types.ts";
import { type DeclaredColumns, NO_DECLARED_COLUMNS } from "./declared-columns.ts";
import type { ColumnChange, TableSchema } from "./infer-schema.ts";
import { numberNewFields } from "./nested-values.ts";
import { isSystemColumn, SYSTEM_COLUMNS } from "./system-columns.ts";
import { NO_TEXT_COLUMNS, type SchemaColumn, type TextColumns } from "./typed-record.ts";

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
  readonly #declaredText: ReadonlySet<string>;
  readonly #textColumns = new Map<string, TextColumns>();
  #nextId: number;

  /** `declared`: the job file's columns; only json is declarable for a registry format (the schema types the rest). */
  constructor(table?: TableSchema, declared: DeclaredColumns = NO_DECLARED_COLUMNS) {
    this.#declaredText = new Set([...declared].filter(([, type]) => type === "json").map(([name]) => name));
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
  /**
   * The fields of a schema (of one of its message types, `variant`) to decode as their JSON
   * text: those declared json, and the nested ones whose column is a string column already.
   */
  textColumns(schemaId: number, columns: readonly SchemaColumn[], variant = ""): TextColumns {
    const key = `${schemaId}/${variant}`;
    let found = this.#textColumns.get(key);
    if (found === undefined) {
      const names = new Set<string>();
      for (const field of columns) {
        if (this.#declaredText.has(field.name)) names.add(field.name);
        else if (!isPrimitive(field.type) && this.#columns.get(field.name)?.type === "string") names.add(field.name);
      }
      found = names.size === 0 ? NO_TEXT_COLUMNS : names;
      this.#textColumns.set(key, found);
    }
    return found;
  }

  observe(schemaId: number, columns: readonly SchemaColumn[], place: MessagePlace, variant = ""): void {
    const key = `${schemaId}/${variant}`;
    if (this.#seen.has(key)) return;
    const updates: { column: Column; type: IcebergType }[] = [];
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
      let type: IcebergType;
      try {
        type = merged(current, field.type, []);
      } catch (error) {
        if (!(error instanceof NestedConflict)) throw error;
        throw this.#conflict(place, column, field, schemaId, error);
      }
      if (type !== current) updates.push({ column, type });
    }
    for (const { column, type } of updates) {
      // New fields inside get ids after the last one; the commit adds them with their parents.
      const numbered = numberNewFields(type, [column.name], this.#nextId, []);
      this.#nextId = numbered.lastId;
      column.type = numbered.type;
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

  /** New columns, then the fields new inside the table's nested columns, then widened ones, as the commit applies them. */
  changes(): ColumnChange[] {
    const changes: ColumnChange[] = this.#added.map((column) => ({ kind: "add-column", field: toField(column) }));
    const widened: ColumnChange[] = [];
    for (const column of this.#columns.values()) {
      if (column.tableType !== undefined && typeToString(column.type) !== typeToString(column.tableType)) {
        differences(column.tableType, column.type, [column.name], changes, widened);
      }
    }
    return [...changes, ...widened];
  }

  #conflict(
    place: MessagePlace,
    column: Column,
    field: SchemaColumn,
    schemaId: number,
    nested: NestedConflict,
  ): SchemaEvolutionError {
    const path = [field.name, ...nested.path].join(".");
    const inside = nested.path.length === 0 ? "" : ` (at ${path}: ${nested.message})`;
    const before =
      column.schemaId === undefined
        ? `the table's column is ${typeToString(column.type)}`
        : `schema id ${column.schemaId} made it ${typeToString(column.type)}`;
    return new SchemaEvolutionError(
      place,
      path,
      `schema id ${schemaId} has it as ${typeToString(field.type)}, and ${before}${inside}: Iceberg only widens int to long, ` +
        "float to double and a decimal's precision, and adds fields to structs; give the stream a new table (table:) for an incompatible schema",
    );
  }

  #add(name: string, shape: IcebergType, doc: string | undefined, schemaId: number | undefined): void {
    const id = ++this.#nextId;
    const { type, lastId } = withFreshIds(shape, id);
    this.#nextId = lastId;
    const column: Column = { name, id, type, tableType: undefined, doc, schemaId };
    this.#added.push(column);
    this.#namesByLowerCase.set(name.toLowerCase(), name);
    if (!isSystemColumn(name)) this.#columns.set(name, column);
  }
}

/** Where a schema's nested type cannot become its column's: `path` below the column. */
class NestedConflict extends Error {
  readonly path: readonly string[];
  constructor(path: readonly string[], from: IcebergType, to: IcebergType, reason?: string) {
    super(reason ?? `${typeToString(to)} where the column has ${typeToString(from)}`);
    this.path = path;
  }
}

/**
 * The column type that takes a schema's type as well: `current` itself when it does, widened
 * where the schema's leaves are wider, with the schema's fields that a struct lacks appended
 * (id 0). Throws NestedConflict where neither fits the other.
 */
function merged(current: IcebergType, next: IcebergType, path: readonly string[], widens = true): IcebergType {
  if (isPrimitive(current) || isPrimitive(next)) {
    if (!isPrimitive(current) || !isPrimitive(next)) throw new NestedConflict(path, current, next);
    if (typeToString(current) === typeToString(next)) return current;
    // A narrower type than the column's (int for a long column) fits as it is.
    if (canPromote(next, current)) return current;
    // A list's or map's own primitive elements are not widened: floe's schema changes name fields.
    if (widens && canPromote(current, next)) return next;
    throw new NestedConflict(path, current, next);
  }
  if (current.kind === "struct" && next.kind === "struct") {
    let fields: NestedField[] | undefined;
    for (const field of next.fields) {
      const list = fields ?? current.fields;
      const index = list.findIndex((f) => f.name === field.name);
      if (index < 0) {
        const lower = field.name.toLowerCase();
        const twin = list.find((f) => f.name.toLowerCase() === lower);
        if (twin !== undefined) {
          throw new NestedConflict(
            [...path, field.name],
            twin.type,
            field.type,
            `field ${JSON.stringify(twin.name)} differs only in case, and Spark, Databricks and Trino match names without case`,
          );
        }
        fields = [...list, { ...field, required: false }];
        continue;
      }
      const existing = list[index]!;
      const type = merged(existing.type, field.type, [...path, field.name]);
      if (type !== existing.type) {
        fields = [...list];
        fields[index] = { ...existing, type };
      }
    }
    return fields === undefined ? current : { kind: "struct", fields };
  }
  if (current.kind === "list" && next.kind === "list") {
    const element = merged(current.element, next.element, [...path, "element"], false);
    return element === current.element ? current : { ...current, element };
  }
  if (current.kind === "map" && next.kind === "map") {
    if (typeToString(current.key) !== typeToString(next.key))
      throw new NestedConflict([...path, "key"], current.key, next.key);
    const value = merged(current.value, next.value, [...path, "value"], false);
    return value === current.value ? current : { ...current, value };
  }
  throw new NestedConflict(path, current, next);
}

/**
 * The changes that make a table's column type `table` into `now`: fields new in its structs
 * (added with their parents' names), and struct fields widened.
 */
function differences(
  table: IcebergType,
  now: IcebergType,
  path: readonly string[],
  added: ColumnChange[],
  widened: ColumnChange[],
): void {
  if (isPrimitive(table) || isPrimitive(now)) {
    if (isPrimitive(table) && isPrimitive(now) && typeToString(table) !== typeToString(now)) {
      const parent = path.slice(0, -1);
      widened.push({
        kind: "widen",
        name: path.at(-1)!,
        from: table,
        to: now,
        ...(parent.length === 0 ? {} : { parent }),
      });
    }
    return;
  }
  if (table.kind === "struct" && now.kind === "struct") {
    for (const field of now.fields) {
      const before = table.fields.find((f) => f.name === field.name);
      if (before === undefined) added.push({ kind: "add-column", field, parent: path });
      else differences(before.type, field.type, [...path, field.name], added, widened);
    }
  } else if (table.kind === "list" && now.kind === "list") {
    differences(table.element, now.element, path, added, widened);
  } else if (table.kind === "map" && now.kind === "map") {
    differences(table.value, now.value, path, added, widened);
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
