// A batch of rows for one Iceberg schema, built column by column and handed to the Parquet
// writer as an Arrow table whose fields carry the schema's field ids (arrow-schema.ts).
//
// The sync engine appends a row by calling the typed appenders of the top-level columns it has
// values for, then endRow(), which gives a null to every column left out (a required one
// throws). If anything throws halfway through a row, discardRow() takes the partial row back
// from every column. appendRow() does all of that for a record keyed by field name.
import * as arrow from "apache-arrow";
import type { Schema } from "../spec/schema.ts";
import { arrowSchema } from "./arrow-schema.ts";
import { type AnyColumn, ColumnTypeError, createColumn } from "./column-builders.ts";

export class ColumnBatchBuilder {
  readonly schema: Schema;
  readonly arrowSchema: arrow.Schema;
  readonly columns: readonly AnyColumn[];
  readonly #byId = new Map<number, AnyColumn>();
  #rows = 0;
  #built = false;

  /** `expectedRows`, when known (the messages fetched), sizes the columns once: no regrowth. */
  constructor(schema: Schema, expectedRows?: number) {
    this.schema = schema;
    this.arrowSchema = arrowSchema(schema);
    this.columns = schema.fields.map((field, i) => createColumn(field, this.arrowSchema.fields[i]!, expectedRows));
    for (const column of this.columns) this.#byId.set(column.field.id, column);
  }

  get rowCount(): number {
    return this.#rows;
  }

  /** The builder of a top-level field; narrow it by `kind` to reach its typed appenders. */
  column(fieldId: number): AnyColumn {
    const column = this.#byId.get(fieldId);
    if (column === undefined) throw new RangeError(`no top-level field with id ${fieldId} in the schema`);
    return column;
  }

  /** Closes the current row: every column must hold one value for it, or none (then null). */
  endRow(): void {
    const rows = this.#rows;
    for (const column of this.columns) {
      if (column.length === rows) {
        if (column.field.required) throw new ColumnTypeError(column.field, "required field is missing");
        column.appendNull();
      } else if (column.length !== rows + 1) {
        throw new ColumnTypeError(column.field, `${column.length - rows} values appended in one row`);
      }
    }
    this.#rows = rows + 1;
  }

  /** Takes back whatever was appended since the last endRow(). */
  discardRow(): void {
    for (const column of this.columns) column.truncate(this.#rows);
  }

  /** Appends a record keyed by field name (generic path); on error nothing of it stays. */
  appendRow(record: Readonly<Record<string, unknown>>): void {
    try {
      for (const column of this.columns) column.appendValue(record[column.field.name]);
      this.endRow();
    } catch (error) {
      this.discardRow();
      throw error;
    }
  }

  /** The rows as an Arrow table of one record batch, sharing the builders' arrays (no copy). */
  build(): arrow.Table {
    if (this.#built) throw new Error("the batch was already built");
    this.discardRow();
    this.#built = true;
    const type = new arrow.Struct(this.arrowSchema.fields);
    const children = this.columns.map((column) => column.toData());
    const data = arrow.makeData({ type, length: this.#rows, nullCount: 0, children });
    return new arrow.Table([new arrow.RecordBatch(this.arrowSchema, data)]);
  }
}
