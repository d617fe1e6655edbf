// The schemas that read the spec's JSON documents (table metadata, REST responses) into the
// model, over lib/int64-json.ts's parser: it leaves integer literals outside the safe range as
// bigints and smaller ones as numbers, so a schema widens its int64 fields with BigInt()
// whatever the magnitude.
//
// A document that does not match its schema is a corrupt IcebergError naming the document
// (the file, or the catalog call and request) and the JSON path of each problem.
import { z } from "zod";
import { parseJson } from "../../lib/int64-json.ts";
import { IcebergError } from "../errors.ts";

// Schemas of the spec's JSON values.

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A JSON value as a problem message shows it. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "bigint") return `${value}`;
  if (typeof value === "number") return `${value}`;
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`;
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** A JSON integer of 64 bits, as a bigint (parseJson leaves small ones as numbers). */
export const int64 = z.custom<number | bigint>().transform((value, ctx): bigint => {
  const n = typeof value === "number" && Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof n === "bigint" && n >= INT64_MIN && n <= INT64_MAX) return n;
  ctx.addIssue({ code: "custom", message: `expected a 64-bit integer, got ${describeValue(value)}` });
  return z.NEVER;
});

/** A JSON integer of 32 bits (field ids, schema and spec ids, counts). */
export const int32 = z.custom<number>(
  (value) => typeof value === "number" && Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31,
  { error: (issue) => `expected a 32-bit integer, got ${describeValue(issue.input)}` },
);

export const string = z.string({ error: (issue) => `expected a string, got ${describeValue(issue.input)}` });

export const boolean = z.boolean({ error: (issue) => `expected true or false, got ${describeValue(issue.input)}` });

/** A map of string to string (table properties, REST config). */
export const stringMap = z.record(z.string(), string, {
  error: (issue) => `expected an object of strings, got ${describeValue(issue.input)}`,
});

/** An array of `item`, saying so when it is something else. */
export function array<T extends z.ZodType>(item: T) {
  return z.array(item, { error: (issue) => `expected an array, got ${describeValue(issue.input)}` });
}

/** A JSON object with these fields; other fields are allowed (and dropped unless the caller keeps them). */
export function object<T extends z.ZodRawShape>(shape: T) {
  return z.looseObject(shape, { error: (issue) => `expected an object, got ${describeValue(issue.input)}` });
}

/**
 * A value read by the schema `pick` chooses from its shape (refused() when none fits): a union
 * whose problems are named by the branch that applies, where zod's own union says only
 * "Invalid input".
 */
export function oneOf<T>(pick: (value: unknown) => z.ZodType<T>): z.ZodType<T> {
  return z.unknown().transform((value, ctx): T => {
    const result = pick(value).safeParse(value);
    if (result.success) return result.data;
    for (const issue of result.error.issues) {
      ctx.addIssue({
        code: "custom",
        message: issue.message,
        path: issue.path,
        ...(issue.code === "custom" && issue.params ? { params: issue.params } : {}),
      });
    }
    return z.NEVER;
  }) as unknown as z.ZodType<T>;
}

/** A schema that refuses every value with `message` (at `path` below it; unsupported rather than corrupt). */
export function refused(message: string, options: { path?: PropertyKey[]; unsupported?: boolean } = {}) {
  return z.unknown().transform((_value, ctx): never => {
    ctx.addIssue({
      code: "custom",
      message,
      ...(options.path ? { path: options.path } : {}),
      ...(options.unsupported ? { params: UNSUPPORTED } : {}),
    });
    return z.NEVER;
  });
}

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The issue a schema's refinement raises for a valid value that floe cannot handle (a type
 * or transform of a newer spec): the document is then unsupported, not corrupt.
 */
export const UNSUPPORTED = { unsupported: true } as const;

/** `schema`'s value of `json`, or an IcebergError naming `document` and the JSON path of each problem. */
export function parseDocument<T extends z.ZodType>(schema: T, json: unknown, document: string): z.output<T> {
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  const issues = result.error.issues;
  const unsupported = issues.some((issue) => issue.code === "custom" && issue.params?.unsupported === true);
  const shown = issues.slice(0, 3).map((issue) => `${jsonPath(issue.path)}: ${issue.message}`);
  if (issues.length > 3) shown.push(`and ${issues.length - 3} more`);
  return fail(unsupported ? "unsupported" : "corrupt", `${document}: ${shown.join("; ")}`);
}

/** parseDocument over JSON text; text that is not JSON is a corrupt document too. */
export function readJsonDocument<T extends z.ZodType>(schema: T, text: string, document: string): z.output<T> {
  let json: unknown;
  try {
    json = parseJson(text);
  } catch (error) {
    throw new IcebergError("corrupt", `${document}: not JSON (${(error as Error).message})`, { cause: error });
  }
  return parseDocument(schema, json, document);
}

function fail(kind: "corrupt" | "unsupported", message: string): never {
  throw new IcebergError(kind, message);
}

/** Where a problem is, in the spec's field names: `snapshots[0].snapshot-id`, `properties["a b"]`. */
export function jsonPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(String(segment)))
      text += text === "" ? String(segment) : `.${String(segment)}`;
    else text += `[${JSON.stringify(String(segment))}]`;
  }
  return text === "" ? "(the document)" : text;
}
