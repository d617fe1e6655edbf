// Iceberg metadata carries int64s (snapshot ids, sequence numbers, row ids) that do not fit a
// JS number. Parsing keeps every integer literal outside the safe range as a bigint (reading
// the literal's source text, not the rounded double); writing emits bigints as bare literals.
// Model parsers then widen the int64 fields with BigInt(), whatever the magnitude.

type Reviver = (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown;

const keepLargeIntegers: Reviver = (_key, value, context) => {
  if (typeof value === "number" && !Number.isSafeInteger(value) && context.source && /^-?\d+$/.test(context.source)) {
    return BigInt(context.source);
  }
  return value;
};

export function parseJson(text: string): unknown {
  return JSON.parse(text, keepLargeIntegers as Parameters<typeof JSON.parse>[1]);
}

declare global {
  interface JSON {
    rawJSON(text: string): unknown;
  }
}

export function stringifyJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? JSON.rawJSON(v.toString()) : v), indent);
}

/** Reads an int64 field that a parser may have left as a number (small) or a bigint (large). */
export function int64(value: unknown, what: string): bigint {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
  if (typeof value === "string" && /^-?\d+$/.test(value)) return BigInt(value);
  throw new TypeError(`${what}: expected an int64, got ${JSON.stringify(String(value))}`);
}

export function optionalInt64(value: unknown, what: string): bigint | undefined {
  return value === undefined || value === null ? undefined : int64(value, what);
}
