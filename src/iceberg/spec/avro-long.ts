// Avro longs are int64 (Avro spec, "Primitive Types"), and Iceberg's long maps to Avro's long:
// beyond 2^53 a JavaScript number loses digits, so every Avro type floe builds reads and writes
// longs as bigint.
import { Buffer } from "node:buffer";
import avsc from "avsc";

/** avsc's long as a bigint. */
export const bigintLong = avsc.types.LongType.__with({
  fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
  toBuffer: (n: bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigInt64LE(n);
    return buf;
  },
  fromJSON: (x: string | number | bigint) => BigInt(x),
  toJSON: (n: bigint) => n.toString(),
  isValid: (n: unknown) => typeof n === "bigint",
  compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
});

/**
 * The `typeHook` of avsc.Type.forSchema that makes every long a bigint: both the `"long"`
 * reference and `{"type": "long", "logicalType": ...}` (timestamps, times) are int64s.
 */
export function bigintLongHook(schema: avsc.Schema): avsc.Type | undefined {
  return schema === "long" || (schema as { type?: unknown }).type === "long" ? bigintLong : undefined;
}
