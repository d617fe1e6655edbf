// Single-value binary serialization (spec Appendix D), byte for byte.
import assert from "node:assert/strict";
import { test } from "node:test";
import { errorKind } from "#src/iceberg/errors.ts";
import {
  decodeDecimal,
  decodeSingleValue,
  encodeDecimal,
  encodeSingleValue,
  type SingleValue,
} from "#src/iceberg/spec/single-value.ts";
import { decimal, fixed, type PrimitiveType } from "#src/iceberg/spec/types.ts";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const bytes = (text: string) => new Uint8Array(Buffer.from(text, "hex"));

const cases: [PrimitiveType, SingleValue, string][] = [
  ["boolean", false, "00"],
  ["boolean", true, "01"],
  ["int", -7, "f9ffffff"],
  ["int", 2147483647, "ffffff7f"],
  ["date", 19000, "384a0000"],
  ["long", 1n, "0100000000000000"],
  ["long", -5n, "fbffffffffffffff"],
  ["long", -(2n ** 63n), "0000000000000080"],
  ["time", 3_600_000_000n, "00a493d600000000"],
  ["timestamp", 1_700_000_000_123_456n, "40222018240a0600"],
  ["timestamptz", -1n, "ffffffffffffffff"],
  ["timestamptz_ns", 1_700_000_000_123_456_789n, "15cd853dfe9c9717"],
  ["float", 1.5, "0000c03f"],
  ["float", -0, "00000080"],
  ["double", -2.5, "00000000000004c0"],
  ["string", "héllo", "68c3a96c6c6f"],
  ["string", "", ""],
  ["uuid", "0192d8f4-1c6e-7b8a-9c3d-1234567890ab", "0192d8f41c6e7b8a9c3d1234567890ab"],
  ["binary", bytes("00ff03"), "00ff03"],
  [fixed(4), bytes("01020304"), "01020304"],
  [decimal(9, 2), -12345n, "cfc7"],
  [decimal(38, 10), -(10n ** 30n) + 7n, "f360d3632fb98b1215c0000007"],
];

test("every primitive type encodes to its spec bytes and decodes back", () => {
  for (const [type, value, expected] of cases) {
    const encoded = encodeSingleValue(type, value);
    assert.equal(hex(encoded), expected, `${JSON.stringify(type)} ${String(value)}`);
    const decoded = decodeSingleValue(type, encoded);
    if (value instanceof Uint8Array) assert.deepEqual(decoded, value);
    else assert.ok(Object.is(decoded, value), `${JSON.stringify(type)}: ${String(decoded)} !== ${String(value)}`);
  }
});

test("long-like types take a safe-integer number on encode and give back a bigint", () => {
  assert.equal(hex(encodeSingleValue("long", 4294967296)), "0000000001000000");
  assert.equal(decodeSingleValue("timestamptz", encodeSingleValue("timestamptz", -1)), -1n);
  assert.throws(() => encodeSingleValue("long", 2 ** 53), TypeError);
  assert.throws(() => encodeSingleValue("long", 1.5), TypeError);
});

test("decimals use the fewest two's-complement bytes that keep the sign", () => {
  const expected: [bigint, string][] = [
    [0n, "00"],
    [1n, "01"],
    [127n, "7f"],
    [128n, "0080"],
    [255n, "00ff"],
    [256n, "0100"],
    [-1n, "ff"],
    [-128n, "80"],
    [-129n, "ff7f"],
    [32767n, "7fff"],
    [-32768n, "8000"],
    [10n ** 38n - 1n, "4b3b4ca85a86c47a098a223fffffffff"],
  ];
  for (const [value, encoded] of expected) {
    assert.equal(hex(encodeDecimal(value)), encoded, String(value));
    assert.equal(decodeDecimal(bytes(encoded)), value);
  }
  // a reader may see a wider encoding than the minimum (Java's BigInteger of a fixed[16] column)
  assert.equal(decodeDecimal(bytes("ffffffffffffffffffffffffffffcfc7")), -12345n);
});

test("a uuid also takes its 16 bytes, and its text without dashes", () => {
  const expected = "0192d8f41c6e7b8a9c3d1234567890ab";
  assert.equal(hex(encodeSingleValue("uuid", bytes(expected))), expected);
  assert.equal(hex(encodeSingleValue("uuid", expected)), expected);
  assert.throws(() => encodeSingleValue("uuid", "0192d8f4-1c6e-7b8a-9c3d"), TypeError);
});

test("wrong values and wrong lengths are refused", () => {
  assert.throws(() => encodeSingleValue("int", 2 ** 31), TypeError);
  assert.throws(() => encodeSingleValue("int", 1n), TypeError);
  assert.throws(() => encodeSingleValue("string", 1), TypeError);
  assert.throws(() => encodeSingleValue("boolean", 1), TypeError);
  assert.throws(() => encodeSingleValue(fixed(4), bytes("0102")), RangeError);
});

test("bytes that are no value of the type are a corrupt file, not a bug", () => {
  const corrupt = (e: unknown) => errorKind(e) === "corrupt";
  assert.throws(() => decodeSingleValue("long", bytes("01000000")), corrupt);
  assert.throws(() => decodeSingleValue("int", bytes("0100000000000000")), corrupt);
  assert.throws(() => decodeSingleValue("uuid", bytes("01")), corrupt);
  assert.throws(() => decodeSingleValue("string", bytes("ff")), corrupt);
  assert.throws(() => decodeDecimal(new Uint8Array(0)), corrupt);
});

test("decoded binary values do not share the input's bytes", () => {
  const input = bytes("0102");
  const decoded = decodeSingleValue("binary", input) as Uint8Array;
  input[0] = 9;
  assert.equal(hex(decoded), "0102");
});
