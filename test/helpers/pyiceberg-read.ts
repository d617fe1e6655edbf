// PyIceberg on its own, for tables in stores the shared readers process is not set up for
// (gs:// through PyArrow's GcsFileSystem, wasbs:// through adlfs): one Python process per read.
import { execFile } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { readerEnv } from "../../dev/services/readers.ts";

const script = join(dirname(fileURLToPath(import.meta.url)), "pyiceberg-read.py");

export async function pyicebergRows(
  catalog: Record<string, string>,
  table: string,
  columns: string[],
  python = readerEnv.python,
): Promise<Record<string, unknown>[]> {
  const { stdout } = await promisify(execFile)(python, [script, JSON.stringify({ catalog, table, columns })], {
    maxBuffer: 64 * 1024 * 1024,
    // No Google or Azure credential discovery: everything the reader needs is in `catalog`.
    env: { ...process.env, GOOGLE_APPLICATION_CREDENTIALS: "", NO_GCE_CHECK: "True" },
  });
  return JSON.parse(stdout) as Record<string, unknown>[];
}

/**
 * The rows PyIceberg reads with the row filter `column = bytes` (bytes as hex; bytes come back as
 * hex), and how many data files its scan planned after pruning by their bounds.
 */
export async function pyicebergEqualBytes(
  catalog: Record<string, string>,
  table: string,
  columns: string[],
  equalBytes: { column: string; hex: string },
  python = readerEnv.python,
): Promise<{ rows: Record<string, unknown>[]; files: number }> {
  const { stdout } = await promisify(execFile)(
    python,
    [script, JSON.stringify({ catalog, table, columns, equalBytes })],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout) as { rows: Record<string, unknown>[]; files: number };
}
