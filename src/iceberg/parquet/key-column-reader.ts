// Reads the key columns of a Parquet data file, in row order: what the upsert key index is
// rebuilt from. Columns are resolved by field id through the Parquet schema (spec Appendix A),
// so files written before a rename, and files written by other engines (Iceberg Java/Spark,
// PyIceberg), read alike. A key field may be a top-level primitive or a primitive inside
// structs; a field the file does not have (added later to the table) reads as null. A file
// without any field ids (imported, read through a name mapping) is refused.
//
// Values come out in the JS form of single-value.ts, whatever the physical type: bigint for
// long, time and timestamps (an int column promoted to long too), number for int, date, float
// and double, string for string and uuid (text form), the unscaled bigint for decimal (exact:
// the footer's decimal annotation is ignored, the raw integers or bytes are read), Uint8Array
// for fixed and binary, boolean; null for null.

import { brotliDecompressSync, gunzipSync, zstdDecompressSync } from "node:zlib";
import { type AsyncBuffer, type Compressors, parquetMetadata, parquetMetadataAsync, parquetRead } from "hyparquet";
import { compressors as jsCompressors } from "hyparquet-compressors";
import { decodingFileAsync, IcebergError } from "../errors.ts";
import type { Schema } from "../spec/schema.ts";
import { asStruct } from "../spec/schema.ts";
import { bytesToUuid, decodeDecimal, type SingleValue } from "../spec/single-value.ts";
import {
  childFields,
  type IcebergType,
  isInt64,
  isPrimitive,
  type NestedField,
  type PrimitiveType,
} from "../spec/types.ts";
import { findFieldPath } from "./parquet-field-ids.ts";

export type KeyValue = SingleValue | null;

export interface KeyColumns {
  rowCount: number;
  /** One array per requested field id, `rowCount` values each. */
  columns: Map<number, KeyValue[]>;
}

const utf8 = new TextDecoder();

/**
 * Node's zlib for zstd (Iceberg's default codec), gzip and brotli: the pure-JS zstd decoder
 * allocates a whole window per page, which made a Spark-written file of many row groups read
 * 20x slower. LZ4 from hyparquet-compressors; snappy is hyparquet's own.
 */
export const compressors: Compressors = {
  ...jsCompressors,
  ZSTD: (input) => zstdDecompressSync(input),
  GZIP: (input) => gunzipSync(input),
  BROTLI: (input) => brotliDecompressSync(input),
};

/**
 * Reads the columns of `fieldIds` (primitive fields of `schema`) from a Parquet file: its bytes,
 * or ranged reads of it (an AsyncBuffer: the footer, then only the key columns' chunks, for a
 * large file in an object store). `location` names the file in the error of bytes that are not
 * such a file.
 */
export function readKeyColumns(
  file: Uint8Array | AsyncBuffer,
  schema: Schema,
  fieldIds: readonly number[],
  location = "Parquet data file",
): Promise<KeyColumns> {
  return decodingFileAsync(location, () => read(file, schema, fieldIds));
}

async function read(file: Uint8Array | AsyncBuffer, schema: Schema, fieldIds: readonly number[]): Promise<KeyColumns> {
  let buffer: ArrayBuffer | AsyncBuffer;
  if (file instanceof Uint8Array) {
    const whole = file.byteOffset === 0 && file.byteLength === file.buffer.byteLength;
    buffer = (whole ? file.buffer : file.slice().buffer) as ArrayBuffer;
  } else {
    buffer = file;
  }
  // A footer is rarely over 64 KiB; a larger one costs a second read of the rest.
  const footer =
    buffer instanceof ArrayBuffer
      ? parquetMetadata(buffer)
      : await parquetMetadataAsync(buffer, { initialFetchSize: 64 * 1024 });
  if (!footer.schema.some((element) => element.field_id !== undefined)) {
    // a file imported without ids would need the table's name mapping, which floe does not apply
    throw new IcebergError("unsupported", "the Parquet file has no field ids (a name mapping would be needed)");
  }
  const rowCount = Number(footer.num_rows);
  // A copy of the footer without type annotations on the key leaves: hyparquet then hands over
  // the physical values (decimals would otherwise become floating point numbers).
  const raw = structuredClone(footer);
  const columns = new Map<number, KeyValue[]>();
  const reads = new Map<string, { id: number; path: string[]; type: PrimitiveType }[]>();

  for (const id of fieldIds) {
    const field = findField(asStruct(schema), id);
    if (field === undefined || !isPrimitive(field.type)) {
      throw new IcebergError("validation", `field ${id} is not a primitive field`);
    }
    const nodes = findFieldPath(raw, id);
    if (nodes === undefined) {
      columns.set(id, new Array<KeyValue>(rowCount).fill(null));
      continue;
    }
    // lists and maps hold many values per row: no key lives inside one
    if (nodes.some((n) => n.element.repetition_type === "REPEATED")) {
      throw new IcebergError("validation", `field ${id} is inside a list or map`);
    }
    const node = nodes.at(-1)!;
    delete node.element.converted_type;
    delete node.element.logical_type;
    const [top, ...path] = node.path;
    const list = reads.get(top!) ?? [];
    list.push({ id, path, type: field.type });
    reads.set(top!, list);
    columns.set(id, new Array<KeyValue>(rowCount));
  }

  for (const [top, keys] of reads) {
    await parquetRead({
      file: buffer,
      metadata: raw,
      columns: [top],
      compressors,
      utf8: false,
      onChunk({ columnData, rowStart, rowEnd }) {
        for (const { id, path, type } of keys) {
          const out = columns.get(id)!;
          for (let row = rowStart; row < rowEnd; row++) {
            out[row] = toKeyValue(type, dig(columnData[row - rowStart], path));
          }
        }
      },
    });
  }
  return { rowCount, columns };
}

/** A field anywhere in the type, list elements and map keys and values included. */
function findField(type: IcebergType, id: number): NestedField | undefined {
  for (const child of childFields(type)) {
    const found = child.id === id ? child : findField(child.type, id);
    if (found) return found;
  }
  return undefined;
}

/** The value at `path` inside a struct value (the row's value itself for a top-level column). */
function dig(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const name of path) {
    if (current == null) return null;
    current = (current as Record<string, unknown>)[name];
  }
  return current;
}

function toKeyValue(type: PrimitiveType, value: unknown): KeyValue {
  if (value == null) return null;
  if (typeof type === "object") {
    if (type.kind === "fixed") return value as Uint8Array;
    return value instanceof Uint8Array ? decodeDecimal(value) : BigInt(value as number | bigint);
  }
  if (isInt64(type)) return typeof value === "bigint" ? value : BigInt(value as number);
  switch (type) {
    case "string":
      return utf8.decode(value as Uint8Array);
    case "uuid":
      return bytesToUuid(value as Uint8Array);
    default:
      return value as boolean | number | Uint8Array;
  }
}
