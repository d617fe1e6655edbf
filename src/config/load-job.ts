// Loading a job file: YAML -> ${ENV} interpolation -> zod validation (job-schema.ts) ->
// paths resolved against the job file's folder. Every problem found is reported at once, each
// with its YAML path and line (`job.yaml:14:5: streams.orders.dedup_keys: required when mode
// is upsert`), in one ConfigError.
import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import type { z } from "zod";
import type { KafkaSecurity, KafkaTls } from "../kafka/security.ts";
import { ConfigError, type ConfigIssue, type ConfigPath, formatPath } from "./config-error.ts";
import type { CatalogSettings } from "./destination.ts";
import { interpolateEnv } from "./env-interpolation.ts";
import type { Job } from "./job.ts";
import { jobFileSchema } from "./job-schema.ts";
import { isSecretPath } from "./secret.ts";

export interface LoadJobOptions {
  /** Variables for ${...}; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * For commands that read the job's state but connect to nothing (history, status's run
   * part): a secret whose variable is not set is no error. `missing` hears of each; the Secret
   * then holds a placeholder that no client is ever given.
   */
  readonly secretsOptional?: { readonly missing?: (path: string, name: string) => void };
}

/** What an unset secret's Secret holds under secretsOptional. */
export const UNSET_SECRET = "(unset)";

export async function loadJob(file: string, options: LoadJobOptions = {}): Promise<Job> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new ConfigError(file, [{ path: [], message: `cannot read the job file: ${(error as Error).message}` }]);
  }
  return parseJob(text, file, options);
}

/** Parses job file text; `file` names it in messages, and relative paths are resolved against its folder. */
export function parseJob(text: string, file: string, options: LoadJobOptions = {}): Job {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      file,
      doc.errors.map((e) => {
        const { line, col } = lines.linePos(e.pos[0]);
        return { path: [], message: e.message, line, column: col };
      }),
    );
  }
  // In the order of the file, so that the list reads top to bottom.
  const located = (issues: readonly Omit<ConfigIssue, "line" | "column">[]): ConfigIssue[] =>
    issues
      .map((issue) => ({ ...issue, ...locate(doc.contents, lines, issue.path) }))
      .sort((a, b) => (a.line ?? 0) - (b.line ?? 0));

  const data: unknown = doc.toJS();
  if (data === null || data === undefined)
    throw new ConfigError(file, [{ path: [], message: "the job file is empty" }]);
  const optional = options.secretsOptional;
  const interpolated = interpolateEnv(data, options.env ?? process.env, undefined, {
    ...(optional && {
      missing: (path, name) => {
        if (!isSecretPath(path)) return undefined;
        optional.missing?.(formatPath(path), name);
        return UNSET_SECRET;
      },
    }),
  });
  if (interpolated.issues.length > 0) throw new ConfigError(file, located(interpolated.issues));

  const parsed = jobFileSchema.safeParse(interpolated.value, { reportInput: true });
  if (!parsed.success) throw new ConfigError(file, located(parsed.error.issues.flatMap((i) => describeIssue(i, []))));
  return withResolvedPaths(parsed.data, dirname(file));
}

/**
 * A job from data already interpolated (a job kept in a store rather than a file): validated by
 * the same schema, relative paths resolved against `folder`; problems name their paths.
 */
export function jobFromData(data: unknown, name: string, folder: string): Job {
  const parsed = jobFileSchema.safeParse(data, { reportInput: true });
  if (!parsed.success)
    throw new ConfigError(
      name,
      parsed.error.issues.flatMap((i) => describeIssue(i, [])),
    );
  return withResolvedPaths(parsed.data, folder);
}

type ZodIssue = z.core.$ZodIssue;

/** A zod issue in the words of the job file; a union's issues come from the branch the value was meant for. */
export function describeIssue(issue: ZodIssue, prefix: ConfigPath): { path: ConfigPath; message: string }[] {
  const path = [...prefix, ...(issue.path as (string | number)[])];
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return [{ path, message: "required" }];
      return [
        { path, message: `expected ${expectedName(issue.expected)}, got ${jsonTypeOf(issue.input, isSecret(path))}` },
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
      if (meant.length === 1) return meant[0]!.flatMap((i) => describeIssue(i, path));
      return [{ path, message: unionExpectation(issue.errors) }];
    }
    case "invalid_key":
      return issue.issues.flatMap((i) => describeIssue(i, path)).map((d) => ({ ...d, message: `key: ${d.message}` }));
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

/** `withoutValue` for a secret's key: a password written as digits is a number, and the message must not print it. */
function jsonTypeOf(value: unknown, withoutValue = false): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return withoutValue ? `a ${typeof value}` : `${typeof value} ${show(value)}`;
}

function isSecret(path: ConfigPath): boolean {
  return isSecretPath(path);
}

function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/**
 * The line and column of `path` in the document: its value, or its key when the value is
 * empty; for a path that is not there (a missing key), the key of its deepest present parent.
 */
function locate(root: unknown, lines: LineCounter, path: ConfigPath): { line?: number; column?: number } {
  let node = root as Node | null | undefined;
  let key: Node | undefined;
  let found = true;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      if (!pair) {
        found = false;
        break;
      }
      key = pair.key as Node;
      node = pair.value as Node | null;
    } else if (isSeq(node) && typeof segment === "number" && node.items[segment]) {
      node = node.items[segment] as Node;
      key = node;
    } else {
      found = false;
      break;
    }
  }
  const place = found && node?.range ? node : (key ?? (root as Node | undefined));
  const offset = place?.range?.[0];
  if (offset === undefined) return {};
  const { line, col } = lines.linePos(offset);
  return { line, column: col };
}

/** Relative paths in the job file are relative to its folder, wherever floe runs from. */
function withResolvedPaths(job: Job, folder: string): Job {
  // PEM text (a TLS file pasted in, as the UI stores it) is no path.
  const path = (p: string) => (p.trimStart().startsWith("-----BEGIN") || isAbsolute(p) ? p : resolve(folder, p));
  const tls = (t: KafkaTls): KafkaTls => ({
    ...t,
    ca: t.ca === undefined ? undefined : path(t.ca),
    clientCertificate: t.clientCertificate && {
      cert: path(t.clientCertificate.cert),
      key: path(t.clientCertificate.key),
    },
  });
  const given = job.source.security;
  const security: KafkaSecurity = "tls" in given && given.tls ? { ...given, tls: tls(given.tls) } : given;
  // A warehouse or database given as a URI (s3://, gs://, file:) is kept; a path is the job file's.
  const isUri = (value: string) => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(value);
  const sql = job.destination.catalog.type === "sql" ? job.destination.catalog : undefined;
  const catalog: CatalogSettings =
    sql === undefined
      ? job.destination.catalog
      : {
          type: "sql",
          warehouse: /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(sql.warehouse) ? sql.warehouse : path(sql.warehouse),
          ...(sql.uri === undefined ? {} : { uri: isUri(sql.uri) ? sql.uri : path(sql.uri) }),
        };
  const registry = job.source.schemaRegistry;
  const registryCa = registry?.tls?.ca;
  const schemaRegistry =
    registry && registryCa !== undefined && !registryCa.startsWith("-----BEGIN")
      ? { ...registry, tls: { ...registry.tls, ca: path(registryCa) } }
      : registry;
  return {
    ...job,
    source: { ...job.source, security, ...(schemaRegistry && { schemaRegistry }) },
    destination: { ...job.destination, catalog },
  };
}
