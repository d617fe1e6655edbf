// Messages -> the rows of a table's Parquet files: the system columns (decode/system-columns.ts)
// and the record's fields, each converted once to its column's representation and appended to
// the column builders by field id (no object per row). `_floe_id` takes the form its table's
// column has (decode/system-columns.ts): the key hash's 16 bytes, or their hex in an older table.
import { type ColumnConverter, type ColumnValue, columnConverter, isConvertible } from "../decode/column-value.ts";
import type { JsonValue } from "../decode/json-message.ts";
import {
  CDC_TIMESTAMP,
  FLOE_ID,
  FLOE_TIMESTAMP,
  floeIdForm,
  isSystemColumn,
  KAFKA_KEY,
  KAFKA_OFFSET,
  KAFKA_PARTITION,
  KAFKA_TIMESTAMP,
  millisToMicros,
  OP_TYPE,
  type OpType,
} from "../decode/system-columns.ts";
import { ColumnBatchBuilder } from "../iceberg/parquet/column-batch.ts";
import type { AnyColumn } from "../iceberg/parquet/column-builders.ts";
import type { Schema } from "../iceberg/spec/schema.ts";
import { typeToString } from "../iceberg/spec/types.ts";
import { formatKeyHash, keyHashBytes } from "../upsert/key-hash.ts";
import type { RowMessages } from "./binding-batch.ts";

interface RecordColumn {
  name: string;
  column: AnyColumn;
  convert: ColumnConverter;
  /**
   * A name every object inherits (constructor, toString, __proto__): a record without the
   * field would give Object.prototype's member, so only an own property is the field's value.
   */
  inherited: boolean;
}

const asIs: ColumnConverter = (value) => value as ColumnValue;

export class RowBatch {
  readonly builder: ColumnBatchBuilder;
  readonly #system: Partial<Record<string, AnyColumn>> = {};
  readonly #recordColumns: RecordColumn[] = [];
  readonly #writtenAtMicros = millisToMicros(Date.now());
  /** `_floe_id` as bytes (fixed[16], binary) or hex (string): what the table's column holds. */
  readonly #floeIdBytes: boolean;
  /** One row's `_floe_id` bytes: the column builder copies them, so one buffer serves every row. */
  readonly #floeId = new Uint8Array(16);

  /**
   * `expectedRows`: the rows about to be appended, so that the column builders are sized once.
   * `typed`: the records are TypedRecords, whose values are their columns' already.
   */
  constructor(schema: Schema, expectedRows?: number, typed = false) {
    this.builder = new ColumnBatchBuilder(schema, expectedRows);
    let floeIdBytes = true;
    for (const field of schema.fields) {
      if (field.name === FLOE_ID) {
        const form = floeIdForm(field.type);
        if (form === undefined) {
          throw new TypeError(
            `the table's column ${FLOE_ID} is ${typeToString(field.type)}; it must be fixed[16], binary or string to hold the key hash`,
          );
        }
        floeIdBytes = form === "bytes";
      }
      const column = this.builder.column(field.id);
      if (isSystemColumn(field.name)) {
        this.#system[field.name] = column;
      } else if (typed) {
        this.#recordColumns.push({
          name: field.name,
          column,
          convert: asIs,
          inherited: field.name in Object.prototype,
        });
      } else if (isConvertible(field.type)) {
        // Columns of other types (a table made by another writer) stay null: schema inference
        // refuses every value for them, so no row has one.
        this.#recordColumns.push({
          name: field.name,
          column,
          convert: columnConverter(field.type),
          inherited: field.name in Object.prototype,
        });
      }
    }
    this.#floeIdBytes = floeIdBytes;
  }

  /** Appends message `i` of `rows` with its op type and, when keyed, its key hash. */
  append(rows: RowMessages, i: number, op: OpType, hashes: Uint32Array | undefined): void {
    const timestamp = millisToMicros(rows.timestamps[i]!);
    const s = this.#system;
    s[KAFKA_KEY]?.appendValue(rows.keys[i]);
    s[KAFKA_PARTITION]?.appendValue(rows.partitions[i]);
    s[KAFKA_OFFSET]?.appendValue(rows.offsets[i]);
    s[KAFKA_TIMESTAMP]?.appendValue(timestamp);
    s[FLOE_ID]?.appendValue(
      hashes === undefined
        ? null
        : this.#floeIdBytes
          ? keyHashBytes(hashes, i, this.#floeId)
          : formatKeyHash(hashes, i),
    );
    s[OP_TYPE]?.appendValue(op);
    s[FLOE_TIMESTAMP]?.appendValue(this.#writtenAtMicros);
    // A change event says when the change happened at the source; other messages, when produced.
    const sourceTime = rows.changes?.sourceTimes[i];
    s[CDC_TIMESTAMP]?.appendValue(
      sourceTime === undefined || sourceTime === null ? timestamp : millisToMicros(sourceTime),
    );
    const record = rows.records[i] as Record<string, unknown> | null;
    if (record !== null) {
      for (const { name, column, convert, inherited } of this.#recordColumns) {
        const value = inherited && !Object.hasOwn(record, name) ? undefined : record[name];
        if (value !== undefined && value !== null) column.appendValue(convert(value as JsonValue));
      }
    }
    this.builder.endRow();
  }
}
