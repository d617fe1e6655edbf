// The positions a deletion vector deletes, read from its Puffin file by the manifest entry's
// content_offset and content_size_in_bytes alone (spec "Deletion Vectors": readers need not
// parse the Puffin footer), and checked against the entry's record_count.
//
// And the deleted positions of one data file as a snapshot holds them (deletedPositionsOf): its
// DV, else the rows of its position delete files (spec "Position Delete Files": Parquet rows of
// file_path and pos, reserved field ids 2147483546 and 2147483545) that name it. The Parquet
// reader loads with the first position delete file read: floe writes none, so most commits that
// retire rows never need it.
import { decodingFile, decodingFileAsync, IcebergError } from "../errors.ts";
import type { FileIO } from "../io/file-io.ts";
import { readDeletionVector } from "../puffin/deletion-vector-file.ts";
import { RoaringPositionBitmap } from "../puffin/roaring64.ts";
import type { DeletionVectorFile, OtherDeleteFile } from "../spec/manifest.ts";
import type { FileSnapshot } from "./plan-files.ts";

export async function readDeletedPositions(io: FileIO, dv: DeletionVectorFile): Promise<RoaringPositionBitmap> {
  const blob = await io.readRange(dv.filePath, Number(dv.contentOffset), Number(dv.contentSizeInBytes));
  return decodingFile(`${dv.filePath} (deletion vector of ${dv.referencedDataFile})`, () =>
    readDeletionVector(blob, { offset: 0, length: blob.length, cardinality: Number(dv.recordCount) }),
  );
}

/** A position delete file's rows, by the data file path they name. */
export async function readPositionDeleteFile(io: FileIO, file: OtherDeleteFile): Promise<Map<string, bigint[]>> {
  if (file.fileFormat !== "PARQUET") {
    throw new IcebergError("unsupported", `${file.filePath}: position delete files in ${file.fileFormat} are not read`);
  }
  const [bytes, { parquetReadObjects }, { compressors }] = await Promise.all([
    io.read(file.filePath),
    import("hyparquet"),
    import("../parquet/key-column-reader.ts"),
  ]);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = await decodingFileAsync(`${file.filePath} (position delete file)`, () =>
    parquetReadObjects({ file: buffer, columns: ["file_path", "pos"], compressors }),
  );
  const byPath = new Map<string, bigint[]>();
  for (const { file_path: path, pos } of rows as { file_path: unknown; pos: unknown }[]) {
    if (typeof path !== "string" || (typeof pos !== "bigint" && typeof pos !== "number")) {
      throw new IcebergError("corrupt", `${file.filePath}: a position delete row without file_path or pos`);
    }
    const positions = byPath.get(path) ?? [];
    positions.push(BigInt(pos));
    byPath.set(path, positions);
  }
  return byPath;
}

/** Position delete files read for a plan: one file may name many data files. */
const readFiles = new WeakMap<FileSnapshot, Map<string, Promise<Map<string, bigint[]>>>>();

/** The positions of `dataFilePath` deleted in `plan`'s snapshot; undefined when none. */
export async function deletedPositionsOf(
  io: FileIO,
  plan: FileSnapshot,
  dataFilePath: string,
): Promise<RoaringPositionBitmap | undefined> {
  const dv = plan.deletionVectors.get(dataFilePath);
  if (dv) return readDeletedPositions(io, dv.entry.file);
  const files = plan.positionDeletes.get(dataFilePath);
  if (!files || files.length === 0) return undefined;
  let cache = readFiles.get(plan);
  if (!cache) {
    cache = new Map();
    readFiles.set(plan, cache);
  }
  const positions = new RoaringPositionBitmap();
  for (const { entry } of files) {
    let read = cache.get(entry.file.filePath);
    if (!read) {
      read = readPositionDeleteFile(io, entry.file);
      cache.set(entry.file.filePath, read);
    }
    const ofFile = (await read).get(dataFilePath);
    if (ofFile) positions.addAll(BigInt64Array.from(ofFile));
  }
  return positions;
}
