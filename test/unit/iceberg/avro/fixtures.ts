// A table, a partition spec covering the partition value types, and files to put in manifests.
import type { DataFile, DeletionVectorFile } from "#src/iceberg/spec/manifest.ts";
import type { PartitionSpec } from "#src/iceberg/spec/partition-spec.ts";
import type { Schema } from "#src/iceberg/spec/schema.ts";
import { decimal } from "#src/iceberg/spec/types.ts";

export const schema: Schema = {
  schemaId: 3,
  fields: [
    { id: 1, name: "id", required: true, type: "long" },
    { id: 2, name: "region", required: false, type: "string" },
    { id: 3, name: "ts", required: false, type: "timestamptz" },
    { id: 4, name: "amount", required: false, type: decimal(10, 2) },
    { id: 5, name: "uid", required: false, type: "uuid" },
    { id: 6, name: "score", required: false, type: "double" },
  ],
  identifierFieldIds: [1],
};

export const spec: PartitionSpec = {
  specId: 2,
  fields: [
    { sourceId: 3, fieldId: 1000, name: "ts_day", transform: { kind: "day" } },
    { sourceId: 2, fieldId: 1001, name: "region", transform: { kind: "identity" } },
    { sourceId: 1, fieldId: 1002, name: "id_bucket", transform: { kind: "bucket", buckets: 16 } },
    { sourceId: 1, fieldId: 1003, name: "id", transform: { kind: "identity" } },
    { sourceId: 4, fieldId: 1004, name: "amount", transform: { kind: "identity" } },
    { sourceId: 5, fieldId: 1005, name: "uid", transform: { kind: "identity" } },
    { sourceId: 6, fieldId: 1006, name: "score", transform: { kind: "identity" } },
  ],
};

/** Beyond 2^53: survives only as a bigint. */
export const big = 2n ** 62n + 12345n;

const le64 = (n: bigint) => {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigInt64(0, n, true);
  return out;
};

export const dataFile = (path: string, recordCount: bigint, region: string | null, day: number): DataFile => ({
  content: 0,
  filePath: path,
  fileFormat: "PARQUET",
  partition: new Map<number, unknown>([
    [1000, day],
    [1001, region],
    [1002, 7],
    [1003, big],
    [1004, -12345n],
    [1005, "0f8fad5b-d9cb-469f-a165-70867728950e"],
    [1006, -0],
  ]),
  recordCount,
  fileSizeInBytes: 4096n + recordCount,
  columnSizes: new Map([
    [1, 800n],
    [2, 2n ** 40n],
  ]),
  valueCounts: new Map([
    [1, recordCount],
    [2, recordCount],
  ]),
  nullValueCounts: new Map([
    [1, 0n],
    [2, 3n],
  ]),
  nanValueCounts: new Map([[6, 0n]]),
  lowerBounds: new Map([[1, le64(-big)]]),
  upperBounds: new Map([
    [1, le64(big)],
    [2, new TextEncoder().encode("zz")],
  ]),
  splitOffsets: [4n, big],
  sortOrderId: 0,
});

export const deletionVector = (path: string, dataPath: string): DeletionVectorFile => ({
  content: 1,
  filePath: path,
  fileFormat: "PUFFIN",
  partition: dataFile(dataPath, 1n, "eu", 19000).partition,
  recordCount: 2n,
  fileSizeInBytes: 120n,
  referencedDataFile: dataPath,
  contentOffset: 4n,
  contentSizeInBytes: 44n,
});
