// Partition transforms against the spec's published values (Appendix B's hashes, the truncate
// table's examples) and the calendar rules (floored units before 1970).
import assert from "node:assert/strict";
import { test } from "node:test";
import { hashBytes, hashInt, hashLong } from "#src/iceberg/spec/murmur3.ts";
import type { Transform } from "#src/iceberg/spec/partition-spec.ts";
import type { SingleValue } from "#src/iceberg/spec/single-value.ts";
import {
  applyTransform,
  bucketHash,
  partitionFieldName,
  transformApplies,
  truncatedUtf8Length,
} from "#src/iceberg/spec/transform.ts";
import { decimal, fixed, type PrimitiveType } from "#src/iceberg/spec/types.ts";

const micros = (iso: string, extraMicros = 0n) => BigInt(Date.parse(iso)) * 1000n + extraMicros;
const days = (iso: string) => Date.parse(iso) / 86_400_000;

test("Appendix B: the hash of every bucketable type's test value", () => {
  const cases: [PrimitiveType, SingleValue, number][] = [
    ["int", 34, 2017239379],
    ["long", 34n, 2017239379],
    [decimal(9, 2), 1420n, -500754589],
    ["date", days("2017-11-16T00:00:00Z"), -653330422],
    ["time", 81_068_000_000n, -662762989],
    ["timestamp", micros("2017-11-16T22:31:08Z"), -2047944441],
    ["timestamp", micros("2017-11-16T22:31:08Z", 1n), -1207196810],
    ["timestamptz", micros("2017-11-16T14:31:08-08:00"), -2047944441],
    ["timestamptz", micros("2017-11-16T14:31:08-08:00", 1n), -1207196810],
    ["timestamp_ns", micros("2017-11-16T22:31:08Z") * 1000n, -2047944441],
    ["timestamp_ns", micros("2017-11-16T22:31:08Z", 1n) * 1000n + 1n, -1207196810],
    ["timestamptz_ns", micros("2017-11-16T22:31:08Z", 1n) * 1000n + 1n, -1207196810],
    ["string", "iceberg", 1210000089],
    ["uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7", 1488055340],
    [fixed(4), Uint8Array.of(0, 1, 2, 3), -188683207],
    ["binary", Uint8Array.of(0, 1, 2, 3), -188683207],
  ];
  for (const [type, value, hash] of cases) {
    assert.equal(bucketHash(type, value), hash, `${JSON.stringify(type)} ${String(value)}`);
  }
});

test("murmur3: an int hashes as its long, negative ones included; every tail length", () => {
  for (const v of [0, 1, -1, 34, -34, 2147483647, -2147483648]) assert.equal(hashInt(v), hashLong(BigInt(v)), `${v}`);
  // Appendix B's float row: 1.0D is hashLong(doubleToLongBits(1.0)) = hashLong(0x3ff0000000000000).
  assert.equal(hashLong(0x3ff0000000000000n), -142385009);
  assert.equal(hashLong(0n), 1669671676);
  // The bytes of "iceberg" are 7: one block and a tail of 3; a window of a larger buffer hashes the same.
  const padded = new TextEncoder().encode("xxicebergyy");
  assert.equal(hashBytes(padded, 2, 9), 1210000089);
  assert.equal(hashBytes(new Uint8Array(0)), 0);
});

test("bucket[N]: the hash's sign bit discarded, mod N", () => {
  const bucket = (n: number): Transform => ({ kind: "bucket", buckets: n });
  // -2047944441 & MAX_VALUE = 99539207; % 100 = 7
  assert.equal(applyTransform(bucket(100), "timestamp", micros("2017-11-16T22:31:08Z")), 99539207 % 100);
  assert.equal(applyTransform(bucket(100), "long", 34n), 2017239379 % 100);
  assert.equal(applyTransform(bucket(16), "string", "iceberg"), 1210000089 % 16);
  assert.equal(applyTransform(bucket(16), "string", null), null);
});

test("truncate[W]: the spec's table of examples", () => {
  const truncate = (w: number): Transform => ({ kind: "truncate", width: w });
  assert.equal(applyTransform(truncate(10), "int", 1), 0);
  assert.equal(applyTransform(truncate(10), "int", -1), -10);
  assert.equal(applyTransform(truncate(10), "int", 10), 10);
  assert.equal(applyTransform(truncate(10), "long", 1n), 0n);
  assert.equal(applyTransform(truncate(10), "long", -1n), -10n);
  assert.equal(applyTransform(truncate(50), decimal(9, 2), 1065n), 1050n);
  assert.equal(applyTransform(truncate(3), "string", "iceberg"), "ice");
  assert.equal(applyTransform(truncate(3), "string", "ic"), "ic");
  // Code points, not UTF-16 units: an emoji is one.
  assert.equal(applyTransform(truncate(2), "string", "😀é😀"), "😀é");
  assert.deepEqual(applyTransform(truncate(3), "binary", Uint8Array.of(1, 2, 3, 4, 5)), Uint8Array.of(1, 2, 3));
  const utf8 = new TextEncoder().encode("😀é😀");
  assert.equal(truncatedUtf8Length(utf8, 0, utf8.length, 2), 6);
  assert.equal(truncatedUtf8Length(utf8, 0, utf8.length, 5), utf8.length);
});

test("year, month, day, hour: since 1970, floored before it", () => {
  const ts = micros("2017-11-16T22:31:08Z");
  const t = (kind: "year" | "month" | "day" | "hour"): Transform => ({ kind });
  assert.equal(applyTransform(t("year"), "timestamptz", ts), 47);
  assert.equal(applyTransform(t("month"), "timestamptz", ts), 47 * 12 + 10);
  assert.equal(applyTransform(t("day"), "timestamptz", ts), 17486);
  assert.equal(applyTransform(t("hour"), "timestamptz", ts), 17486 * 24 + 22);
  assert.equal(applyTransform(t("day"), "timestamp_ns", ts * 1000n), 17486);
  assert.equal(applyTransform(t("year"), "date", 17486), 47);
  assert.equal(applyTransform(t("month"), "date", 17486), 574);
  assert.equal(applyTransform(t("day"), "date", 17486), 17486);
  const justBefore = -1n;
  assert.equal(applyTransform(t("day"), "timestamp", justBefore), -1);
  assert.equal(applyTransform(t("hour"), "timestamp", justBefore), -1);
  assert.equal(applyTransform(t("month"), "timestamp", justBefore), -1);
  assert.equal(applyTransform(t("year"), "timestamp", justBefore), -1);
  assert.equal(applyTransform(t("month"), "date", days("1969-01-31T00:00:00Z")), -12);
  assert.equal(applyTransform(t("year"), "date", days("2000-02-29T00:00:00Z")), 30);
  assert.equal(applyTransform(t("month"), "date", days("2000-03-01T00:00:00Z")), 30 * 12 + 2);
  // A day boundary exactly, and a last microsecond of a day far from 1970.
  assert.equal(applyTransform(t("day"), "timestamp", 86_400_000_000n), 1);
  assert.equal(applyTransform(t("day"), "timestamp", 86_400_000_000n * 100_000n - 1n), 99_999);
  assert.equal(applyTransform(t("hour"), "timestamp", -(2n ** 62n)), Number(-(2n ** 62n) / 3_600_000_000n) - 1);
});

test("every day of four centuries: year and month agree with Date", () => {
  for (let d = -80_000; d < 80_000; d += 1) {
    const date = new Date(d * 86_400_000);
    const year = date.getUTCFullYear() - 1970;
    assert.equal(applyTransform({ kind: "year" }, "date", d), year);
    if (d % 7 === 0) assert.equal(applyTransform({ kind: "month" }, "date", d), year * 12 + date.getUTCMonth());
  }
});

test("which source types each transform takes (spec table)", () => {
  const all: PrimitiveType[] = [
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "timestamp_ns",
    "timestamptz_ns",
    "string",
    "uuid",
    "binary",
    decimal(9, 2),
    fixed(4),
  ];
  const takes = (t: Transform) => all.filter((type) => transformApplies(t, type)).map((x) => JSON.stringify(x));
  const names = (...types: PrimitiveType[]) => types.map((x) => JSON.stringify(x));
  assert.deepEqual(takes({ kind: "identity" }), names(...all));
  assert.deepEqual(
    takes({ kind: "bucket", buckets: 4 }),
    names(
      "int",
      "long",
      "date",
      "time",
      "timestamp",
      "timestamptz",
      "timestamp_ns",
      "timestamptz_ns",
      "string",
      "uuid",
      "binary",
      decimal(9, 2),
      fixed(4),
    ),
  );
  assert.deepEqual(takes({ kind: "truncate", width: 4 }), names("int", "long", "string", "binary", decimal(9, 2)));
  const dated = names("date", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns");
  assert.deepEqual(takes({ kind: "year" }), dated);
  assert.deepEqual(takes({ kind: "day" }), dated);
  assert.deepEqual(takes({ kind: "hour" }), dated.slice(1));
  assert.equal(
    transformApplies({ kind: "identity" }, { kind: "list", elementId: 2, elementRequired: false, element: "int" }),
    false,
  );
});

test("partition field names as Java's PartitionSpec.Builder gives them", () => {
  assert.equal(partitionFieldName("id", { kind: "bucket", buckets: 16 }), "id_bucket");
  assert.equal(partitionFieldName("name", { kind: "truncate", width: 4 }), "name_trunc");
  assert.equal(partitionFieldName("ts", { kind: "day" }), "ts_day");
  assert.equal(partitionFieldName("ts", { kind: "hour" }), "ts_hour");
  assert.equal(partitionFieldName("region", { kind: "identity" }), "region");
});
