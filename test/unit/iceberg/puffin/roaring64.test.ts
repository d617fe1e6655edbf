import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MAX_POSITION, RoaringPositionBitmap } from "#src/iceberg/puffin/roaring64.ts";

const TWO_32 = 2n ** 32n;

function roundTrip(bitmap: RoaringPositionBitmap, runOptimize = true): RoaringPositionBitmap {
  return RoaringPositionBitmap.deserialize(bitmap.serialize(runOptimize));
}

describe("RoaringPositionBitmap", () => {
  test("one position", () => {
    const bitmap = RoaringPositionBitmap.from([42]);
    const back = roundTrip(bitmap);
    assert.deepEqual([...back], [42n]);
    assert.equal(back.cardinality, 1);
    assert.equal(back.has(42n), true);
    assert.equal(back.has(41), false);
  });

  test("more than 4096 positions in one container (bitmap container)", () => {
    const positions = Array.from({ length: 10000 }, (_, i) => i * 5 + (i % 3)); // spans keys 0 of a 50000 range
    const bitmap = RoaringPositionBitmap.from(positions);
    assert.equal(bitmap.cardinality, 10000);
    for (const runOptimize of [true, false]) {
      const back = roundTrip(bitmap, runOptimize);
      assert.deepEqual(Array.from(back.toArray(), Number), positions);
    }
  });

  test("positions beyond 2^32 land in several keys, in ascending key order", () => {
    const positions = [3n * TWO_32 + 7n, 5n, TWO_32, TWO_32 - 1n, 3n * TWO_32, MAX_POSITION];
    const bitmap = new RoaringPositionBitmap();
    bitmap.addAll(BigInt64Array.from(positions));
    assert.deepEqual(bitmap.keys, [0, 1, 3, 0x7ffffffe]);
    const bytes = bitmap.serialize();
    const view = new DataView(bytes.buffer);
    assert.equal(view.getBigUint64(0, true), 4n);
    assert.equal(view.getUint32(8, true), 0);
    const back = RoaringPositionBitmap.deserialize(bytes);
    const sorted = [...positions].sort((a, b) => (a < b ? -1 : 1));
    assert.deepEqual([...back], sorted);
    assert.deepEqual([...back.toArray()], sorted);
    assert.equal(back.has(3n * TWO_32 + 7n), true);
    assert.equal(back.has(2n * TWO_32 + 7n), false);
  });

  test("numbers past 2^32 and BigUint64Array input agree with bigint adds", () => {
    const numbers = [2 ** 32 + 1, 2 ** 40, 17, 2 ** 52];
    const a = RoaringPositionBitmap.from(numbers);
    const b = RoaringPositionBitmap.from(BigUint64Array.from(numbers.map(BigInt)));
    const c = new RoaringPositionBitmap();
    for (const n of numbers) c.add(BigInt(n));
    const expected = numbers.map(BigInt).sort((x, y) => (x < y ? -1 : 1));
    for (const bitmap of [a, b, c]) assert.deepEqual([...bitmap], expected);
    assert.deepEqual(Buffer.from(a.serialize()), Buffer.from(c.serialize()));
  });

  test("dense runs serialize as run containers and read back", () => {
    const positions = new Uint32Array(300000);
    for (let i = 0; i < positions.length; i++) positions[i] = 1000 + i; // one long run over 5 containers
    const bitmap = RoaringPositionBitmap.from(positions);
    const bytes = bitmap.serialize();
    // 5 containers, each one run: cookie, run bitset, descriptive and offset headers, 6 bytes a run.
    assert.equal(bytes.length, 8 + 4 + 4 + 1 + 5 * 8 + 5 * 6);
    const back = RoaringPositionBitmap.deserialize(bytes);
    assert.equal(back.cardinality, 300000);
    assert.equal(back.has(1000), true);
    assert.equal(back.has(999), false);
    assert.equal(back.has(300999), true);
    assert.equal(back.has(301000), false);
    assert.equal(bitmap.serialize(false).length, 8 + 4 + 8 + 5 * 8 + 5 * 8192);
  });

  test("union of two DVs", () => {
    const old = RoaringPositionBitmap.from([1, 2, 3, 2 ** 33]);
    const fresh = RoaringPositionBitmap.from([3, 4, 70000]);
    fresh.union(old);
    assert.deepEqual(Array.from(fresh.toArray(), Number), [1, 2, 3, 4, 70000, 2 ** 33]);
    assert.equal(old.cardinality, 4, "the old DV is untouched");
    old.add(5);
    assert.equal(fresh.has(5), false, "no container is shared");
  });

  test("forEach gives numbers ascending; the iterator bigints", () => {
    const bitmap = RoaringPositionBitmap.from([9, 1, 5, 2 ** 32]);
    const seen: number[] = [];
    bitmap.forEach((p) => {
      seen.push(p);
    });
    assert.deepEqual(seen, [1, 5, 9, 2 ** 32]);
  });

  test("rejects negative, fractional and too large positions", () => {
    const bitmap = new RoaringPositionBitmap();
    assert.throws(() => bitmap.add(-1), RangeError);
    assert.throws(() => bitmap.add(1.5), RangeError);
    assert.throws(() => bitmap.add(MAX_POSITION + 1n), RangeError);
    assert.throws(() => bitmap.addAll(BigInt64Array.of(-1n)), RangeError);
    assert.throws(() => bitmap.addAll([0, Number.NaN]), RangeError);
    assert.equal(bitmap.has(-1), false);
    assert.equal(bitmap.isEmpty(), true);
  });

  test("reads Java's layout: an empty bitmap for every key in a gap", () => {
    // Java writes keys 0..max, the ones without positions as empty bitmaps (cookie 12346, 0 containers).
    const bytes = new Uint8Array(8 + 12 + 4 + 18);
    const view = new DataView(bytes.buffer);
    view.setBigUint64(0, 2n, true);
    view.setUint32(8, 0, true); // key 0: empty
    view.setUint32(12, 12346, true);
    view.setUint32(16, 0, true);
    view.setUint32(20, 1, true); // key 1: {7}
    view.setUint32(24, 12346, true);
    view.setUint32(28, 1, true);
    view.setUint16(32, 0, true);
    view.setUint16(34, 0, true);
    view.setUint32(36, 16, true);
    view.setUint16(40, 7, true);
    const bitmap = RoaringPositionBitmap.deserialize(bytes);
    assert.deepEqual(bitmap.keys, [1]);
    assert.deepEqual([...bitmap], [TWO_32 + 7n]);
  });

  test("rejects unsorted keys, a count that does not fit and stray bytes", () => {
    const a = RoaringPositionBitmap.from([1]).serialize(); // 8 + 4 + 18 bytes
    const twice = new Uint8Array(8 + 2 * (a.length - 8));
    twice.set(a);
    twice.set(a.subarray(8), a.length);
    new DataView(twice.buffer).setUint32(0, 2, true);
    assert.throws(() => RoaringPositionBitmap.deserialize(twice), /keys not ascending/);
    const huge = a.slice();
    new DataView(huge.buffer).setUint32(0, 1000, true);
    assert.throws(() => RoaringPositionBitmap.deserialize(huge), /does not fit/);
    const stray = new Uint8Array(a.length + 2);
    stray.set(a);
    assert.throws(() => RoaringPositionBitmap.deserialize(stray), /stray/);
  });
});
