// A seeded random walk over floe's Iceberg operations, against the real REST catalog and the
// embedded SQLite catalog: appends, upserts that replace rows spread over many data files
// (one RowDelta: a new data file plus deletion vectors on several older files, some of which
// already carry a DV that must be merged), pure deletes, and column additions that later rows
// fill. After every commit DuckDB, PyIceberg and Spark must each read exactly the rows of an
// in-memory model.
//
// Some appends write a large file (thousands of rows), and some upserts and deletes take
// hundreds of its rows, its DV first, beside a few rows of small files: DVs of kilobytes next
// to DVs of a few dozen bytes in one commit, as a sync at scale writes them. Small files alone
// never give a reader a DV that outweighs the rest of its Puffin file (DuckDB 1.5.5 misread
// exactly those), so operations 1 and 2 are always such an append and such an upsert.
//
// The seed is printed; replay a failure with FLOE_SEED=<seed>. FLOE_RANDOM_OPS sets the
// number of operations per catalog (default 200, the issue's floor).
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Catalog } from "#src/iceberg/catalog/catalog.ts";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { openSqlCatalog } from "#src/iceberg/catalog/sql-catalog.ts";
import { writeDataFiles } from "#src/iceberg/data-writer.ts";
import { planFiles } from "#src/iceberg/scan/plan-files.ts";
import { unpartitioned } from "#src/iceberg/spec/partition-spec.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import type { PrimitiveType } from "#src/iceberg/spec/types.ts";
import { Table } from "#src/iceberg/table.ts";
import { type Readers, type Row, restTable, startReaders, type TableRef } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { arrowRows } from "../helpers/tables.ts";

const seed =
  process.env.FLOE_SEED === undefined ? (Date.now() ^ (process.pid << 16)) >>> 0 : Number(process.env.FLOE_SEED);
const operations = Number(process.env.FLOE_RANDOM_OPS ?? 200);
console.log(`iceberg-randomized: seed ${seed} (replay with FLOE_SEED=${seed}), ${operations} operations per catalog`);

let readers: Readers;
before(async () => {
  readers = await startReaders();
});
after(() => readers?.close());

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function prng(s: number) {
  let state = s >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const sample = <T>(items: readonly T[], n: number): T[] => {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy.slice(0, n);
  };
  return { next, int, pick, sample };
}
type Random = ReturnType<typeof prng>;

/** Microseconds since the epoch -> the readers' normal form of timestamptz. */
function timestamptz(micros: bigint): string {
  const ms = micros / 1000n;
  const iso = new Date(Number(ms)).toISOString(); // 2024-01-31T13:45:00.123Z
  const frac = (micros % 1_000_000n).toString().padStart(6, "0");
  return `${iso.slice(0, 19)}.${frac}Z`;
}

const addableTypes: PrimitiveType[] = ["string", "double", "long", "int", "boolean", "timestamptz"];
const words = ["", "Aarav", "Sofia", "Liam", "Zoë", "日本", "O'Brien", 'quote"d', "a,b", "x".repeat(40)];

interface Column {
  name: string;
  type: PrimitiveType;
}

/** A value of `type` as the writer takes it and as the readers return it. */
function randomValue(random: Random, type: PrimitiveType): { write: unknown; read: unknown } {
  if (random.next() < 0.15) return { write: null, read: null };
  switch (type) {
    case "string": {
      const s = `${random.pick(words)}${random.int(0, 999)}`;
      return { write: s, read: s };
    }
    case "double": {
      const d = Math.round((random.next() - 0.3) * 1e8) / 1e3;
      return { write: d, read: d };
    }
    case "long": {
      const l = BigInt(random.int(-1e9, 1e9)) * BigInt(random.int(1, 1e6));
      return { write: l, read: l };
    }
    case "int": {
      const i = random.int(-(2 ** 31), 2 ** 31 - 1);
      return { write: i, read: i };
    }
    case "boolean": {
      const b = random.next() < 0.5;
      return { write: b, read: b };
    }
    case "timestamptz": {
      const t = 1_600_000_000_000_000n + BigInt(random.int(0, 2 ** 40)) * 1000n + BigInt(random.int(0, 999));
      return { write: t, read: timestamptz(t) };
    }
    default:
      throw new Error(`no generator for ${type}`);
  }
}

/** The model: live rows by id, where each lives, and which data files carry a DV. */
class Model {
  readonly rows = new Map<bigint, Row>();
  readonly location = new Map<bigint, { file: string; position: number }>();
  /** Live ids of each data file, by position. */
  readonly files = new Map<string, Map<number, bigint>>();
  readonly withDV = new Set<string>();
  columns: Column[] = [
    { name: "version", type: "long" },
    { name: "name", type: "string" },
    { name: "amount", type: "double" },
    { name: "ts", type: "timestamptz" },
  ];
  nextId = 1n;
  version = 0n;
  /** Every deleted position is in a live DV: data files are never removed here. */
  deletedPositions = 0;

  expected(): Row[] {
    return [...this.rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
  }

  liveFiles(): string[] {
    return [...this.files].filter(([, live]) => live.size > 0).map(([path]) => path);
  }
}

/**
 * readers.assertRows, except that for a SQL catalog Spark reads through a new session each
 * time: Spark's JDBC catalog over SQLite keeps answering with the metadata location it first
 * saw (REFRESH TABLE does not help; a new session, hence a new JdbcCatalog, does).
 */
async function assertRows(ref: TableRef, expected: Row[], generation: number): Promise<void> {
  // The engines read at the same time; each one's time is its own request's.
  const read = await Promise.all(
    readers.engines.map(async (engine) => {
      const table =
        engine === "spark" && "catalog" in ref && ref.catalog.type === "sql"
          ? ({ ...ref, catalog: { ...ref.catalog, generation } } as TableRef)
          : ref;
      const started = performance.now();
      const rows = await readers.rows(engine, table, { orderBy: ["id"] });
      readMs.set(engine, (readMs.get(engine) ?? 0) + performance.now() - started);
      return rows;
    }),
  );
  for (const [i, engine] of readers.engines.entries()) {
    assert.deepStrictEqual(read[i], expected, `${engine} read other rows than expected`);
  }
}
/**
 * Rows a bulk upsert or delete takes at least from one file (up to twice as many): a DV of about
 * 800 bytes or more, larger than the other DVs and the footer of a commit's first Puffin file.
 * A bulk upsert's new file can be the next one's victim.
 */
const BULK_ROWS = 400;

/** Time spent reading, per engine, for the log. */
const readMs = new Map<string, number>();

interface Step {
  kind: string;
  detail: string;
}

async function randomWalk(
  label: string,
  catalog: Catalog,
  namespace: string,
  ref: TableRef,
  log: (message: string) => void,
): Promise<void> {
  const random = prng(seed ^ (label === "rest" ? 0 : 0x9e3779b9));
  await catalog.createNamespace([namespace]);
  const model = new Model();
  const table = new Table(
    catalog,
    await catalog.createTable(
      { namespace: [namespace], name: "walk" },
      {
        schema: {
          schemaId: 0,
          fields: [
            { id: 1, name: "id", required: true, type: "long" },
            ...model.columns.map((c, i) => ({ id: i + 2, name: c.name, required: false, type: c.type })),
          ],
        },
        spec: unpartitioned,
      },
    ),
  );

  /** Writes new versions of `ids` (fresh ids get a row, existing ones a replacement) as one data file. */
  const writeRows = async (ids: bigint[]) => {
    model.version += 1n;
    const written: Row[] = [];
    const read: Row[] = [];
    for (const id of ids) {
      const w: Row = { id, version: model.version };
      const r: Row = { id, version: model.version };
      for (const column of model.columns.slice(1)) {
        const value = randomValue(random, column.type);
        w[column.name] = value.write;
        r[column.name] = value.read;
      }
      written.push(w);
      read.push(r);
    }
    const files = await writeDataFiles(table, arrowRows(table, written));
    // Rows land in the files in order; a file's positions restart at 0.
    const placed: { id: bigint; file: string; position: number; row: Row }[] = [];
    let i = 0;
    for (const file of files) {
      for (let position = 0; position < Number(file.recordCount); position++, i++) {
        placed.push({ id: ids[i]!, file: file.filePath, position, row: read[i]! });
      }
    }
    assert.equal(i, ids.length);
    return { files, placed };
  };
  const landRows = (placed: { id: bigint; file: string; position: number; row: Row }[]) => {
    for (const { id, file, position, row } of placed) {
      model.rows.set(id, row);
      model.location.set(id, { file, position });
      let live = model.files.get(file);
      if (!live) {
        live = new Map();
        model.files.set(file, live);
      }
      live.set(position, id);
    }
  };
  const forget = (id: bigint) => {
    const at = model.location.get(id)!;
    model.files.get(at.file)!.delete(at.position);
    model.withDV.add(at.file);
    model.location.delete(id);
    model.rows.delete(id);
    model.deletedPositions++;
  };
  const freshIds = (n: number) => Array.from({ length: n }, () => model.nextId++);

  /**
   * Ids to replace or delete: a few rows from each of several files, favouring files with a DV;
   * with `bulk`, first hundreds of rows of a large file (so its DV, listed first, is large).
   */
  const chooseVictims = (maxFiles: number, bulk: boolean) => {
    const ids: bigint[] = [];
    const large = model.liveFiles().filter((f) => model.files.get(f)!.size >= BULK_ROWS);
    const bulkFile = bulk && large.length > 0 ? random.pick(large) : undefined;
    if (bulkFile !== undefined) {
      bulkCommits++;
      const ofFile = [...model.files.get(bulkFile)!.values()];
      ids.push(...random.sample(ofFile, random.int(BULK_ROWS, Math.min(2 * BULK_ROWS, ofFile.length))));
    }
    const live = model.liveFiles().filter((f) => f !== bulkFile);
    if (live.length === 0) return ids;
    const withDV = live.filter((f) => model.withDV.has(f));
    const chosen = new Set(random.sample(live, random.int(1, Math.min(maxFiles, live.length))));
    if (withDV.length > 0) for (const f of random.sample(withDV, random.int(1, 2))) chosen.add(f);
    for (const file of chosen) {
      const ofFile = [...model.files.get(file)!.values()];
      ids.push(...random.sample(ofFile, random.int(1, Math.min(4, ofFile.length))));
    }
    return ids;
  };
  const deleteAll = (delta: ReturnType<Table["newRowDelta"]>, ids: bigint[]) => {
    const byFile = Map.groupBy(ids, (id) => model.location.get(id)!.file);
    for (const [file, of] of byFile)
      delta.deleteRows(
        file,
        of.map((id) => model.location.get(id)!.position),
      );
    return byFile.size;
  };

  /** Commits whose first DV is of hundreds of rows of a large file. */
  let bulkCommits = 0;
  const steps: Step[] = [];
  const started = performance.now();
  readMs.clear();
  for (let op = 0; op < operations; op++) {
    const roll = op === 1 ? 0 : op === 2 ? 0.3 : random.next();
    const bulk = op === 2 || random.next() < 0.25;
    let step: Step;
    if (op === 0 || op === 1 || model.rows.size < 5 || roll < 0.3) {
      const large = op === 1 || random.next() < 0.02;
      const ids = freshIds(large ? random.int(4 * BULK_ROWS, 6 * BULK_ROWS) : random.int(1, 25));
      const { files, placed } = await writeRows(ids);
      await table
        .newFastAppend()
        .appendFile(...files)
        .commit();
      landRows(placed);
      step = { kind: "append", detail: `${ids.length} rows` };
    } else if (roll < 0.65) {
      const victims = chooseVictims(6, bulk);
      const ids = [...victims, ...freshIds(random.int(0, 5))];
      const { files, placed } = await writeRows(ids);
      const delta = table.newRowDelta().addRows(...files);
      const touched = deleteAll(delta, victims);
      const snapshot = await delta.commit();
      for (const id of victims) forget(id);
      landRows(placed);
      assert.equal(snapshot.summary["added-dvs"], String(touched));
      assert.equal(snapshot.summary["total-position-deletes"], String(model.deletedPositions));
      step = {
        kind: "upsert",
        detail: `${victims.length} rows replaced over ${touched} files, ${ids.length - victims.length} new`,
      };
    } else if (roll < 0.93) {
      const victims = chooseVictims(4, bulk);
      const delta = table.newRowDelta();
      const touched = deleteAll(delta, victims);
      const snapshot = await delta.commit();
      for (const id of victims) forget(id);
      assert.equal(snapshot.summary["total-position-deletes"], String(model.deletedPositions));
      step = { kind: "delete", detail: `${victims.length} rows over ${touched} files` };
    } else {
      const column = { name: `c${model.columns.length}`, type: random.pick(addableTypes) };
      await table.updateSchema((change) => change.addColumn(column.name, column.type));
      model.columns.push(column);
      for (const row of model.rows.values()) row[column.name] = null;
      step = { kind: "add-column", detail: `${column.name} ${column.type}` };
    }
    steps.push(step);
    try {
      await assertRows(ref, model.expected(), op);
    } catch (error) {
      const history = steps
        .slice(-10)
        .map((s, i) => `  ${steps.length - Math.min(10, steps.length) + i}: ${s.kind} ${s.detail}`)
        .join("\n");
      throw new Error(
        `${label}: after operation ${op} (${step.kind} ${step.detail}), seed ${seed}; last operations:\n${history}`,
        { cause: error },
      );
    }
  }

  // floe's own view of the table agrees with the model too.
  const plan = await planFiles(table, currentSnapshot(table.metadata));
  const liveByFile = new Map([...model.files].map(([path, live]) => [path, live.size]));
  let planned = 0n;
  for (const [path, { entry }] of plan.dataFiles) {
    const deleted = plan.deletionVectors.get(path)?.entry.file.recordCount ?? 0n;
    assert.equal(entry.file.recordCount - deleted, BigInt(liveByFile.get(path) ?? -1), path);
    planned += entry.file.recordCount - deleted;
  }
  assert.equal(planned, BigInt(model.rows.size));
  const kinds = Map.groupBy(steps, (s) => s.kind);
  const seconds = (performance.now() - started) / 1000;
  log(
    `${label}: ${operations} operations (${[...kinds].map(([k, v]) => `${v.length} ${k}`).join(", ")}), ` +
      `${bulkCommits} of them with hundreds of rows of a large file, ` +
      `${model.rows.size} live rows in ${plan.dataFiles.size} data files, ${plan.deletionVectors.size} DVs, ` +
      `${model.columns.length + 1} columns; ${seconds.toFixed(1)} s, of which reading after each commit: ` +
      [...readMs]
        .map(([engine, ms]) => `${engine} ${(ms / 1000).toFixed(1)} s (${(ms / operations).toFixed(0)} ms/commit)`)
        .join(", "),
  );
  assert.ok((kinds.get("upsert")?.length ?? 0) > 0 && (kinds.get("delete")?.length ?? 0) > 0);
  assert.ok(bulkCommits > 0, "a commit with a large DV first");
}

test("random walk on the REST catalog: every commit reads back the model in all three engines", async (t) => {
  t.diagnostic(`seed ${seed}`);
  const catalog = await connectRestCatalog({ uri: restCatalog.uri });
  const namespace = `random_${process.pid}_${Date.now()}`;
  try {
    await randomWalk("rest", catalog, namespace, restTable(namespace, "walk"), (m) => {
      console.log(m);
      t.diagnostic(m);
    });
  } finally {
    await catalog.close();
  }
});

test("random walk on the SQLite catalog: every commit reads back the model in all three engines", async (t) => {
  t.diagnostic(`seed ${seed}`);
  const warehouse = await mkdtemp(join(tmpdir(), "floe-random-"));
  const catalog = await openSqlCatalog({ warehouse, name: "floe_random" });
  const ref: TableRef = {
    catalog: { type: "sql", uri: join(warehouse, "catalog.db"), warehouse, name: "floe_random" },
    namespace: "walk_ns",
    table: "walk",
  };
  try {
    await randomWalk("sql", catalog, "walk_ns", ref, (m) => {
      console.log(m);
      t.diagnostic(m);
    });
  } finally {
    await catalog.close();
    await rm(warehouse, { recursive: true, force: true });
  }
});
