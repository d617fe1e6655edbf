// The 32-bit hash of the bucket transform (spec Appendix B): Murmur3, x86 variant, 32-bit,
// seeded with 0, over the bytes the spec names per type. An int and a long hash alike (both
// as the 8 little-endian bytes of the long), so that promoting int to long keeps the buckets;
// hashLong takes those 8 bytes as two 32-bit halves, without building them.

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

function mixK1(k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, C2);
}

function mixH1(h: number, k: number): number {
  h ^= mixK1(k);
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function finish(h: number, length: number): number {
  h ^= length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}

/** murmur3_x86_32 of bytes [from, to) of `bytes`, seed 0: a signed 32-bit result, as Java's. */
export function hashBytes(bytes: Uint8Array, from = 0, to = bytes.length): number {
  let h = 0;
  const length = to - from;
  const blocksEnd = from + (length & ~3);
  let i = from;
  for (; i < blocksEnd; i += 4) {
    h = mixH1(h, bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
  }
  const tail = to - i;
  if (tail > 0) {
    let k = bytes[i]!;
    if (tail > 1) k ^= bytes[i + 1]! << 8;
    if (tail > 2) k ^= bytes[i + 2]! << 16;
    h ^= mixK1(k);
  }
  return finish(h, length);
}

/** The hash of a long given as its low and high 32 bits: the 8 little-endian bytes, low half first. */
export function hashLongHalves(low: number, high: number): number {
  return finish(mixH1(mixH1(0, low | 0), high | 0), 8);
}

/** Spec: hashLong(v), the 8-byte little-endian form of a long. */
export function hashLong(value: bigint): number {
  return hashLongHalves(Number(BigInt.asUintN(32, value)), Number(BigInt.asIntN(32, value >> 32n)));
}

/** Spec: an int hashes as hashLong(long(v)): its high half is the sign extension. */
export function hashInt(value: number): number {
  return hashLongHalves(value | 0, value < 0 ? -1 : 0);
}
