// Columns of text aligned for a terminal: a header, a rule, and the rows; numbers right-aligned.

export interface TextTableOptions {
  /** Indexes of the columns to right-align (numbers). */
  readonly right?: readonly number[];
  /** Put before every line. */
  readonly indent?: string;
}

export function textTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  options: TextTableOptions = {},
): string[] {
  const right = new Set(options.right ?? []);
  const indent = options.indent ?? "";
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    indent +
    widths
      .map((w, i) => (right.has(i) ? (cells[i] ?? "").padStart(w) : (cells[i] ?? "").padEnd(w)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}
