// Some columns of a data file of a scan, by field id, read as cheaply as the file's size allows:
// a small file in one request, a larger one by ranged reads (its footer, then only the chunks of
// those columns), so that reading the key columns of a table never fetches its other columns'
// bytes from an object store. Values as parquet/key-column-reader.ts gives them.
import type { AsyncBuffer } from "hyparquet";
import type { FileIO } from "../io/file-io.ts";
import { type KeyColumns, readKeyColumns } from "../parquet/key-column-reader.ts";
import type { DataFile } from "../spec/manifest.ts";
import type { Schema } from "../spec/schema.ts";

/** Files up to this size are read whole (one request); larger ones by ranges: footer, then the columns. */
export const WHOLE_FILE_READ_BYTES = 1024 * 1024;

/** Counts the bytes fetched, for a caller that reports what a scan cost. */
export interface BytesRead {
  bytesRead: number;
}

/** The columns of `fieldIds` (primitive fields of `schema`) of `file`, in row order. */
export async function readDataFileColumns(
  io: FileIO,
  file: DataFile,
  schema: Schema,
  fieldIds: readonly number[],
  counter: BytesRead = { bytesRead: 0 },
): Promise<KeyColumns> {
  return readKeyColumns(await fileSource(io, file, counter), schema, fieldIds, file.filePath);
}

async function fileSource(io: FileIO, file: DataFile, counter: BytesRead): Promise<Uint8Array | AsyncBuffer> {
  const path = file.filePath;
  const size = Number(file.fileSizeInBytes);
  if (size <= WHOLE_FILE_READ_BYTES) {
    const bytes = await io.read(path);
    counter.bytesRead += bytes.byteLength;
    return bytes;
  }
  return {
    byteLength: size,
    slice: async (start: number, end = size) => {
      const bytes = await io.readRange(path, start, end - start);
      counter.bytesRead += bytes.byteLength;
      return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
        ? (bytes.buffer as ArrayBuffer)
        : (bytes.slice().buffer as ArrayBuffer);
    },
  };
}
