import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { decodeDeletionVector, encodeDeletionVector } from "#src/iceberg/puffin/deletion-vector.ts";
import {
  listDeletionVectors,
  readDeletionVector,
  writeDeletionVectorFile,
} from "#src/iceberg/puffin/deletion-vector-file.ts";
import { footerLength, readFooter, writePuffin } from "#src/iceberg/puffin/puffin.ts";
import { RoaringPositionBitmap } from "#src/iceberg/puffin/roaring64.ts";

const version = (
  JSON.parse(readFileSync(new URL("../../../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

function ascii(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("latin1");
}

describe("Puffin file of deletion vectors", () => {
  const dvs = [
    { referencedDataFile: "s3://bucket/t/data/00000-a.parquet", positions: RoaringPositionBitmap.from([0, 5]) },
    {
      referencedDataFile: "s3://bucket/t/data/00001-b é.parquet",
      positions: RoaringPositionBitmap.from(Array.from({ length: 5000 }, (_, i) => i * 2)),
    },
    { referencedDataFile: "/warehouse/t/data/00002-c.parquet", positions: RoaringPositionBitmap.from([2 ** 33]) },
  ];

  test("layout: magic, blobs back to back, footer, and the manifest fields of each DV", () => {
    const { bytes, deletionVectors } = writeDeletionVectorFile(dvs);
    assert.equal(ascii(bytes.subarray(0, 4)), "PFA1");
    assert.equal(ascii(bytes.subarray(bytes.length - 4)), "PFA1");
    assert.deepEqual([...bytes.subarray(bytes.length - 8, bytes.length - 4)], [0, 0, 0, 0]);
    assert.equal(deletionVectors.length, 3);
    assert.deepEqual(deletionVectors[0], {
      referencedDataFile: "s3://bucket/t/data/00000-a.parquet",
      offset: 4,
      length: 44,
      cardinality: 2,
    });
    assert.equal(deletionVectors[1]!.offset, 48);
    assert.equal(deletionVectors[2]!.offset, deletionVectors[1]!.offset + deletionVectors[1]!.length);
    // Each blob is the DV blob byte for byte, and the golden one for {0, 5}.
    for (const [i, dv] of deletionVectors.entries()) {
      const blob = bytes.subarray(dv.offset, dv.offset + dv.length);
      assert.deepEqual(blob, encodeDeletionVector(dvs[i]!.positions));
      assert.equal(new DataView(blob.buffer, blob.byteOffset).getUint32(0) + 8, dv.length, "length = L + 8");
    }
    // The footer magic follows the last blob.
    const footerAt = deletionVectors[2]!.offset + deletionVectors[2]!.length;
    assert.equal(ascii(bytes.subarray(footerAt, footerAt + 4)), "PFA1");
    assert.equal(footerLength(bytes), bytes.length - footerAt);
  });

  test("footer JSON: the fields readers require, in Java's order", () => {
    const { bytes } = writeDeletionVectorFile(dvs.slice(0, 1));
    const payloadSize = new DataView(bytes.buffer).getInt32(bytes.length - 12, true);
    const json = Buffer.from(bytes.subarray(bytes.length - 12 - payloadSize, bytes.length - 12)).toString("utf8");
    assert.equal(
      json,
      `{"blobs":[{"type":"deletion-vector-v1","fields":[2147483645],"snapshot-id":-1,"sequence-number":-1,` +
        `"offset":4,"length":44,"properties":{"referenced-data-file":"s3://bucket/t/data/00000-a.parquet",` +
        `"cardinality":"2"}}],"properties":{"created-by":"floe ${version}"}}`,
    );
  });

  test("round trip: footer, listing, and each DV read back by offset and length", () => {
    const { bytes, deletionVectors } = writeDeletionVectorFile(dvs, { createdBy: "floe test" });
    const footer = readFooter(bytes);
    assert.deepEqual(footer.properties, { "created-by": "floe test" });
    assert.equal(footer.blobs[1]!.properties["referenced-data-file"], "s3://bucket/t/data/00001-b é.parquet");
    assert.equal(footer.blobs[1]!.snapshotId, -1n);
    assert.deepEqual(footer.blobs[1]!.fields, [2147483645]);
    assert.equal(footer.blobs[1]!.compressionCodec, undefined);
    assert.deepEqual(listDeletionVectors(bytes), deletionVectors);
    for (const [i, dv] of deletionVectors.entries()) {
      const positions = readDeletionVector(bytes, dv);
      assert.deepEqual([...positions.toArray()], [...dvs[i]!.positions.toArray()]);
    }
    // Just the blob's byte range, as the IO layer fetches it from the manifest entry.
    const dv = deletionVectors[2]!;
    assert.deepEqual([...decodeDeletionVector(bytes.slice(dv.offset, dv.offset + dv.length))], [2n ** 33n]);
    assert.throws(() => readDeletionVector(bytes, { ...dv, cardinality: 2 }), /holds 1 positions, expected 2/);
  });

  test("merging an old DV into a new one", () => {
    const { bytes, deletionVectors } = writeDeletionVectorFile(dvs.slice(0, 1));
    const merged = RoaringPositionBitmap.from([7, 5]).union(readDeletionVector(bytes, deletionVectors[0]!));
    const next = writeDeletionVectorFile([{ referencedDataFile: dvs[0]!.referencedDataFile, positions: merged }]);
    assert.equal(next.deletionVectors[0]!.cardinality, 3);
    assert.deepEqual([...readDeletionVector(next.bytes, next.deletionVectors[0]!)], [0n, 5n, 7n]);
  });

  test("refuses two DVs for one data file and empty DVs", () => {
    assert.throws(() => writeDeletionVectorFile([dvs[0]!, dvs[0]!]), /at most one per data file/);
    assert.throws(
      () => writeDeletionVectorFile([{ referencedDataFile: "x", positions: new RoaringPositionBitmap() }]),
      /at least one position/,
    );
  });

  test("footer read from a tail of the file", () => {
    const { bytes } = writeDeletionVectorFile(dvs);
    const length = footerLength(bytes.subarray(bytes.length - 12));
    const tail = bytes.slice(bytes.length - length);
    assert.deepEqual(readFooter(tail, bytes.length), readFooter(bytes));
    assert.throws(() => readFooter(tail.subarray(1), bytes.length), /only/);
  });

  test("rejects a bad magic, a compressed footer, unknown flags and blobs outside the file", () => {
    const { bytes } = writeDeletionVectorFile(dvs.slice(0, 1));
    const noMagic = bytes.slice();
    noMagic[noMagic.length - 1] = 0;
    assert.throws(() => readFooter(noMagic), /not a Puffin file/);
    const compressed = bytes.slice();
    compressed[compressed.length - 8] = 1;
    assert.throws(() => readFooter(compressed), /LZ4-compressed/);
    const flagged = bytes.slice();
    flagged[flagged.length - 6] = 4;
    assert.throws(() => readFooter(flagged), /unknown flags/);
    const outside = writePuffin([{ type: "x", fields: [], data: new Uint8Array(3) }]);
    const json = Buffer.from(outside.bytes).toString("latin1").replace('"offset":4', '"offset":9');
    assert.throws(() => readFooter(Buffer.from(json, "latin1")), /outside the blob area/);
  });

  test("snapshot ids past 2^53 survive the footer", () => {
    const { bytes } = writePuffin([
      {
        type: "apache-datasketches-theta-v1",
        fields: [1],
        snapshotId: 9007199254740993n,
        sequenceNumber: 12n,
        data: new Uint8Array(4),
      },
    ]);
    const blob = readFooter(bytes).blobs[0]!;
    assert.equal(blob.snapshotId, 9007199254740993n);
    assert.equal(blob.sequenceNumber, 12n);
    assert.deepEqual(blob.properties, {});
    assert.throws(() => listDeletionVectors(bytes), /not a deletion vector/);
  });

  test("an empty Puffin file is magic and footer", () => {
    const { bytes } = writePuffin([]);
    assert.equal(ascii(bytes), 'PFA1PFA1{"blobs":[]}\x0c\x00\x00\x00\x00\x00\x00\x00PFA1');
    assert.deepEqual(readFooter(bytes), { blobs: [], properties: {} });
  });
});
