// Loading a job file: YAML -> ${ENV} interpolation -> zod validation (job-schema.ts) ->
// paths resolved against the job file's folder. Every problem found is reported at once, each
// with its YAML path and line (`job.yaml:14:5: streams.orders.dedup_keys: required when mode
// is upsert`), in one ConfigError.
import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import type { KafkaSecurity, KafkaTls } from "../kafka/security.ts";
import { describeIssue } from "../lib/zod-issues.ts";
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
  if (!parsed.success)
    throw new ConfigError(
      file,
      located(parsed.error.issues.flatMap((i) => describeIssue(i, [], { hidesValue: isSecretPath }))),
    );
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
      parsed.error.issues.flatMap((i) => describeIssue(i, [], { hidesValue: isSecretPath })),
    );
  return withResolvedPaths(parsed.data, folder);
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
