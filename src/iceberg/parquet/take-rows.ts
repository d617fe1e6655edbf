// Rows of an Arrow table picked by index, in the order given, as a new table of one record batch
// (Arrow's "take" kernel, which apache-arrow's JS library lacks). The writer uses it to gather the
// rows of one partition tuple into one file: a data file holds rows of one partition only (spec
// "Partitioning"). Buffers are copied per layout (validity bitmap, fixed-width values with their
// stride, offsets and bytes, struct children, list and map offsets into their child), so every
// type the column builders make comes through unchanged.
// A sliced Data (apache-arrow's Data.slice) has its offsets and fixed-width values cut to the
// slice already; only its validity bitmap and a boolean's value bits are shared and read at
// `offset`.
import * as arrow from "apache-arrow";

export function takeRows(table: arrow.Table, indices: Uint32Array): arrow.Table {
  const batches = table.batches.map((batch) => {
    const data = takeData(batch.data, indices) as arrow.Data<arrow.Struct>;
    return new arrow.RecordBatch(table.schema, data);
  });
  if (batches.length !== 1) throw new RangeError(`takeRows needs a table of one record batch, got ${batches.length}`);
  return new arrow.Table(batches);
}

function isValid(data: arrow.Data, i: number): boolean {
  const bitmap = data.nullBitmap;
  if (data.nullCount === 0 || !bitmap || bitmap.length === 0) return true;
  const bit = data.offset + i;
  return ((bitmap[bit >> 3]! >> (bit & 7)) & 1) === 1;
}

/** The validity bitmap of the picked rows, or none when every one is valid. */
function takeValidity(data: arrow.Data, indices: ArrayLike<number>): { nullBitmap?: Uint8Array; nullCount: number } {
  if (data.nullCount === 0 || !data.nullBitmap || data.nullBitmap.length === 0) return { nullCount: 0 };
  const n = indices.length;
  const bitmap = new Uint8Array((n + 7) >> 3);
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    if (isValid(data, indices[i]!)) bitmap[i >> 3]! |= 1 << (i & 7);
    else nulls++;
  }
  return nulls === 0 ? { nullCount: 0 } : { nullBitmap: bitmap, nullCount: nulls };
}

function takeData(data: arrow.Data, indices: ArrayLike<number>): arrow.Data {
  const type = data.type;
  const length = indices.length;
  const validity = takeValidity(data, indices);
  const offset = data.offset;
  if (arrow.DataType.isStruct(type)) {
    // A struct's children are sliced with it: child row i is the struct's row i.
    const children = data.children.map((child) => takeData(child, indices));
    return arrow.makeData({ type, length, ...validity, children });
  }
  if (arrow.DataType.isList(type) || arrow.DataType.isMap(type)) {
    const offsets = data.valueOffsets as Int32Array;
    const newOffsets = new Int32Array(length + 1);
    for (let i = 0; i < length; i++) {
      const row = indices[i]!;
      newOffsets[i + 1] = newOffsets[i]! + offsets[row + 1]! - offsets[row]!;
    }
    const childIndices = new Uint32Array(newOffsets[length]!);
    for (let i = 0, k = 0; i < length; i++) {
      const row = indices[i]!;
      for (let j = offsets[row]!; j < offsets[row + 1]!; j++) childIndices[k++] = j;
    }
    const child = takeData(data.children[0]!, childIndices);
    return arrow.makeData({ type, length, ...validity, valueOffsets: newOffsets, child } as never);
  }
  if (arrow.DataType.isUtf8(type) || arrow.DataType.isBinary(type)) {
    const offsets = data.valueOffsets as Int32Array;
    const bytes = data.values as Uint8Array;
    const newOffsets = new Int32Array(length + 1);
    for (let i = 0; i < length; i++) {
      const row = indices[i]!;
      newOffsets[i + 1] = newOffsets[i]! + offsets[row + 1]! - offsets[row]!;
    }
    const out = new Uint8Array(newOffsets[length]!);
    for (let i = 0; i < length; i++) {
      const row = indices[i]!;
      out.set(bytes.subarray(offsets[row]!, offsets[row + 1]!), newOffsets[i]!);
    }
    return arrow.makeData({ type, length, ...validity, valueOffsets: newOffsets, data: out } as never);
  }
  if (arrow.DataType.isBool(type)) {
    const bits = data.values as Uint8Array;
    const out = new Uint8Array((length + 7) >> 3);
    for (let i = 0; i < length; i++) {
      const bit = offset + indices[i]!;
      if ((bits[bit >> 3]! >> (bit & 7)) & 1) out[i >> 3]! |= 1 << (i & 7);
    }
    return arrow.makeData({ type, length, ...validity, data: out });
  }
  // Fixed width: ints, floats, dates, times, timestamps, decimals, fixed binary; `stride`
  // elements of the values array per row. A null row may lie past the filled values (a builder
  // grows its values only for values): its slot stays zero.
  const values = data.values as Int32Array;
  const stride = data.stride;
  const Values = values.constructor as new (n: number) => Int32Array;
  const out = new Values(length * stride);
  for (let i = 0; i < length; i++) {
    const from = indices[i]! * stride;
    if (from >= values.length) continue;
    if (stride === 1) out[i] = values[from]!;
    else out.set(values.subarray(from, from + stride), i * stride);
  }
  return arrow.makeData({ type, length, ...validity, data: out } as never);
}
