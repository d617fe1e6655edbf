import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { errorKind } from "#src/iceberg/errors.ts";
import { decodeDeletionVector, encodeDeletionVector } from "#src/iceberg/puffin/deletion-vector.ts";
import { RoaringPositionBitmap } from "#src/iceberg/puffin/roaring64.ts";

// A golden deletion-vector-v1 blob: positions {0, 5}, as Iceberg's Java writer serializes them
// (length, magic, the portable 64-bit roaring bitmap, CRC-32).
const GOLDEN =
  "00 00 00 24 d1 d3 39 64 01 00 00 00 00 00 00 00 00 00 00 00 3a 30 00 00 01 00 00 00 00 00 01 00 10 00 00 00 00 00 05 00 86 d2 57 4a";

function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join(" ");
}

describe("deletion-vector-v1 blob", () => {
  test("golden vector: positions {0, 5} are exactly those 44 bytes", () => {
    const blob = encodeDeletionVector(RoaringPositionBitmap.from([5, 0]));
    assert.equal(blob.length, 44);
    assert.equal(hex(blob), GOLDEN);
    const positions = decodeDeletionVector(Uint8Array.from(GOLDEN.split(" ").map((h) => Number.parseInt(h, 16))));
    assert.deepEqual([...positions], [0n, 5n]);
  });

  test("round trips: one position, a bitmap container, several keys, dense runs", () => {
    const cases: (number[] | bigint[])[] = [
      [123456],
      Array.from({ length: 6000 }, (_, i) => i * 7),
      [1n, 2n ** 32n + 1n, 2n ** 35n, 2n ** 40n + 65536n],
      Array.from({ length: 200000 }, (_, i) => 50 + i),
    ];
    for (const positions of cases) {
      const bitmap = new RoaringPositionBitmap();
      if (typeof positions[0] === "bigint") bitmap.addAll(BigInt64Array.from(positions as bigint[]));
      else bitmap.addAll(positions as number[]);
      const blob = encodeDeletionVector(bitmap);
      const view = new DataView(blob.buffer);
      assert.equal(view.getUint32(0) + 8, blob.length, "L + 8 is the blob");
      const back = decodeDeletionVector(blob);
      assert.deepEqual([...back.toArray()], [...bitmap.toArray()]);
      assert.equal(back.cardinality, positions.length);
    }
  });

  test("an empty DV is refused", () => {
    assert.throws(() => encodeDeletionVector(new RoaringPositionBitmap()), /at least one position/);
  });

  test("a flipped bit is caught by the CRC", () => {
    const blob = encodeDeletionVector(RoaringPositionBitmap.from([0, 5]));
    blob[38]! ^= 0x01; // the 5 becomes a 4
    assert.throws(
      () => decodeDeletionVector(blob),
      (e: Error) => errorKind(e) === "corrupt" && /CRC-32/.test(e.message),
    );
    const badCrc = encodeDeletionVector(RoaringPositionBitmap.from([0, 5]));
    badCrc[43]! ^= 0xff;
    assert.throws(() => decodeDeletionVector(badCrc), /CRC-32 is 86d2574a, the blob says 86d257b5/);
  });

  test("a wrong magic is named", () => {
    const blob = encodeDeletionVector(RoaringPositionBitmap.from([0, 5]));
    blob[4] = 0;
    assert.throws(() => decodeDeletionVector(blob), /magic is 00d33964, expected d1d33964/);
  });

  test("a length field that disagrees with the blob, or a blob too short, is refused", () => {
    const blob = encodeDeletionVector(RoaringPositionBitmap.from([0, 5]));
    assert.throws(() => decodeDeletionVector(blob.subarray(0, 40)), /length field 36 does not match/);
    assert.throws(() => decodeDeletionVector(blob.subarray(0, 8)), /shorter than 12/);
  });

  test("a DV sliced out of a larger buffer decodes (views with an offset)", () => {
    const blob = encodeDeletionVector(RoaringPositionBitmap.from([7, 9, 11]));
    const big = new Uint8Array(blob.length + 13);
    big.set(blob, 5);
    assert.deepEqual([...decodeDeletionVector(big.subarray(5, 5 + blob.length))], [7n, 9n, 11n]);
  });
});
