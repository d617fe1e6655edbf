// A Kafka message value as a JSON object record. A bad value is an outcome, not an exception:
// the sync routes it (dead-letter table, fail or skip per stream) and keeps going, so the
// decoder returns what went wrong and why.
//
// Numbers. JSON.parse gives doubles, which is exact for integers up to 2^53 and loses the way a
// number was written. Two things depend on that: integers beyond 2^53 (ids, nanosecond clocks)
// must stay exact, and `1299.0` is a decimal that happens to be whole: a field whose sample
// holds only such values is a double column, not a long one (Python writes floats that way).
// A regular expression over the text finds the messages where either can happen (a run of 16
// digits; a fraction of zeros or an exponent ending a number); only those are parsed again
// with a reviver that reads each number's source text, which is three times slower.
//
// Two shapes are bad messages although they are valid JSON, because no column can hold them
// as written and a sync must never stop on one:
// - a number beyond the range of a double (1e400, -1e400) or a non-zero number that a double
//   rounds to zero (1e-400), anywhere in the value: JSON.parse makes them ±Infinity and 0, which
//   no Iceberg type holds as the producer wrote them (reason "out-of-range"; an integer beyond
//   the long range is exact as a bigint, and whether its column holds it is schema inference's
//   question). Such a literal has an exponent or at least 309 digits, so the regular expression
//   below always sends it to the reviver, which sees it;
// - a value nested deeper than MAX_NESTING_DEPTH (reason "too-deep"): the JSON text of nested
//   values and JSON.parse's reviver recurse, and overflow the stack a few thousand levels down.
import { parseJson } from "../lib/int64-json.ts";

/** A JSON value as floe holds it: integers beyond 2^53 are bigints, the rest is JSON.parse's. */
export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

/** A message value that is a JSON object: top-level fields become columns. */
export type JsonRecord = { [field: string]: JsonValue };

export type BadMessageKind =
  | "invalid-utf8"
  | "not-json"
  | "not-object"
  | "confluent-framed-without-registry"
  | "too-deep"
  | "out-of-range";

/**
 * Levels of arrays and objects a field's value may have (`[[1]]` has two), as Jackson's default
 * StreamReadConstraints allow. JSON.stringify overflows the stack at about 4,400 levels, and
 * 2,300 with a replacer (Node 24), so the JSON text of every value that passes is safe.
 */
export const MAX_NESTING_DEPTH = 1000;

export interface DecodedRecord {
  readonly kind: "record";
  readonly record: JsonRecord;
  /**
   * Top-level fields whose number was written as a decimal or with an exponent but is whole
   * (`1299.0`, `1e3`): a double to schema inference, though JSON.parse made it an integer.
   * Undefined when there is none, which is nearly always.
   */
  readonly wholeDecimals: ReadonlySet<string> | undefined;
}

/** A null value: a delete of the message's key, not an error. */
export interface Tombstone {
  readonly kind: "tombstone";
}

export interface BadMessage {
  readonly kind: "bad";
  readonly reason: BadMessageKind;
  /** What a person needs to find the problem in the producer; goes into the dead-letter row. */
  readonly detail: string;
}

export type DecodedMessage = DecodedRecord | Tombstone | BadMessage;

export const TOMBSTONE: Tombstone = Object.freeze({ kind: "tombstone" });

/** Confluent wire format: magic byte 0, a 4-byte big-endian schema id, then Avro/Protobuf/JSON. */
const CONFLUENT_MAGIC = 0x00;
const CONFLUENT_HEADER_LENGTH = 5;

/**
 * Where JSON.parse's doubles may not be the whole story; see the header comment. The 16 digits
 * are spelt out: irregexp backtracks on \d{16} at every digit and takes twice as long (the test
 * runs on every message, ~0.18 µs for 170 bytes against ~0.5 µs for JSON.parse).
 */
const NEEDS_SOURCE_TEXT = new RegExp(`${"\\d".repeat(16)}|\\d\\.0+\\s*[,}\\]]|\\d[eE][-+]?\\d+\\s*[,}\\]]`);

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * `imageOf`: where the fields that become columns are, when not at the root (a change event's
 * after image): the object whose whole decimals wholeDecimals names.
 */
export function decodeJsonMessage(value: Uint8Array | null, imageOf?: (root: JsonRecord) => unknown): DecodedMessage {
  if (value === null) return TOMBSTONE;
  if (value.length >= CONFLUENT_HEADER_LENGTH && value[0] === CONFLUENT_MAGIC) {
    // JSON text cannot start with a NUL byte, so this is a schema-registry payload, not JSON.
    const schemaId = new DataView(value.buffer, value.byteOffset, value.byteLength).getUint32(1);
    return bad(
      "confluent-framed-without-registry",
      `value is in Confluent wire format (magic byte 0, schema id ${schemaId}) and the stream reads JSON: ` +
        "set its format: avro, protobuf or json_schema, with source.kafka.schema_registry",
    );
  }
  let text: string;
  try {
    text = utf8.decode(value);
  } catch {
    return bad("invalid-utf8", `value (${value.length} bytes) is not valid UTF-8`);
  }
  let parsed: unknown;
  let wholeDecimals: Set<string> | undefined;
  let outOfRange: OutOfRange | undefined;
  try {
    if (NEEDS_SOURCE_TEXT.test(text)) {
      const result = parseWithSourceText(text, imageOf);
      parsed = result.value;
      wholeDecimals = result.wholeDecimals;
      outOfRange = result.outOfRange;
    } else {
      parsed = JSON.parse(text);
    }
  } catch (error) {
    // The reviver recurses and overflows the stack on deep values; JSON.parse alone does not.
    if (error instanceof RangeError) {
      const plain = parsedOrUndefined(text);
      if (plain !== undefined)
        return tooDeep(typeof plain === "object" ? tooDeepField(plain as JsonRecord) : undefined);
    }
    return bad("not-json", text.length === 0 ? "value is empty" : `value is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return bad("not-object", `value is ${describeJson(parsed)}, not a JSON object`);
  }
  const record = parsed as JsonRecord;
  // Each level takes two characters, [ and ]: a shorter text cannot be too deep.
  if (text.length > 2 * MAX_NESTING_DEPTH) {
    const deep = tooDeepField(record);
    if (deep !== undefined) return tooDeep(deep);
  }
  if (outOfRange !== undefined) {
    const field = outOfRange.holder === record ? outOfRange.key : containingField(record, outOfRange.holder);
    const where = field === undefined ? "a nested value" : `field ${JSON.stringify(field)}`;
    return bad(
      "out-of-range",
      `${where}: the number ${excerpt(outOfRange.source)} is beyond the range of a double (about ±1.8e308, ` +
        "non-zero magnitudes from 5e-324): no Iceberg type holds it; produce it as a string",
    );
  }
  return { kind: "record", record, wholeDecimals };
}

function parsedOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function tooDeep(field?: string): BadMessage {
  const where = field === undefined ? "the value" : `field ${JSON.stringify(field)}`;
  return bad("too-deep", `${where} is nested more than ${MAX_NESTING_DEPTH} levels deep`);
}

/** The first field whose value is nested deeper than MAX_NESTING_DEPTH; a walk with its own stack, not recursion. */
function tooDeepField(record: JsonRecord): string | undefined {
  const values: unknown[] = [];
  const depths: number[] = [];
  for (const name in record) {
    const value = record[name];
    if (typeof value !== "object" || value === null) continue;
    values.push(value);
    depths.push(1);
    while (values.length > 0) {
      const node = values.pop() as Record<string, unknown> | unknown[];
      const depth = depths.pop()!;
      if (depth > MAX_NESTING_DEPTH) return name;
      for (const child of Array.isArray(node) ? node : Object.values(node)) {
        if (typeof child === "object" && child !== null) {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return undefined;
}

/** The top-level field whose value contains `holder` (an object or array met by the reviver). */
function containingField(record: JsonRecord, holder: unknown): string | undefined {
  for (const name in record) {
    const stack: unknown[] = [record[name]];
    while (stack.length > 0) {
      const node = stack.pop();
      if (node === holder) return name;
      if (typeof node !== "object" || node === null) continue;
      for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push(child);
    }
  }
  return undefined;
}

function excerpt(source: string): string {
  return source.length <= 24 ? source : `${source.slice(0, 12)}...${source.slice(-8)} (${source.length} characters)`;
}

function bad(reason: BadMessageKind, detail: string): BadMessage {
  return { kind: "bad", reason, detail };
}

function describeJson(value: unknown): string {
  if (value === null) return "JSON null";
  if (Array.isArray(value)) return "a JSON array";
  return `a JSON ${typeof value === "bigint" ? "number" : typeof value}`;
}

const INTEGER_LITERAL = /^-?\d+$/;
/** A literal whose digits before the exponent are not all zero. */
const NON_ZERO_LITERAL = /^-?[0.]*[1-9]/;

/** A number literal that JSON.parse made ±Infinity, or 0 although it is not zero, and where it was. */
interface OutOfRange {
  holder: unknown;
  key: string;
  source: string;
}

/** The int64-safe parser, looking at each number's source text (see the header comment). */
function parseWithSourceText(
  text: string,
  imageOf: ((root: JsonRecord) => unknown) | undefined,
): {
  value: unknown;
  wholeDecimals: Set<string> | undefined;
  outOfRange: OutOfRange | undefined;
} {
  // The parser visits numbers bottom-up and cannot tell the root's fields from nested ones yet:
  // keep each candidate with its holder, and keep those whose holder turns out to be the root.
  const candidates: { holder: unknown; key: string }[] = [];
  let outOfRange: OutOfRange | undefined;
  const value = parseJson(text, (holder, key, number, source) => {
    if (INTEGER_LITERAL.test(source)) return;
    if (!Number.isFinite(number) || (number === 0 && NON_ZERO_LITERAL.test(source))) {
      outOfRange ??= { holder, key, source };
    } else if (Number.isInteger(number)) {
      candidates.push({ holder, key });
    }
  });
  const image = imageOf !== undefined && isRecord(value) ? imageOf(value) : value;
  const topLevel = candidates.filter((c) => c.holder === image).map((c) => c.key);
  return { value, wholeDecimals: topLevel.length === 0 ? undefined : new Set(topLevel), outOfRange };
}

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
