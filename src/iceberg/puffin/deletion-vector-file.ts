// A Puffin file of deletion vectors, one deletion-vector-v1 blob per data file (Puffin spec and the
// table spec's "Deletion Vectors"): fields [2147483645] (the _pos metadata column), snapshot-id and
// sequence-number -1 (inherited at commit), properties referenced-data-file (the data file's location,
// byte for byte) and cardinality, no compression-codec. The file holds nothing but DVs: DuckDB rejects
// other blobs. Each blob's offset and length become the manifest entry's content_offset and
// content_size_in_bytes; a DV is read back from those alone (readDeletionVector), which is how the
// writer merges the previous DV of a data file into its new one.
import pkg from "../../../package.json" with { type: "json" };
import { IcebergError } from "../errors.ts";
import { DELETION_VECTOR_V1, decodeDeletionVector, encodeDeletionVector } from "./deletion-vector.ts";
import { blobBytes, readFooter, writePuffin } from "./puffin.ts";
import type { RoaringPositionBitmap } from "./roaring64.ts";

/** Field id of the reserved _pos (row position) metadata column: Integer.MAX_VALUE - 2. */
export const ROW_POSITION_FIELD_ID = 2147483645;
export const REFERENCED_DATA_FILE = "referenced-data-file";
export const CARDINALITY = "cardinality";

export interface DeletionVectorInput {
  /** The data file's location exactly as in table metadata. */
  referencedDataFile: string;
  /** Deleted positions, previous DV of the file included; not empty. */
  positions: RoaringPositionBitmap;
}

/** Where a DV lies in its Puffin file: the manifest entry's fields. Byte counts are safe integers. */
export interface DeletionVectorBlob {
  referencedDataFile: string;
  /** content_offset */
  offset: number;
  /** content_size_in_bytes: the whole blob, L + 8 */
  length: number;
  /** record_count: the number of deleted positions */
  cardinality: number;
}

/** Builds one Puffin file holding a DV for each input; the returned entries follow the input order. */
export function writeDeletionVectorFile(
  dvs: Iterable<DeletionVectorInput>,
  options: { createdBy?: string; runOptimize?: boolean } = {},
): { bytes: Uint8Array; deletionVectors: DeletionVectorBlob[] } {
  const seen = new Set<string>();
  const cardinalities: number[] = [];
  const blobs = [];
  for (const dv of dvs) {
    if (seen.has(dv.referencedDataFile)) {
      throw new RangeError(`two deletion vectors for ${dv.referencedDataFile}: at most one per data file`);
    }
    seen.add(dv.referencedDataFile);
    const cardinality = dv.positions.cardinality;
    cardinalities.push(cardinality);
    blobs.push({
      type: DELETION_VECTOR_V1,
      fields: [ROW_POSITION_FIELD_ID],
      data: encodeDeletionVector(dv.positions, options.runOptimize),
      properties: { [REFERENCED_DATA_FILE]: dv.referencedDataFile, [CARDINALITY]: String(cardinality) },
    });
  }
  const { bytes, blobs: written } = writePuffin(blobs, { "created-by": options.createdBy ?? `floe ${pkg.version}` });
  return {
    bytes,
    deletionVectors: written.map((b, i) => ({
      referencedDataFile: b.properties[REFERENCED_DATA_FILE]!,
      offset: b.offset,
      length: b.length,
      cardinality: cardinalities[i]!,
    })),
  };
}

/** Lists the DVs of a whole Puffin file from its footer. */
export function listDeletionVectors(file: Uint8Array): DeletionVectorBlob[] {
  return readFooter(file).blobs.map((b, i) => {
    if (b.type !== DELETION_VECTOR_V1)
      throw new IcebergError("corrupt", `Puffin blob ${i} is a ${b.type}, not a deletion vector`);
    if (b.compressionCodec !== undefined) throw new IcebergError("corrupt", `deletion vector blob ${i} is compressed`);
    const referencedDataFile = b.properties[REFERENCED_DATA_FILE];
    const cardinality = Number(b.properties[CARDINALITY]);
    if (referencedDataFile === undefined)
      throw new IcebergError("corrupt", `deletion vector blob ${i} has no ${REFERENCED_DATA_FILE}`);
    if (!Number.isSafeInteger(cardinality) || cardinality < 1) {
      throw new IcebergError("corrupt", `deletion vector blob ${i} has no valid ${CARDINALITY}`);
    }
    return { referencedDataFile, offset: b.offset, length: b.length, cardinality };
  });
}

/**
 * Reads the DV at `offset`/`length` (content_offset/content_size_in_bytes) of a whole Puffin file.
 * With `cardinality` (the entry's record_count), checks that the DV holds that many positions. When
 * the IO layer fetched just the blob's byte range, decodeDeletionVector reads it directly.
 */
export function readDeletionVector(
  file: Uint8Array,
  blob: { offset: number; length: number; cardinality?: number },
): RoaringPositionBitmap {
  const positions = decodeDeletionVector(blobBytes(file, blob));
  if (blob.cardinality !== undefined && positions.cardinality !== blob.cardinality) {
    throw new IcebergError(
      "corrupt",
      `deletion vector holds ${positions.cardinality} positions, expected ${blob.cardinality}`,
    );
  }
  return positions;
}
