// Truncated bounds for string and binary columns (metrics mode truncate(N)), as Iceberg Java's
// UnicodeUtil and BinaryUtil cut them:
//   string lower bound   the first N code points
//   string upper bound   the first N code points with the last one that can be incremented
//                        incremented (skipping the surrogate range, dropping U+10FFFF and what
//                        follows it); none if no code point can be
//   binary lower bound   the first N bytes
//   binary upper bound   the first N bytes with the last byte below 0xFF incremented, the bytes
//                        after it dropped; none if all N bytes are 0xFF
// A value no longer than N is its own bound. Strings are compared by code point, which is the
// unsigned order of their UTF-8 bytes, so the bounds are UTF-8 byte strings throughout.

const MAX_CODE_POINT = 0x10ffff;
const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();

export function truncateStringLower(utf8: Uint8Array, length: number): Uint8Array {
  const end = codePointOffset(utf8, length);
  return end === utf8.length ? utf8 : utf8.subarray(0, end);
}

export function truncateStringUpper(utf8: Uint8Array, length: number): Uint8Array | undefined {
  if (codePointOffset(utf8, length) === utf8.length) return utf8;
  const codePoints = Array.from(
    utf8Decoder.decode(utf8.subarray(0, codePointOffset(utf8, length))),
    (c) => c.codePointAt(0)!,
  );
  for (let i = codePoints.length - 1; i >= 0; i--) {
    const next = nextCodePoint(codePoints[i]!);
    if (next !== undefined) return utf8Encoder.encode(String.fromCodePoint(...codePoints.slice(0, i), next));
  }
  return undefined;
}

export function truncateBinaryLower(bytes: Uint8Array, length: number): Uint8Array {
  return bytes.length <= length ? bytes : bytes.subarray(0, length);
}

export function truncateBinaryUpper(bytes: Uint8Array, length: number): Uint8Array | undefined {
  if (bytes.length <= length) return bytes;
  for (let i = length - 1; i >= 0; i--) {
    if (bytes[i]! < 0xff) {
      const upper = bytes.slice(0, i + 1);
      upper[i]!++;
      return upper;
    }
  }
  return undefined;
}

/** The byte offset just past the first `count` code points (the whole length if fewer). */
function codePointOffset(utf8: Uint8Array, count: number): number {
  let seen = 0;
  for (let i = 0; i < utf8.length; i++) {
    // a code point starts at every byte that is not a continuation byte (10xxxxxx)
    if ((utf8[i]! & 0xc0) !== 0x80 && seen++ === count) return i;
  }
  return utf8.length;
}

function nextCodePoint(codePoint: number): number | undefined {
  if (codePoint === 0xd7ff) return 0xe000;
  return codePoint === MAX_CODE_POINT ? undefined : codePoint + 1;
}
