// The column metrics of one data file, computed from the Arrow buffers of the rows it holds,
// as Iceberg Java reports them for Parquet (ParquetMetrics):
//   - primitive fields at the top level and inside structs get value_counts (rows, nulls and
//     NaNs included), null_value_counts, nan_value_counts (float and double) and, unless the
//     mode is `counts`, lower and upper bounds; a null struct makes its fields null too;
//   - fields inside lists and maps get none of these (repeated values: Java drops them);
//   - metrics mode `none` drops a field altogether.
// Computing them from the buffers rather than the Parquet footer keeps timestamps and decimals
// exact, counts NaNs (the footer does not) and needs no decoding of footer statistics.
// column_sizes come from the footer (data-file-writer.ts).
import type * as arrow from "apache-arrow";
import type { ColumnStats } from "../spec/manifest.ts";
import type { Schema } from "../spec/schema.ts";
import { isPrimitive, type NestedField } from "../spec/types.ts";
import { FIELD_ID_KEY } from "./arrow-schema.ts";
import type { MetricsMode } from "./metrics-config.ts";
import { type Validity, type ValueStats, valueStats } from "./value-stats.ts";

interface Target {
  field: NestedField;
  /** Child indexes from the record batch's struct down to the column. */
  path: number[];
  mode: MetricsMode;
  stats: ValueStats;
}

/** Metrics of the rows [start, end) of `table`, whose fields carry the schema's field ids. */
export function columnStats(
  table: arrow.Table,
  schema: Schema,
  modes: ReadonlyMap<number, MetricsMode>,
  start: number,
  end: number,
): Required<Omit<ColumnStats, "columnSizes">> {
  const targets = collectTargets(schema.fields, table.schema.fields, [], modes);
  let batchStart = 0;
  for (const batch of table.batches) {
    const from = Math.max(start, batchStart) - batchStart;
    const to = Math.min(end, batchStart + batch.numRows) - batchStart;
    if (from < to) {
      for (const target of targets) addRows(target, batch.data, from, to);
    }
    batchStart += batch.numRows;
  }

  const stats = {
    valueCounts: new Map<number, bigint>(),
    nullValueCounts: new Map<number, bigint>(),
    nanValueCounts: new Map<number, bigint>(),
    lowerBounds: new Map<number, Uint8Array>(),
    upperBounds: new Map<number, Uint8Array>(),
  };
  for (const { field, mode, stats: values } of targets) {
    stats.valueCounts.set(field.id, BigInt(end - start));
    stats.nullValueCounts.set(field.id, BigInt(values.nullCount));
    const nans = values.nanCount();
    if (nans !== undefined) stats.nanValueCounts.set(field.id, BigInt(nans));
    if (mode.kind === "counts") continue;
    const lower = values.lowerBound(mode);
    const upper = values.upperBound(mode);
    if (lower !== undefined) stats.lowerBounds.set(field.id, lower);
    if (upper !== undefined) stats.upperBounds.set(field.id, upper);
  }
  return stats;
}

function collectTargets(
  fields: readonly NestedField[],
  arrowFields: readonly arrow.Field[],
  parent: number[],
  modes: ReadonlyMap<number, MetricsMode>,
): Target[] {
  return fields.flatMap((field) => {
    const index = arrowFields.findIndex((f) => f.metadata.get(FIELD_ID_KEY) === String(field.id));
    if (index < 0) throw new Error(`the Arrow schema has no field with id ${field.id} (${field.name})`);
    const path = [...parent, index];
    if (isPrimitive(field.type)) {
      const mode = modes.get(field.id) ?? { kind: "none" };
      return mode.kind === "none" ? [] : [{ field, path, mode, stats: valueStats(field.type) }];
    }
    if (field.type.kind !== "struct") return [];
    return collectTargets(field.type.fields, arrowFields[index]!.type.children, path, modes);
  });
}

function addRows(target: Target, batchData: arrow.Data, from: number, to: number): void {
  let data = batchData;
  let validity: Validity | undefined;
  for (const index of target.path) {
    data = data.children[index]!;
    validity = combine(validity, data, from, to);
  }
  target.stats.add(data, from, to, validity);
}

/** The validity of `data` over [from, to), ANDed with its ancestors' (a null struct nulls its fields). */
function combine(outer: Validity | undefined, data: arrow.Data, from: number, to: number): Validity | undefined {
  const own = data.nullCount > 0 ? { bits: data.nullBitmap!, offset: data.offset } : undefined;
  if (outer === undefined || own === undefined) return own ?? outer;
  const bits = new Uint8Array(((to - from + 7) >> 3) + 1);
  for (let i = from; i < to; i++) {
    const a = outer.offset + i;
    const b = own.offset + i;
    if ((outer.bits[a >> 3]! >> (a & 7)) & (own.bits[b >> 3]! >> (b & 7)) & 1)
      bits[(i - from) >> 3]! |= 1 << ((i - from) & 7);
  }
  return { bits, offset: -from };
}
