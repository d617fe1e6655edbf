// The positions a deletion vector deletes, read from its Puffin file by the manifest entry's
// content_offset and content_size_in_bytes alone (spec "Deletion Vectors": readers need not
// parse the Puffin footer), and checked against the entry's record_count.
import { decodingFile } from "../errors.ts";
import type { FileIO } from "../io/file-io.ts";
import { readDeletionVector } from "../puffin/deletion-vector-file.ts";
import type { RoaringPositionBitmap } from "../puffin/roaring64.ts";
import type { DeletionVectorFile } from "../spec/manifest.ts";

export async function readDeletedPositions(io: FileIO, dv: DeletionVectorFile): Promise<RoaringPositionBitmap> {
  const blob = await io.readRange(dv.filePath, Number(dv.contentOffset), Number(dv.contentSizeInBytes));
  return decodingFile(`${dv.filePath} (deletion vector of ${dv.referencedDataFile})`, () =>
    readDeletionVector(blob, { offset: 0, length: blob.length, cardinality: Number(dv.recordCount) }),
  );
}
