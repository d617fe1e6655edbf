// Binary single-value serialization (spec Appendix D), the form of lower/upper bounds in
// manifests and of partition summaries:
//   boolean                       1 byte, 0x00 false, anything else true
//   int, date                     4-byte little-endian
//   long, time, timestamp(tz)(_ns) 8-byte little-endian
//   float, double                 IEEE 754, 4 / 8 bytes little-endian
//   string                        UTF-8 bytes, no length
//   uuid                          16 bytes big-endian (the RFC 4122 byte order of the text form)
//   fixed(L), binary              the bytes themselves
//   decimal(P, S)                 unscaled value, two's-complement big-endian, fewest bytes
// Nested types have no single-value form.
//
// Values in JS: boolean; number for int, date, float, double; bigint for the 64-bit types
// (a safe-integer number is accepted on encode); string; uuid as its text form (a 16-byte
// Uint8Array is accepted on encode); Uint8Array for fixed and binary; the unscaled bigint for
// decimal. Encoding a value of the wrong JS type is a bug of the caller (TypeError, RangeError);
// decoding bytes that are no value of the type is a corrupt file (IcebergError).
import { IcebergError } from "../errors.ts";
import { isInt64, type PrimitiveType, typeToString } from "./types.ts";

export type SingleValue = boolean | number | bigint | string | Uint8Array;

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder("utf-8", { fatal: true });

export function encodeSingleValue(type: PrimitiveType, value: SingleValue): Uint8Array {
  if (typeof type === "object") {
    if (type.kind === "decimal") return encodeDecimal(int64Like(value, type));
    const bytes = asBytes(value, type);
    if (bytes.length !== type.length) throw new RangeError(`${typeToString(type)} value has ${bytes.length} bytes`);
    return bytes.slice();
  }
  if (isInt64(type)) {
    const out = new Uint8Array(8);
    new DataView(out.buffer).setBigInt64(0, BigInt.asIntN(64, int64Like(value, type)), true);
    return out;
  }
  switch (type) {
    case "boolean":
      if (typeof value !== "boolean") throw mismatch(type, value);
      return Uint8Array.of(value ? 1 : 0);
    case "int":
    case "date": {
      if (typeof value !== "number" || !Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff) {
        throw mismatch(type, value);
      }
      const out = new Uint8Array(4);
      new DataView(out.buffer).setInt32(0, value, true);
      return out;
    }
    case "float": {
      if (typeof value !== "number") throw mismatch(type, value);
      const out = new Uint8Array(4);
      new DataView(out.buffer).setFloat32(0, value, true);
      return out;
    }
    case "double": {
      if (typeof value !== "number") throw mismatch(type, value);
      const out = new Uint8Array(8);
      new DataView(out.buffer).setFloat64(0, value, true);
      return out;
    }
    case "string":
      if (typeof value !== "string") throw mismatch(type, value);
      return utf8.encode(value);
    case "uuid":
      if (typeof value === "string") return uuidToBytes(value);
      if (asBytes(value, type).length !== 16)
        throw new RangeError(`uuid value has ${asBytes(value, type).length} bytes`);
      return asBytes(value, type);
    case "binary":
      return asBytes(value, type).slice();
  }
}

export function decodeSingleValue(type: PrimitiveType, bytes: Uint8Array): SingleValue {
  if (typeof type === "object") {
    if (type.kind === "decimal") return decodeDecimal(bytes);
    return exactly(type.length, bytes, type).slice();
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isInt64(type)) {
    exactly(8, bytes, type);
    return view.getBigInt64(0, true);
  }
  switch (type) {
    case "boolean":
      return exactly(1, bytes, type)[0] !== 0;
    case "int":
    case "date":
      exactly(4, bytes, type);
      return view.getInt32(0, true);
    case "float":
      exactly(4, bytes, type);
      return view.getFloat32(0, true);
    case "double":
      exactly(8, bytes, type);
      return view.getFloat64(0, true);
    case "string":
      try {
        return utf8Strict.decode(bytes);
      } catch {
        throw new IcebergError("corrupt", "string single value is not valid UTF-8");
      }
    case "uuid":
      return bytesToUuid(exactly(16, bytes, type));
    case "binary":
      return bytes.slice();
  }
}

/** Two's-complement big-endian with the fewest bytes that keep the sign (0 is one 0x00 byte). */
export function encodeDecimal(unscaled: bigint): Uint8Array {
  let length = 1;
  // n bytes hold -2^(8n-1) .. 2^(8n-1)-1
  while (unscaled >= 1n << BigInt(8 * length - 1) || unscaled < -(1n << BigInt(8 * length - 1))) length++;
  const out = new Uint8Array(length);
  let rest = BigInt.asUintN(8 * length, unscaled);
  for (let i = length - 1; i >= 0; i--) {
    out[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return out;
}

export function decodeDecimal(bytes: Uint8Array): bigint {
  if (bytes.length === 0) throw new IcebergError("corrupt", "decimal value has no bytes");
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return BigInt.asIntN(8 * bytes.length, value);
}

const uuidPattern = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/** The 16 bytes of a UUID in its text form (with or without dashes), most significant first. */
export function uuidToBytes(text: string): Uint8Array {
  if (!uuidPattern.test(text)) throw new TypeError(`not a UUID: ${JSON.stringify(text)}`);
  const hex = text.replaceAll("-", "");
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function bytesToUuid(bytes: Uint8Array): string {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function int64Like(value: SingleValue, type: PrimitiveType): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return BigInt(value);
  throw mismatch(type, value);
}

function asBytes(value: SingleValue, type: PrimitiveType): Uint8Array {
  if (value instanceof Uint8Array) return value;
  throw mismatch(type, value);
}

/** Decoding: bytes of another length than the type's are not a value of it. */
function exactly(length: number, bytes: Uint8Array, type: PrimitiveType): Uint8Array {
  if (bytes.length !== length) {
    throw new IcebergError("corrupt", `${typeToString(type)} single value needs ${length} bytes, got ${bytes.length}`);
  }
  return bytes;
}

function mismatch(type: PrimitiveType, value: SingleValue): TypeError {
  const shown = typeof value === "bigint" ? `${value}n` : value instanceof Uint8Array ? "bytes" : JSON.stringify(value);
  return new TypeError(`${shown} is not a ${typeToString(type)} value`);
}
