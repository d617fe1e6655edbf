// Which strings are timestamps, and their microseconds since the epoch (UTC).
import assert from "node:assert/strict";
import { test } from "node:test";
import { timestampMicros } from "#src/decode/timestamp.ts";

const micros = (iso: string, extra = 0) => Date.parse(iso) * 1000 + extra;

test("offsets are applied: +05:30 is five and a half hours before UTC", () => {
  assert.equal(timestampMicros("2026-10-29T15:22:04+00:00"), micros("2026-10-29T15:22:04Z"));
  assert.equal(timestampMicros("2026-10-29T15:22:04Z"), micros("2026-10-29T15:22:04Z"));
  assert.equal(timestampMicros("2026-10-29T15:22:04+05:30"), micros("2026-10-29T09:52:04Z"));
  assert.equal(timestampMicros("2026-10-29T15:22:04-08:00"), micros("2026-10-29T23:22:04Z"));
  assert.equal(timestampMicros("2026-10-29 15:22:04+0530"), micros("2026-10-29T09:52:04Z"));
  assert.equal(timestampMicros("2026-10-29 15:22:04+00"), micros("2026-10-29T15:22:04Z"));
  assert.equal(timestampMicros("2026-10-29t15:22:04z"), micros("2026-10-29T15:22:04Z"));
});

test("fractions up to microseconds are kept, below are truncated toward the past", () => {
  assert.equal(timestampMicros("2026-10-29T15:22:04.5Z"), micros("2026-10-29T15:22:04Z", 500_000));
  assert.equal(timestampMicros("2026-10-29T15:22:04.123456Z"), micros("2026-10-29T15:22:04Z", 123_456));
  assert.equal(timestampMicros("2026-10-29T15:22:04.123456789Z"), micros("2026-10-29T15:22:04Z", 123_456));
  assert.equal(timestampMicros("1969-12-31T23:59:59.999999999Z"), -1);
});

test("dates before 1970 and leap days", () => {
  assert.equal(timestampMicros("1900-01-01T00:00:00Z"), micros("1900-01-01T00:00:00Z"));
  assert.equal(timestampMicros("2024-02-29T12:00:00Z"), micros("2024-02-29T12:00:00Z"));
  assert.equal(timestampMicros("2000-02-29T00:00:00Z"), micros("2000-02-29T00:00:00Z"));
});

test("beyond the safe-integer range the microseconds are a bigint", () => {
  assert.equal(timestampMicros("9999-12-31T23:59:59.999999Z"), 253402300799999999n);
  assert.equal(timestampMicros("0001-01-01T00:00:00Z"), -62135596800000000n);
});

test("strings that are not instants stay strings", () => {
  for (const text of [
    "2026-10-29T15:22:04", // no offset: local time somewhere
    "2026-10-29", // a date
    "2026-10-29T15:22Z", // no seconds
    "2026-13-01T00:00:00Z",
    "2023-02-29T00:00:00Z",
    "1900-02-29T00:00:00Z",
    "2026-10-29T24:00:00Z",
    "2026-10-29T23:59:60Z", // leap second
    "2026-10-29T15:22:04.Z",
    "2026-10-29T15:22:04.1234567890Z",
    "2026-10-29T15:22:04+5:30",
    "2026-10-29T15:22:04+05:3",
    "2026-10-29T15:22:04+24:00",
    "2026-10-29T15:22:04Z ",
    "2026-10-29X15:22:04Z",
    "２026-10-29T15:22:04Z",
    "Headphones",
  ]) {
    assert.equal(timestampMicros(text), undefined, text);
  }
});
