// The check of a result table before its figure counts: DuckDB, PyIceberg and Spark each read its
// row count, its distinct ids and the rows of a sample of ids, which must match the model of
// what was produced (workload.ts). DuckDB and Spark answer SQL through the readers of the tests
// (dev/readers.ts); PyIceberg scans in a script of its own (pyiceberg_check.py), since the
// readers' PyIceberg returns whole tables and a pre-loaded one has ten million rows.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { type Engine, type Readers, type Row, testRestCatalog } from "../../dev/readers.ts";
import { readerEnv } from "../../dev/services/readers.ts";
import type { OrderFields } from "../orders.ts";
import { catalogUri } from "./catalog.ts";
import type { Expected } from "./workload.ts";

export interface Verdict {
  ok: boolean;
  /** Why the table is wrong, naming the engine and what it read. */
  reasons: string[];
}

interface Reading {
  rows: number;
  ids: number;
  sample: Row[];
}

export async function verify(readers: Readers, namespace: string, table: string, expected: Expected): Promise<Verdict> {
  const sampleIds = [...expected.sample.keys()];
  const reasons: string[] = [];
  for (const engine of ["duckdb", "pyiceberg", "spark"] as const) {
    let reading: Reading;
    try {
      reading =
        engine === "pyiceberg"
          ? pyiceberg(namespace, table, sampleIds)
          : await sql(readers, engine, namespace, table, sampleIds);
    } catch (error) {
      reasons.push(`${engine} could not read ${namespace}.${table}: ${(error as Error).message.slice(0, 300)}`);
      continue;
    }
    reasons.push(...compare(engine, reading, expected));
  }
  return { ok: reasons.length === 0, reasons };
}

async function sql(
  readers: Readers,
  engine: Exclude<Engine, "pyiceberg">,
  namespace: string,
  table: string,
  sampleIds: number[],
): Promise<Reading> {
  const name = `${testRestCatalog.name}.${namespace}.${table}`;
  const [counts] = await readers.sql(engine, `SELECT count(*) AS n, count(DISTINCT id) AS ids FROM ${name}`);
  const sample = await readers.sql(
    engine,
    `SELECT id, status, amount, created_at FROM ${name} WHERE id IN (${sampleIds.join(", ")})`,
  );
  return { rows: Number(counts!.n), ids: Number(counts!.ids), sample };
}

function pyiceberg(namespace: string, table: string, sampleIds: number[]): Reading {
  const child = spawnSync(
    readerEnv.python,
    [join(import.meta.dirname, "pyiceberg_check.py"), catalogUri, namespace, table, JSON.stringify(sampleIds)],
    { encoding: "utf8", maxBuffer: 64 << 20, env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" } },
  );
  if (child.status !== 0) throw new Error(child.stderr.trim().split("\n").slice(-3).join(" "));
  return JSON.parse(child.stdout.trim().split("\n").at(-1)!) as Reading;
}

function compare(engine: string, reading: Reading, expected: Expected): string[] {
  const reasons: string[] = [];
  if (reading.rows !== expected.rows || reading.ids !== expected.ids) {
    reasons.push(
      `${engine} reads ${reading.rows} rows with ${reading.ids} distinct ids, expected ${expected.rows} rows with ${expected.ids} ids`,
    );
  }
  const byId = new Map<number, OrderFields[]>();
  for (const row of reading.sample) {
    const id = Number(row.id);
    byId.set(id, [...(byId.get(id) ?? []), fieldsOf(row)]);
  }
  const wrong: number[] = [];
  for (const [id, want] of expected.sample) {
    const got = byId.get(id) ?? [];
    const latest = got.some(
      (f) =>
        f.status === want.latest.status && f.amount === want.latest.amount && f.createdAt === want.latest.createdAt,
    );
    if (got.length !== want.rows || !latest) wrong.push(id);
  }
  if (wrong.length > 0) {
    const id = wrong[0]!;
    const want = expected.sample.get(id)!;
    const got = byId.get(id) ?? [];
    reasons.push(
      `${engine}: ${wrong.length} of ${expected.sample.size} sampled ids hold other rows than their latest message; ` +
        `id ${id} has ${got.length} rows (${JSON.stringify(got.slice(0, 2))}${got.length > 2 ? ", ..." : ""}), ` +
        `expected ${want.rows} with ${JSON.stringify(want.latest)}`,
    );
  }
  return reasons;
}

/** The compared fields, whatever type the system gave them (double or decimal; string or timestamp). */
function fieldsOf(row: Row): OrderFields {
  const text = String(row.created_at).replace(" ", "T");
  const zoned = /(Z|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`;
  return { status: String(row.status), amount: Number(row.amount), createdAt: Date.parse(zoned) };
}
