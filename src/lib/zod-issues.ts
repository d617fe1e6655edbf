// A zod issue in the words of a user who wrote YAML or JSON (a job file, a stored record, an
// API request): "required", "unknown key", "expected a list, got a mapping", at the path of the
// value. zod's own messages speak of its types ("Invalid input: expected array, received
// object") and of a union only as "Invalid input"; here a union's issues come from the branch
// the value was meant for.
import type { z } from "zod";

export type IssuePath = readonly (string | number)[];

export interface DescribedIssue {
  path: IssuePath;
  message: string;
}

export interface DescribeOptions {
  /**
   * The paths whose value a message must not print (a secret's: a password written as digits
   * is a number, and "expected a string, got number 1234" would show it). Default: none.
   */
  readonly hidesValue?: (path: IssuePath) => boolean;
}

type ZodIssue = z.core.$ZodIssue;

/** The issue as messages at the paths it concerns, below `prefix`. */
export function describeIssue(issue: ZodIssue, prefix: IssuePath, options: DescribeOptions = {}): DescribedIssue[] {
  const path = [...prefix, ...(issue.path as (string | number)[])];
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return [{ path, message: "required" }];
      return [
        {
          path,
          message: `expected ${expectedName(issue.expected)}, got ${jsonTypeOf(issue.input, options.hidesValue?.(path) ?? false)}`,
        },
      ];
    case "unrecognized_keys":
      return issue.keys.map((key) => ({ path: [...path, key], message: "unknown key" }));
    case "invalid_value":
      if (issue.input === undefined) return [{ path, message: "required" }];
      return [
        { path, message: `expected ${issue.values.map((v) => String(v)).join(" | ")}, got ${show(issue.input)}` },
      ];
    case "invalid_union": {
      if (issue.discriminator !== undefined && "options" in issue) {
        const given = (issue.input as Record<string, unknown> | undefined)?.[issue.discriminator];
        const got = given === undefined ? "" : `, got ${show(given)}`;
        return [{ path, message: `expected ${issue.options?.join(" | ")}${got}` }];
      }
      // The branches whose type the value has (a list for the list branch): their issues say what is wrong inside.
      const meant = issue.errors.filter(
        (branch) => !branch.some((i) => i.code === "invalid_type" && i.path.length === 0),
      );
      if (meant.length === 1) return meant[0]!.flatMap((i) => describeIssue(i, path, options));
      return [{ path, message: unionExpectation(issue.errors) }];
    }
    case "invalid_key":
      return issue.issues
        .flatMap((i) => describeIssue(i, path, options))
        .map((d) => ({ ...d, message: `key: ${d.message}` }));
    default:
      return [{ path, message: issue.message }];
  }
}

function unionExpectation(branches: readonly (readonly ZodIssue[])[]): string {
  const expected = branches.flatMap((b) =>
    b.filter((i) => i.code === "invalid_type").map((i) => expectedName(i.expected)),
  );
  const got = branches[0]?.[0]?.input;
  return `expected ${[...new Set(expected)].join(" or ")}${got === undefined ? "" : `, got ${jsonTypeOf(got)}`}`;
}

function expectedName(expected: string): string {
  return expected === "array"
    ? "a list"
    : expected === "object" || expected === "record"
      ? "a mapping"
      : `a ${expected}`;
}

/** `withoutValue` for a hidden value: its type only. */
function jsonTypeOf(value: unknown, withoutValue = false): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return withoutValue ? `a ${typeof value}` : `${typeof value} ${show(value)}`;
}

function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
