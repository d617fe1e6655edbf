// What is wrong with a job file, said once per problem as `file:line:col: yaml.path: message`,
// so that a user can go straight to the line.

export type ConfigPath = readonly (string | number)[];

export interface ConfigIssue {
  readonly path: ConfigPath;
  readonly message: string;
  /** 1-based, when the problem has a place in the file. */
  readonly line?: number;
  readonly column?: number;
}

const SHOWN_ISSUES = 10;

export class ConfigError extends Error {
  readonly file: string;
  readonly issues: readonly ConfigIssue[];

  constructor(file: string, issues: readonly ConfigIssue[]) {
    const head = issues.length === 1 ? `${file}: invalid job file` : `${file}: ${issues.length} problems in job file`;
    // One YAML syntax error can cascade into dozens; the first ones are where to look.
    const shown = issues.slice(0, SHOWN_ISSUES).map((issue) => `  ${formatIssue(file, issue)}`);
    if (issues.length > SHOWN_ISSUES) shown.push(`  ... and ${issues.length - SHOWN_ISSUES} more`);
    super(`${head}\n${shown.join("\n")}`);
    this.name = "ConfigError";
    this.file = file;
    this.issues = issues;
  }
}

export function formatIssue(file: string, issue: ConfigIssue): string {
  const place = issue.line === undefined ? file : `${file}:${issue.line}:${issue.column ?? 1}`;
  const path = formatPath(issue.path);
  return path === "" ? `${place}: ${issue.message}` : `${place}: ${path}: ${issue.message}`;
}

/** `streams.orders.dedup_keys[0]`; a key that is not a plain word is quoted: `streams["orders.v1"]`. */
export function formatPath(path: ConfigPath): string {
  let text = "";
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(segment)) text += text === "" ? segment : `.${segment}`;
    else text += `[${JSON.stringify(segment)}]`;
  }
  return text;
}
