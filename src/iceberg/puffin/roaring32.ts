// A 32-bit Roaring bitmap (RoaringFormatSpec, "Standard 32-bit Roaring Bitmap"): the high 16 bits of a
// value select a container (its "key"), the low 16 bits are stored in it. In memory a container is
// either an array container (sorted, distinct Uint16Array, cardinality <= 4096) or a bitmap container
// (2048 u32 words = 65536 bits, cardinality > 4096): the same threshold the portable format uses to tell
// them apart, so a container never needs converting on the way out. Run containers exist only on the
// wire: roaring32-portable.ts decides them when it serializes and expands them when it reads.

/** Largest cardinality of an array container; above it a container is a bitmap. */
export const ARRAY_CONTAINER_MAX = 4096;
/** u32 words of a bitmap container (65536 bits, 8 KiB). */
export const BITMAP_WORDS = 2048;

/** Array container (may have spare capacity past its cardinality) or bitmap container. */
export type Container = Uint16Array | Uint32Array;

// Below this many values, a bulk add inserts one by one rather than bucketing by key.
const BULK_MIN = 64;

export class Roaring32 {
  /** Container keys (high 16 bits), strictly ascending. */
  keys: number[] = [];
  /** containers[i] holds the low 16 bits of the values with key keys[i]. */
  containers: Container[] = [];
  /** Cardinality of each container, in 1..65536; > ARRAY_CONTAINER_MAX means a bitmap container. */
  cardinalities: number[] = [];

  get cardinality(): number {
    let n = 0;
    for (const c of this.cardinalities) n += c;
    return n;
  }

  isEmpty(): boolean {
    return this.keys.length === 0;
  }

  has(value: number): boolean {
    const i = indexOfKey(this.keys, value >>> 16);
    if (i < 0) return false;
    const low = value & 0xffff;
    const card = this.cardinalities[i]!;
    const c = this.containers[i]!;
    if (card > ARRAY_CONTAINER_MAX) return ((c[low >>> 5]! >>> (low & 31)) & 1) === 1;
    return binarySearch16(c as Uint16Array, card, low) >= 0;
  }

  /** Adds one value in [0, 2^32); returns whether it was absent. */
  add(value: number): boolean {
    const key = value >>> 16;
    const low = value & 0xffff;
    let i = indexOfKey(this.keys, key);
    if (i < 0) {
      i = -i - 1;
      const array = new Uint16Array(4);
      array[0] = low;
      this.keys.splice(i, 0, key);
      this.containers.splice(i, 0, array);
      this.cardinalities.splice(i, 0, 1);
      return true;
    }
    const card = this.cardinalities[i]!;
    const c = this.containers[i]!;
    if (card > ARRAY_CONTAINER_MAX) {
      const words = c as Uint32Array;
      const w = low >>> 5;
      const mask = 1 << (low & 31);
      if ((words[w]! & mask) !== 0) return false;
      words[w] = words[w]! | mask;
      this.cardinalities[i] = card + 1;
      return true;
    }
    let array = c as Uint16Array;
    const at = binarySearch16(array, card, low);
    if (at >= 0) return false;
    const insert = -at - 1;
    if (card === ARRAY_CONTAINER_MAX) {
      const words = arrayToBitmap(array, card);
      words[low >>> 5] = words[low >>> 5]! | (1 << (low & 31));
      this.containers[i] = words;
    } else {
      if (card === array.length) {
        const grown = new Uint16Array(Math.min(ARRAY_CONTAINER_MAX, card * 2));
        grown.set(array.subarray(0, card));
        array = grown;
        this.containers[i] = array;
      }
      array.copyWithin(insert + 1, insert, card);
      array[insert] = low;
    }
    this.cardinalities[i] = card + 1;
    return true;
  }

  /** Adds values in [0, 2^32), in any order, duplicates allowed. */
  addMany(values: Uint32Array): void {
    const n = values.length;
    if (n < BULK_MIN) {
      for (let i = 0; i < n; i++) this.add(values[i]!);
      return;
    }
    // Counting sort by key: one pass to size the buckets, one to scatter the low halves. The key range
    // of row positions is small (a key spans 65536 rows), so the count array is too.
    let minKey = 0xffff;
    let maxKey = 0;
    for (let i = 0; i < n; i++) {
      const key = values[i]! >>> 16;
      if (key < minKey) minKey = key;
      if (key > maxKey) maxKey = key;
    }
    const starts = new Int32Array(maxKey - minKey + 2);
    for (let i = 0; i < n; i++) starts[(values[i]! >>> 16) - minKey + 1]!++;
    for (let k = 1; k < starts.length; k++) starts[k]! += starts[k - 1]!;
    const fill = starts.slice(0, starts.length - 1);
    const lows = new Uint16Array(n);
    for (let i = 0; i < n; i++) {
      const v = values[i]!;
      lows[fill[(v >>> 16) - minKey]!++] = v & 0xffff;
    }
    for (let k = 0; k < fill.length; k++) {
      const from = starts[k]!;
      const to = starts[k + 1]!;
      if (to > from) this.#addLows(k + minKey, lows.subarray(from, to));
    }
  }

  /** Adds every value of `other` to this bitmap (in place). */
  union(other: Roaring32): this {
    const keys: number[] = [];
    const containers: Container[] = [];
    const cards: number[] = [];
    let i = 0;
    let j = 0;
    const n = this.keys.length;
    const m = other.keys.length;
    while (i < n || j < m) {
      const a = i < n ? this.keys[i]! : 0x10000;
      const b = j < m ? other.keys[j]! : 0x10000;
      if (a < b) {
        keys.push(a);
        containers.push(this.containers[i]!);
        cards.push(this.cardinalities[i]!);
        i++;
      } else if (b < a) {
        keys.push(b);
        containers.push(copyContainer(other.containers[j]!, other.cardinalities[j]!));
        cards.push(other.cardinalities[j]!);
        j++;
      } else {
        keys.push(a);
        const merged = unionContainers(
          this.containers[i]!,
          this.cardinalities[i]!,
          other.containers[j]!,
          other.cardinalities[j]!,
        );
        containers.push(merged);
        cards.push(mergedCardinality);
        i++;
        j++;
      }
    }
    this.keys = keys;
    this.containers = containers;
    this.cardinalities = cards;
    return this;
  }

  /** Calls `fn` with each value, ascending. */
  forEach(fn: (value: number) => void): void {
    for (let i = 0; i < this.keys.length; i++) {
      const high = this.keys[i]! * 0x10000;
      const card = this.cardinalities[i]!;
      const c = this.containers[i]!;
      if (card <= ARRAY_CONTAINER_MAX) {
        for (let k = 0; k < card; k++) fn(high + c[k]!);
      } else {
        for (let w = 0; w < BITMAP_WORDS; w++) {
          let word = c[w]! | 0;
          while (word !== 0) {
            const t = word & -word;
            fn(high + w * 32 + 31 - Math.clz32(t));
            word ^= t;
          }
        }
      }
    }
  }

  /** Writes the values, ascending, into `out` from `offset`; returns the offset after the last one. */
  writeValues(out: { [index: number]: number }, offset: number, stride = 1): number {
    let o = offset;
    for (let i = 0; i < this.keys.length; i++) {
      const high = this.keys[i]! * 0x10000;
      const card = this.cardinalities[i]!;
      const c = this.containers[i]!;
      if (card <= ARRAY_CONTAINER_MAX) {
        for (let k = 0; k < card; k++, o += stride) out[o] = high + c[k]!;
      } else {
        for (let w = 0; w < BITMAP_WORDS; w++) {
          let word = c[w]! | 0;
          const base = high + w * 32 + 31;
          while (word !== 0) {
            const t = word & -word;
            out[o] = base - Math.clz32(t);
            o += stride;
            word ^= t;
          }
        }
      }
    }
    return o;
  }

  /** Appends a container; keys must be appended in ascending order (used by deserialization). */
  appendContainer(key: number, container: Container, cardinality: number): void {
    this.keys.push(key);
    this.containers.push(container);
    this.cardinalities.push(cardinality);
  }

  // Adds the low halves `lows` (unsorted, duplicates allowed; the caller's scratch: it may be
  // reordered) to the container of `key`.
  #addLows(key: number, lows: Uint16Array): void {
    let i = indexOfKey(this.keys, key);
    let card = 0;
    let c: Container | undefined;
    if (i >= 0) {
      card = this.cardinalities[i]!;
      c = this.containers[i]!;
    } else {
      i = -i - 1;
      this.keys.splice(i, 0, key);
      this.containers.splice(i, 0, EMPTY_ARRAY);
      this.cardinalities.splice(i, 0, 0);
    }
    if (card > ARRAY_CONTAINER_MAX) {
      this.cardinalities[i] = card + setBits(c as Uint32Array, lows);
      return;
    }
    if (card + lows.length > ARRAY_CONTAINER_MAX) {
      const words = c === undefined ? new Uint32Array(BITMAP_WORDS) : arrayToBitmap(c as Uint16Array, card);
      card += setBits(words, lows);
      this.containers[i] = card > ARRAY_CONTAINER_MAX ? words : bitmapToArray(words, card);
      this.cardinalities[i] = card;
      return;
    }
    sort16(lows);
    const distinct = dedupeSorted(lows);
    if (c === undefined) {
      this.containers[i] = lows.slice(0, distinct);
      this.cardinalities[i] = distinct;
    } else {
      this.containers[i] = mergeArrays(c as Uint16Array, card, lows, distinct);
      this.cardinalities[i] = mergedCardinality;
    }
  }
}

const EMPTY_ARRAY = new Uint16Array(0);

// Sorting a bucket of low halves: insertion sort when tiny, else a two-pass LSD radix sort on bytes,
// which beats the built-in comparison sort several times over and stays in cache.
const RADIX_MIN = 32;
const radixCounts = new Int32Array(257);
const radixTemp = new Uint16Array(ARRAY_CONTAINER_MAX);

function sort16(a: Uint16Array): void {
  const n = a.length;
  if (n < RADIX_MIN) {
    insertionSort(a);
    return;
  }
  const temp = n <= radixTemp.length ? radixTemp : new Uint16Array(n);
  const counts = radixCounts;
  counts.fill(0);
  for (let k = 0; k < n; k++) counts[(a[k]! & 0xff) + 1]!++;
  for (let b = 1; b < 257; b++) counts[b]! += counts[b - 1]!;
  for (let k = 0; k < n; k++) {
    const v = a[k]!;
    temp[counts[v & 0xff]!++] = v;
  }
  counts.fill(0);
  for (let k = 0; k < n; k++) counts[(temp[k]! >>> 8) + 1]!++;
  for (let b = 1; b < 257; b++) counts[b]! += counts[b - 1]!;
  for (let k = 0; k < n; k++) {
    const v = temp[k]!;
    a[counts[v >>> 8]!++] = v;
  }
}

function insertionSort(a: Uint16Array): void {
  for (let k = 1; k < a.length; k++) {
    const v = a[k]!;
    let j = k - 1;
    while (j >= 0 && a[j]! > v) {
      a[j + 1] = a[j]!;
      j--;
    }
    a[j + 1] = v;
  }
}

// Cardinality of the last unionContainers / mergeArrays result: returned on the side so that the hot
// merge allocates nothing but its result.
let mergedCardinality = 0;

/** Number of set bits in a 32-bit word. */
export function popcount32(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** Cardinality of a bitmap container. */
export function bitmapCardinality(words: Uint32Array): number {
  let n = 0;
  for (let w = 0; w < BITMAP_WORDS; w++) n += popcount32(words[w]!);
  return n;
}

/** Sets bits start..end (inclusive) of a bitmap container. */
export function setBitRange(words: Uint32Array, start: number, end: number): void {
  const first = start >>> 5;
  const last = end >>> 5;
  const firstMask = -1 << (start & 31);
  const lastMask = -1 >>> (31 - (end & 31));
  if (first === last) {
    words[first] = words[first]! | (firstMask & lastMask);
    return;
  }
  words[first] = words[first]! | firstMask;
  words.fill(0xffffffff, first + 1, last);
  words[last] = words[last]! | lastMask;
}

/** The first `card` values of a bitmap container as an exact-length array container. */
export function bitmapToArray(words: Uint32Array, card: number): Uint16Array {
  const out = new Uint16Array(card);
  let o = 0;
  for (let w = 0; w < BITMAP_WORDS; w++) {
    let word = words[w]! | 0;
    while (word !== 0) {
      const t = word & -word;
      out[o++] = w * 32 + 31 - Math.clz32(t);
      word ^= t;
    }
  }
  return out;
}

function arrayToBitmap(array: Uint16Array, card: number): Uint32Array {
  const words = new Uint32Array(BITMAP_WORDS);
  for (let k = 0; k < card; k++) {
    const v = array[k]!;
    words[v >>> 5] = words[v >>> 5]! | (1 << (v & 31));
  }
  return words;
}

// Sets the bits of `lows`; returns how many were not set before.
function setBits(words: Uint32Array, lows: Uint16Array): number {
  let added = 0;
  for (let k = 0; k < lows.length; k++) {
    const v = lows[k]!;
    const w = v >>> 5;
    const mask = 1 << (v & 31);
    const old = words[w]!;
    if ((old & mask) === 0) {
      words[w] = old | mask;
      added++;
    }
  }
  return added;
}

// Removes duplicates from a sorted array in place; returns the distinct count.
function dedupeSorted(a: Uint16Array): number {
  if (a.length === 0) return 0;
  let n = 1;
  for (let k = 1; k < a.length; k++) {
    if (a[k] !== a[n - 1]) a[n++] = a[k]!;
  }
  return n;
}

// Sorted union of two sorted distinct arrays (their first na / nb values), as an exact-length array
// when the union fits an array container, else as a bitmap container. Sets mergedCardinality.
function mergeArrays(a: Uint16Array, na: number, b: Uint16Array, nb: number): Container {
  const out = new Uint16Array(na + nb);
  let i = 0;
  let j = 0;
  let o = 0;
  while (i < na && j < nb) {
    const x = a[i]!;
    const y = b[j]!;
    if (x < y) {
      out[o++] = x;
      i++;
    } else if (y < x) {
      out[o++] = y;
      j++;
    } else {
      out[o++] = x;
      i++;
      j++;
    }
  }
  while (i < na) out[o++] = a[i++]!;
  while (j < nb) out[o++] = b[j++]!;
  mergedCardinality = o;
  if (o > ARRAY_CONTAINER_MAX) return arrayToBitmap(out, o);
  return o === out.length ? out : out.slice(0, o);
}

function unionContainers(a: Container, na: number, b: Container, nb: number): Container {
  const aBitmap = na > ARRAY_CONTAINER_MAX;
  const bBitmap = nb > ARRAY_CONTAINER_MAX;
  if (!aBitmap && !bBitmap) return mergeArrays(a as Uint16Array, na, b as Uint16Array, nb);
  if (aBitmap && bBitmap) {
    const words = a as Uint32Array;
    const other = b as Uint32Array;
    let card = 0;
    for (let w = 0; w < BITMAP_WORDS; w++) {
      const x = words[w]! | other[w]!;
      words[w] = x;
      card += popcount32(x);
    }
    mergedCardinality = card;
    return words;
  }
  const words = aBitmap ? (a as Uint32Array) : (b as Uint32Array).slice();
  const array = aBitmap ? (b as Uint16Array) : (a as Uint16Array);
  mergedCardinality = (aBitmap ? na : nb) + setBits(words, array.subarray(0, aBitmap ? nb : na));
  return words;
}

/**
 * Index of `key` in the ascending `keys` of a bitmap, or -(insertion point) - 1. Positions
 * arrive mostly in order: the last key is tried first.
 */
export function indexOfKey(keys: readonly number[], key: number): number {
  const last = keys.length - 1;
  if (last >= 0 && keys[last]! <= key) return keys[last] === key ? last : -(last + 1) - 1;
  let lo = 0;
  let hi = last;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid]!;
    if (k < key) lo = mid + 1;
    else if (k > key) hi = mid - 1;
    else return mid;
  }
  return -lo - 1;
}

function copyContainer(c: Container, card: number): Container {
  return card > ARRAY_CONTAINER_MAX ? c.slice() : c.slice(0, card);
}

function binarySearch16(a: Container, n: number, value: number): number {
  let lo = 0;
  let hi = n - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = a[mid]!;
    if (v < value) lo = mid + 1;
    else if (v > value) hi = mid - 1;
    else return mid;
  }
  return -lo - 1;
}
