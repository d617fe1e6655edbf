// Truncated string and binary bounds, checked against the cases of Iceberg Java's
// TestUnicodeUtil and BinaryUtil.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  truncateBinaryLower,
  truncateBinaryUpper,
  truncateStringLower,
  truncateStringUpper,
} from "#src/iceberg/parquet/truncate-bounds.ts";

const utf8 = (text: string) => new TextEncoder().encode(text);
const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes));

test("a string lower bound keeps the first N code points", () => {
  assert.equal(text(truncateStringLower(utf8("abcde"), 3)), "abc");
  assert.equal(text(truncateStringLower(utf8("abc"), 3)), "abc");
  assert.equal(text(truncateStringLower(utf8("abc"), 5)), "abc");
  assert.equal(text(truncateStringLower(utf8(""), 3)), "");
  // a code point outside the BMP is one character, never split
  assert.equal(text(truncateStringLower(utf8("a😀b"), 2)), "a😀");
  assert.equal(text(truncateStringLower(utf8("ééééé"), 2)), "éé");
});

test("a string upper bound increments the last kept code point", () => {
  assert.equal(text(truncateStringUpper(utf8("abcde"), 3)), "abd");
  assert.equal(text(truncateStringUpper(utf8("abc"), 3)), "abc");
  assert.equal(text(truncateStringUpper(utf8("abc"), 5)), "abc");
  assert.equal(text(truncateStringUpper(utf8(""), 3)), "");
  assert.equal(text(truncateStringUpper(utf8("héllo wörld, this is long"), 16)), "héllo wörld, thj");
  assert.equal(text(truncateStringUpper(utf8("a😀bc"), 2)), "a😁");
});

test("a string upper bound carries past U+10FFFF and skips the surrogate range", () => {
  assert.equal(text(truncateStringUpper(utf8("a\u{10ffff}c"), 2)), "b");
  assert.equal(text(truncateStringUpper(utf8("\ud7ffextra"), 1)), "\ue000");
  assert.equal(truncateStringUpper(utf8("\u{10ffff}\u{10ffff}x"), 2), undefined);
});

test("a binary lower bound keeps the first N bytes; the upper bound increments the last byte below 0xff", () => {
  const bytes = Uint8Array.of(1, 2, 0xff, 4);
  assert.deepEqual(truncateBinaryLower(bytes, 2), Uint8Array.of(1, 2));
  assert.deepEqual(truncateBinaryLower(bytes, 9), bytes);
  assert.deepEqual(truncateBinaryUpper(bytes, 2), Uint8Array.of(1, 3));
  assert.deepEqual(truncateBinaryUpper(bytes, 3), Uint8Array.of(1, 3));
  assert.deepEqual(truncateBinaryUpper(bytes, 4), bytes);
  assert.equal(truncateBinaryUpper(Uint8Array.of(0xff, 0xff, 1), 2), undefined);
  // the input is left alone
  assert.deepEqual(bytes, Uint8Array.of(1, 2, 0xff, 4));
});
