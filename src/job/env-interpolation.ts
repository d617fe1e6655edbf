// `${ENV_VAR}` in the job file's values, so that secrets stay out of it. Substitution happens
// in the parsed values, not in the text: a value with a colon or a quote cannot break the YAML,
// and a missing variable is reported with the config path that uses it. The result is always
// a string (write `password: ${KAFKA_PASSWORD}`, it stays a string even if the password is
// digits). `$${X}` is a literal `${X}`; a `$` before anything else is itself; a `${` that does
// not close over a variable name is an error rather than text, because it is nearly always a
// typo.
import type { ConfigIssue, ConfigPath } from "./config-error.ts";

type Environment = Readonly<Record<string, string | undefined>>;

export interface InterpolationOptions {
  /** A value for a variable that is not set, at `path`; undefined: the missing variable is an issue. */
  readonly missing?: (path: ConfigPath, name: string) => string | undefined;
}

const REFERENCE = /\$(\$?)\{([^}]*)\}?/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The value with every reference replaced, and one issue per missing variable or malformed
 * reference. With `allowed` (floe serve, whose records UI users write), only the names it holds
 * are read from the environment: any other reference is an issue, and its value is never read.
 */
export function interpolateEnv(
  value: unknown,
  env: Environment,
  allowed?: ReadonlySet<string>,
  options: InterpolationOptions = {},
): { value: unknown; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const visit = (node: unknown, path: ConfigPath): unknown => {
    if (typeof node === "string")
      return node.includes("$") ? substitute(node, path, env, issues, allowed, options) : node;
    if (Array.isArray(node)) return node.map((item, i) => visit(item, [...path, i]));
    if (typeof node === "object" && node !== null) {
      // fromEntries defines own properties: a key named __proto__ stays a key.
      return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, visit(item, [...path, key])]));
    }
    return node;
  };
  return { value: visit(value, []), issues };
}

function substitute(
  text: string,
  path: ConfigPath,
  env: Environment,
  issues: ConfigIssue[],
  allowed: ReadonlySet<string> | undefined,
  options: InterpolationOptions,
): string {
  return text.replace(REFERENCE, (match: string, escaped: string, name: string) => {
    if (escaped) return match.slice(1);
    if (!match.endsWith("}") || !VARIABLE_NAME.test(name)) {
      issues.push({ path, message: `${match} is not a variable reference; write \${NAME}, or $\${...} for the text` });
      return match;
    }
    if (allowed !== undefined && !allowed.has(name)) {
      issues.push({
        path,
        message: `\${${name}}: floe serve gives its records no environment variable unless its operator allows it (floe serve --allow-env ${name}, or FLOE_SERVE_ALLOW_ENV)`,
      });
      return match;
    }
    const value = env[name] ?? options.missing?.(path, name);
    if (value === undefined) {
      issues.push({ path, message: `environment variable ${name} is not set` });
      return match;
    }
    return value;
  });
}
