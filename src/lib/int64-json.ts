// The one JSON parser and stringifier of floe for values that carry int64s (snapshot ids,
// sequence numbers, row ids, Kafka offsets): JSON.parse and JSON.stringify read and write
// numbers as doubles, which round an int64 past 2^53.
//
// Parsing keeps every integer literal outside the safe range as a bigint, read from the
// literal's source text rather than from the rounded double; smaller ones stay numbers, so a
// reader widens its int64 fields with BigInt() whatever the magnitude. Writing emits bigints as
// bare literals (what the Iceberg spec's JSON wants), or as strings where a reader may be a
// script whose JSON numbers are doubles (floe's --json reports).

/** Called for each number that stays a number (not a bigint), with the object or array holding it. */
export type NumberVisitor = (holder: unknown, key: string, value: number, source: string) => void;

type Reviver = (this: unknown, key: string, value: unknown, context: { source?: string }) => unknown;

const INTEGER_LITERAL = /^-?\d+$/;

export function parseJson(text: string, onNumber?: NumberVisitor): unknown {
  const reviver: Reviver = function (key, value, context) {
    if (typeof value !== "number" || context.source === undefined) return value;
    if (!Number.isSafeInteger(value) && INTEGER_LITERAL.test(context.source)) return BigInt(context.source);
    onNumber?.(this, key, value, context.source);
    return value;
  };
  return JSON.parse(text, reviver as Parameters<typeof JSON.parse>[1]);
}

declare global {
  interface JSON {
    rawJSON(text: string): unknown;
  }
}

export interface StringifyOptions {
  indent?: number;
  /** "numbers" (default): bare integer literals; "strings": "123", for readers whose numbers are doubles. */
  bigints?: "numbers" | "strings";
}

export function stringifyJson(value: unknown, options: StringifyOptions = {}): string {
  const asString = options.bigints === "strings";
  return JSON.stringify(
    value,
    (_key, v) => (typeof v === "bigint" ? (asString ? v.toString() : JSON.rawJSON(v.toString())) : v),
    options.indent,
  );
}
