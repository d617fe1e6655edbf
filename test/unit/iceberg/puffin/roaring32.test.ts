import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { errorKind } from "#src/iceberg/errors.ts";
import { Roaring32 } from "#src/iceberg/puffin/roaring32.ts";
import { deserializePortable, readPortable, serializePortable } from "#src/iceberg/puffin/roaring32-portable.ts";

function values(bitmap: Roaring32): number[] {
  const out: number[] = [];
  bitmap.forEach((v) => {
    out.push(v);
  });
  return out;
}

function bitmapOf(list: number[]): Roaring32 {
  const bitmap = new Roaring32();
  bitmap.addMany(Uint32Array.from(list));
  return bitmap;
}

// Little-endian byte builder for hand-made portable bitmaps.
function le(...parts: [number, 2 | 4][]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, [, w]) => n + w, 0));
  const view = new DataView(out.buffer);
  let p = 0;
  for (const [v, w] of parts) {
    if (w === 2) view.setUint16(p, v, true);
    else view.setUint32(p, v, true);
    p += w;
  }
  return out;
}

function concat(...chunks: Uint8Array[]): Uint8Array {
  return Uint8Array.from(chunks.flatMap((c) => [...c]));
}

describe("Roaring32", () => {
  test("add, has and cardinality across array and bitmap containers", () => {
    const bitmap = new Roaring32();
    for (let v = 0; v < 5000; v++) assert.equal(bitmap.add(v * 3), true);
    assert.equal(bitmap.add(3), false);
    assert.equal(bitmap.cardinality, 5000);
    assert.equal(bitmap.has(14997), true);
    assert.equal(bitmap.has(14998), false);
    assert.equal(bitmap.has(0x12345678), false);
    // 15000 values span one container (key 0, 0..14997): past 4096 it became a bitmap container.
    assert.equal(bitmap.keys.length, 1);
    assert.equal(bitmap.containers[0] instanceof Uint32Array, true);
  });

  test("addMany sorts, dedupes and matches one-by-one adds", () => {
    const list: number[] = [];
    let seed = 7;
    for (let i = 0; i < 20000; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      list.push(seed % 300000);
    }
    const bulk = bitmapOf(list);
    const single = new Roaring32();
    for (const v of list) single.add(v);
    const expected = [...new Set(list)].sort((a, b) => a - b);
    assert.deepEqual(values(bulk), expected);
    assert.deepEqual(values(single), expected);
    assert.equal(bulk.cardinality, expected.length);
  });

  test("bulk adds in batches of every size merge into existing containers", () => {
    const bitmap = new Roaring32();
    const reference = new Set<number>();
    let seed = 3;
    for (const batch of [10, 40, 100, 700, 3000, 64, 2000, 9000, 33]) {
      const list = new Uint32Array(batch);
      for (let i = 0; i < batch; i++) {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        list[i] = (seed >>> 3) % 200000; // about 3 keys: buckets of many sizes
        reference.add(list[i]!);
      }
      bitmap.addMany(list);
      assert.equal(bitmap.cardinality, reference.size);
    }
    assert.deepEqual(
      values(bitmap),
      [...reference].sort((a, b) => a - b),
    );
  });

  test("an array container holds exactly 4096 values; the 4097th makes it a bitmap", () => {
    const bitmap = bitmapOf(Array.from({ length: 4096 }, (_, i) => i * 2));
    assert.equal(bitmap.containers[0] instanceof Uint16Array, true);
    bitmap.addMany(Uint32Array.from(Array.from({ length: 100 }, (_, i) => i * 2))); // all present already
    assert.equal(bitmap.containers[0] instanceof Uint16Array, true);
    bitmap.add(1);
    assert.equal(bitmap.containers[0] instanceof Uint32Array, true);
    assert.equal(bitmap.cardinality, 4097);
  });

  test("union merges array/array, array/bitmap and bitmap/bitmap containers", () => {
    const a = bitmapOf([1, 2, 3, 70000, ...Array.from({ length: 5000 }, (_, i) => 200000 + i)]);
    const b = bitmapOf([3, 4, ...Array.from({ length: 5000 }, (_, i) => 70000 + i * 2), 200001, 300000]);
    const expected = [...new Set([...values(a), ...values(b)])].sort((x, y) => x - y);
    const before = values(b);
    assert.deepEqual(values(a.union(b)), expected);
    assert.deepEqual(values(b), before, "union leaves its argument alone");
    assert.equal(a.cardinality, expected.length);
  });

  test("two arrays whose union passes 4096 become a bitmap", () => {
    const a = bitmapOf(Array.from({ length: 3000 }, (_, i) => i * 2));
    const b = bitmapOf(Array.from({ length: 3000 }, (_, i) => i * 2 + 1));
    a.union(b);
    assert.equal(a.cardinality, 6000);
    assert.equal(a.containers[0] instanceof Uint32Array, true);
  });
});

describe("portable serialization", () => {
  test("no-run cookie with offset header, array and bitmap containers", () => {
    const dense = Array.from({ length: 5000 }, (_, i) => 0x10000 + i * 3); // bitmap container, key 1
    const bitmap = bitmapOf([5, 9, ...dense]);
    const bytes = serializePortable(bitmap);
    const view = new DataView(bytes.buffer);
    assert.equal(view.getUint32(0, true), 12346);
    assert.equal(view.getUint32(4, true), 2);
    assert.deepEqual([view.getUint16(8, true), view.getUint16(10, true)], [0, 1]); // key 0, card 2
    assert.deepEqual([view.getUint16(12, true), view.getUint16(14, true)], [1, 4999]);
    assert.equal(view.getUint32(16, true), 24); // first container right after the headers
    assert.equal(view.getUint32(20, true), 28);
    assert.equal(bytes.length, 28 + 8192);
    assert.deepEqual(values(deserializePortable(bytes)), [5, 9, ...dense]);
  });

  test("runs are written where smaller, as Java's runOptimize and CRoaring do", () => {
    // 0..99: one run (6 bytes) beats 100 array values (200 bytes). Bytes as pyroaring writes them.
    const run = serializePortable(bitmapOf(Array.from({ length: 100 }, (_, i) => i)));
    assert.equal(Buffer.from(run).toString("hex"), "3b3000000100006300010000006300");
    // {0, 5}: two runs (10 bytes) lose to the array (4 bytes).
    assert.equal(
      Buffer.from(serializePortable(bitmapOf([0, 5]))).toString("hex"),
      "3a30000001000000000001001000000000000500",
    );
    // A full container: one run instead of 8 KiB; 65536 values read back.
    const full = serializePortable(bitmapOf(Array.from({ length: 65536 }, (_, i) => i)));
    assert.equal(Buffer.from(full).toString("hex"), "3b300000010000ffff01000000ffff");
    assert.equal(deserializePortable(full).cardinality, 65536);
    // runOptimize off: plain containers only.
    const plain = serializePortable(bitmapOf(Array.from({ length: 100 }, (_, i) => i)), false);
    assert.equal(new DataView(plain.buffer).getUint32(0, true), 12346);
  });

  test("bitmap runs are found across word boundaries", () => {
    const list = [
      ...Array.from({ length: 40 }, (_, i) => 20 + i), // 20..59, crosses a 32-bit word
      ...Array.from({ length: 5000 }, (_, i) => 1000 + i), // long run
      ...Array.from({ length: 64 }, (_, i) => 65472 + i), // run up to the last bit
    ];
    const bitmap = bitmapOf(list);
    assert.equal(bitmap.containers[0] instanceof Uint32Array, true);
    const bytes = serializePortable(bitmap);
    assert.equal(new DataView(bytes.buffer).getUint16(0, true), 12347);
    assert.equal(bytes.length, 4 + 1 + 4 + 2 + 3 * 4);
    assert.deepEqual(
      [...new Uint16Array(bytes.buffer.slice(11))],
      [20, 39, 1000, 4999, 65472, 63],
      "(start, length - 1) pairs",
    );
    assert.deepEqual(values(deserializePortable(bytes)), list);
  });

  test("reads hand-built run containers (cookie 12347), fewer than 4 containers: no offset header", () => {
    const bytes = concat(
      le([12347 | (2 << 16), 4]),
      Uint8Array.of(0b101), // containers 0 and 2 are runs
      le([0, 2], [5, 2], [1, 2], [1, 2], [2, 2], [65535, 2]), // key, cardinality - 1
      le([2, 2], [10, 2], [4, 2], [100, 2], [0, 2]), // run container: 10..14, 100
      le([3, 2], [7, 2]), // array container: 3, 7
      le([1, 2], [0, 2], [65535, 2]), // run container: 0..65535
    );
    const { bitmap, end } = readPortable(bytes);
    assert.equal(end, bytes.length);
    assert.equal(bitmap.cardinality, 6 + 2 + 65536);
    assert.deepEqual(values(bitmap).slice(0, 8), [10, 11, 12, 13, 14, 100, 0x10003, 0x10007]);
    assert.equal(bitmap.has(0x2ffff), true);
    assert.equal(bitmap.has(15), false);
  });

  test("reads run containers with the offset header (4 or more containers)", () => {
    const header = concat(
      le([12347 | (3 << 16), 4]),
      Uint8Array.of(0b1001),
      le([0, 2], [2, 2], [1, 2], [0, 2], [2, 2], [0, 2], [9, 2], [9, 2]),
    );
    const containers = [
      le([1, 2], [7, 2], [2, 2]), // 7..9
      le([42, 2]),
      le([65535, 2]),
      le([1, 2], [100, 2], [9, 2]), // 100..109
    ];
    let at = header.length + 16;
    const offsets = containers.map((c) => {
      const o = at;
      at += c.length;
      return o;
    });
    const bytes = concat(header, le(...offsets.map((o): [number, 4] => [o, 4])), ...containers);
    assert.deepEqual(values(deserializePortable(bytes)), [
      7,
      8,
      9,
      0x1002a,
      0x2ffff,
      ...Array.from({ length: 10 }, (_, i) => 0x90064 + i),
    ]);
  });

  test("what it writes with runs it reads back, for many shapes", () => {
    let seed = 99;
    for (let round = 0; round < 30; round++) {
      const list: number[] = [];
      const runs = 1 + (round % 7) * 40;
      for (let r = 0; r < runs; r++) {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        const start = seed % 400000;
        const length = 1 + ((seed >>> 8) % (round < 15 ? 5 : 3000));
        for (let k = 0; k < length; k++) list.push(start + k);
      }
      const bitmap = bitmapOf(list);
      const expected = values(bitmap);
      for (const runOptimize of [true, false]) {
        assert.deepEqual(values(deserializePortable(serializePortable(bitmap, runOptimize))), expected);
      }
    }
  });

  test("rejects bad cookies, truncation, unsorted keys, bad cardinalities and stray bytes", () => {
    const good = serializePortable(bitmapOf([1, 2, 3, 99]));
    assert.throws(() => deserializePortable(le([12345, 4], [0, 4])), /cookie 12345/);
    assert.throws(
      () => deserializePortable(good.subarray(0, good.length - 1)),
      (e: unknown) => errorKind(e) === "corrupt",
    );
    assert.throws(() => deserializePortable(concat(good, Uint8Array.of(0))), /stray/);
    const unsorted = concat(le([12346, 4], [1, 4], [0, 2], [1, 2], [16, 4]), le([2, 2], [1, 2]));
    assert.throws(() => deserializePortable(unsorted), /not strictly ascending/);
    const badRuns = concat(le([12347, 4]), Uint8Array.of(1), le([0, 2], [9, 2], [1, 2], [0, 2], [3, 2]));
    assert.throws(() => deserializePortable(badRuns), /runs hold 4, header says 10/);
    const twoKeys = concat(
      le([12346, 4], [2, 4], [5, 2], [0, 2], [3, 2], [0, 2], [24, 4], [26, 4]),
      le([1, 2], [1, 2]),
    );
    assert.throws(() => deserializePortable(twoKeys), /keys not ascending/);
  });

  test("an empty bitmap (as Java writes for keys in gaps) reads as empty", () => {
    assert.equal(deserializePortable(le([12346, 4], [0, 4])).isEmpty(), true);
  });
});
