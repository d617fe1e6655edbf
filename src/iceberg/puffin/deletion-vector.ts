// The `deletion-vector-v1` blob (Puffin spec):
//   u32 BE  L = 4 + length of the bitmap   (the magic and the bitmap)
//   D1 D3 39 64                            magic
//   bitmap                                 positions in the 64-bit portable Roaring layout (roaring64.ts)
//   u32 BE  CRC-32 of the L bytes magic + bitmap
// Length and CRC are big-endian for compatibility with Delta's deletion vectors; the bitmap is
// little-endian. The whole blob, L + 8 bytes, is what a manifest's content_size_in_bytes counts.
import { crc32 } from "node:zlib";
import { IcebergError } from "../errors.ts";
import { RoaringPositionBitmap } from "./roaring64.ts";

export const DELETION_VECTOR_V1 = "deletion-vector-v1";
export const DELETION_VECTOR_MAGIC = Uint8Array.of(0xd1, 0xd3, 0x39, 0x64);

/**
 * Serializes a non-empty set of positions as a deletion-vector-v1 blob. An empty DV deletes nothing;
 * writing one would only add a manifest entry, so it is refused.
 */
export function encodeDeletionVector(positions: RoaringPositionBitmap, runOptimize = true): Uint8Array {
  if (positions.isEmpty()) throw new RangeError("a deletion vector needs at least one position");
  const layout = positions.portableLayout(runOptimize);
  const length = 4 + layout.size;
  if (length + 8 > 0x7fffffff) {
    throw new IcebergError("unsupported", `deletion vector of ${length + 8} bytes is over 2 GiB`);
  }
  const blob = new Uint8Array(length + 8);
  const view = new DataView(blob.buffer);
  view.setUint32(0, length);
  blob.set(DELETION_VECTOR_MAGIC, 4);
  positions.writePortable(layout, blob, 8);
  view.setUint32(4 + length, crc32(blob.subarray(4, 4 + length)));
  return blob;
}

/** Parses a deletion-vector-v1 blob (exactly its bytes), checking length, magic and CRC. */
export function decodeDeletionVector(blob: Uint8Array): RoaringPositionBitmap {
  if (blob.length < 12)
    throw new IcebergError("corrupt", `deletion vector blob of ${blob.length} bytes is shorter than 12`);
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const length = view.getUint32(0);
  if (length + 8 !== blob.length) {
    throw new IcebergError(
      "corrupt",
      `deletion vector length field ${length} does not match the blob: ${blob.length} bytes, expected ${length + 8}`,
    );
  }
  for (let k = 0; k < 4; k++) {
    if (blob[4 + k] !== DELETION_VECTOR_MAGIC[k]) {
      throw new IcebergError("corrupt", `deletion vector magic is ${hex(blob.subarray(4, 8))}, expected d1d33964`);
    }
  }
  const expected = view.getUint32(4 + length);
  const actual = crc32(blob.subarray(4, 4 + length));
  if (actual !== expected) {
    throw new IcebergError(
      "corrupt",
      `deletion vector CRC-32 is ${hex32(actual)}, the blob says ${hex32(expected)}: corrupt`,
    );
  }
  return RoaringPositionBitmap.deserialize(blob, 8, 4 + length);
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}

function hex32(n: number): string {
  return n.toString(16).padStart(8, "0");
}
