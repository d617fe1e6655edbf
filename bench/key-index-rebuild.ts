// Rebuilding the upsert key index from nothing (a lost state directory, a new container): seconds
// and peak RSS at 10M keys, for this checkout and, to compare, for another one (an older commit).
//
//   node bench/key-index-rebuild.ts [--keys 10000000] [--files 100] [--payload 0] [--dir DIR] [--root CHECKOUT ...]
//
// The table is a real floe upsert table in the embedded SQLite catalog: floe's system columns plus
// id (long, the dedup key) and v (string; --payload characters of random text per row make the
// table that much larger, as real rows do, which the key columns' reads must not notice), written
// by the sync's own row writer (`_floe_id` from
// the same key hashing), `--files` Parquet files of keys/files rows each, one FastAppend per file,
// then one upsert that rewrites every 1000th key (new rows in one file, a deletion vector on each
// file). Built once into DIR (default: a temporary directory, removed after) and reused when DIR
// holds it. DuckDB (the readers' venv) checks what was built: count(*) and count(DISTINCT id)
// equal the keys.
//
// Each rebuild runs in a fresh child process (`--measure`) that imports the key-index store of its
// checkout (`--root`, default this one; e.g. a `git worktree add /tmp/old <commit>` with
// node_modules linked), opens the table and rebuilds the index into an empty state directory. The
// child checks the index (size == keys; sampled keys found where the model says) and prints
// seconds, CPU seconds, peak RSS (process.resourceUsage().maxRSS) and the RSS before the rebuild.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    keys: { type: "string", default: "10000000" },
    files: { type: "string", default: "100" },
    payload: { type: "string", default: "0" },
    dir: { type: "string" },
    root: { type: "string", multiple: true },
    // Internal: one measured rebuild in this process, figures as JSON on stdout.
    measure: { type: "boolean", default: false },
  },
});
const KEYS = Number(values.keys);
const FILES = Number(values.files);
const ROWS_PER_FILE = Math.ceil(KEYS / FILES);
const PAYLOAD = Number(values.payload);
/** Every UPDATE_EVERY-th key is upserted once more after the first load. */
const UPDATE_EVERY = 1000;
const NAMESPACE = "bench";
const TABLE = "accounts";

interface Figures {
  root: string;
  seconds: number;
  /** User plus system CPU seconds of the rebuild: steadier than seconds on a shared machine. */
  cpuSeconds: number;
  peakRssMiB: number;
  rssBeforeMiB: number;
  keys: number;
  dataFilesRead?: number;
  bytesRead?: number;
}

/** Imports a module of checkout `root`. */
// biome-ignore lint/suspicious/noExplicitAny: modules of another checkout, typed by their use here
const load = (root: string, path: string): Promise<any> => import(pathToFileURL(join(root, path)).href);

async function build(dir: string): Promise<void> {
  const root = resolve(here, "..");
  const { openSqlCatalog } = await load(root, "src/iceberg/catalog/sql-catalog.ts");
  const { Table } = await load(root, "src/iceberg/table.ts");
  const { unpartitioned } = await load(root, "src/iceberg/spec/partition-spec.ts");
  const { currentSchema } = await load(root, "src/iceberg/spec/table-metadata.ts");
  const { SYSTEM_COLUMNS, kafkaKeyText } = await load(root, "src/decode/system-columns.ts");
  const { hashRowKeys } = await load(root, "src/pipeline/key-hashes.ts");
  const { RowBatch } = await load(root, "src/pipeline/row-batch.ts");
  const { writeDataFiles } = await load(root, "src/iceberg/data-writer.ts");

  const catalog = await openSqlCatalog({ warehouse: join(dir, "warehouse"), name: "bench" });
  await catalog.createNamespace([NAMESPACE]);
  const table = new Table(
    catalog,
    await catalog.createTable(
      { namespace: [NAMESPACE], name: TABLE },
      {
        schema: {
          schemaId: 0,
          fields: [
            ...SYSTEM_COLUMNS,
            { id: 9, name: "id", required: false, type: "long" },
            { id: 10, name: "v", required: false, type: "string" },
          ],
        },
        spec: unpartitioned,
        properties: { "write.parquet.compression-codec": "zstd" },
      },
    ),
  );
  const schema = currentSchema(table.metadata);
  // Random text that zstd cannot shrink much: a row's value is a slice of it at a varying offset.
  const noise = randomBytes(1 << 20).toString("base64");
  const payload = (id: number) =>
    PAYLOAD === 0 ? "" : noise.slice((id * 7919) % (noise.length - PAYLOAD)).slice(0, PAYLOAD);
  /** Rows of keys `ids`, as a sync writes them: a data file per call. */
  const writeRows = async (ids: number[], tag: string) => {
    const rows = {
      count: ids.length,
      partitions: ids.map(() => 0),
      offsets: ids.map((id) => BigInt(id)),
      timestamps: ids.map(() => 1_700_000_000_000n),
      keys: ids.map((id) => kafkaKeyText(Buffer.from(String(id)))),
      keyRecords: ids.map(() => null),
      records: ids.map((id) => ({ id, v: `${tag}-${id}${payload(id)}` })),
      typed: false,
    };
    const hashes = hashRowKeys(rows, ["id"], schema);
    const batch = new RowBatch(schema, rows.count);
    for (let i = 0; i < rows.count; i++) batch.append(rows, i, "c", hashes);
    const files = await writeDataFiles(table, batch.builder.build(), { targetFileSizeBytes: 1024 * 1024 * 1024 });
    if (files.length !== 1) throw new Error(`expected one data file, got ${files.length}`);
    return files[0];
  };
  const started = performance.now();
  const paths: string[] = [];
  for (let f = 0; f < FILES; f++) {
    const ids = Array.from(
      { length: Math.min(ROWS_PER_FILE, KEYS - f * ROWS_PER_FILE) },
      (_, r) => f * ROWS_PER_FILE + r,
    );
    const file = await writeRows(ids, "v1");
    paths.push(file.filePath);
    await table.newFastAppend().appendFile(file).commit();
    if (f % 10 === 9)
      console.error(`  built ${f + 1}/${FILES} files (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  // One upsert: every UPDATE_EVERY-th key gets a new row, its old one a deletion vector position.
  const updated = Array.from({ length: Math.floor((KEYS - 1) / UPDATE_EVERY) + 1 }, (_, i) => i * UPDATE_EVERY);
  const delta = table.newRowDelta().addRows(await writeRows(updated, "v2"));
  for (let f = 0; f < FILES; f++) {
    const positions = updated.filter((id) => Math.floor(id / ROWS_PER_FILE) === f).map((id) => id % ROWS_PER_FILE);
    if (positions.length > 0) delta.deleteRows(paths[f]!, positions);
  }
  await delta.commit();
  await catalog.close();
  writeFileSync(join(dir, "built.json"), JSON.stringify({ keys: KEYS, files: FILES, payload: PAYLOAD }));
  console.error(`built ${KEYS} keys in ${FILES} files in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}

async function measure(dir: string, root: string): Promise<Figures> {
  const { openSqlCatalog } = await load(root, "src/iceberg/catalog/sql-catalog.ts");
  const { Table } = await load(root, "src/iceberg/table.ts");
  const { KeyIndexStore } = await load(root, "src/pipeline/key-index-store.ts");
  const { hashKey, keyHashes } = await load(root, "src/upsert/key-hash.ts");
  const catalog = await openSqlCatalog({ warehouse: join(dir, "warehouse"), name: "bench" });
  const table = await Table.load(catalog, { namespace: [NAMESPACE], name: TABLE });
  const stateDir = mkdtempSync(join(tmpdir(), "floe-bench-keyindex-state-"));
  try {
    const rssBefore = process.memoryUsage().rss;
    const store = new KeyIndexStore(stateDir, table, ["id"]);
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const index = await store.open(table);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    const peakRssMiB = process.resourceUsage().maxRSS / 1024;
    // What was built: every key once, an upserted key in the upsert's file, another in its first file.
    if (index.size !== KEYS) throw new Error(`${root}: the index holds ${index.size} keys, not ${KEYS}`);
    const upsertFile = index.files.paths().length - 1;
    for (let k = 0; k < KEYS; k += 99_991) {
      const location = index.lookup(hashKey([k], keyHashes(1)), 0);
      if (!location) throw new Error(`${root}: key ${k} is not in the index`);
      const upserted = k % UPDATE_EVERY === 0;
      const want = upserted ? k / UPDATE_EVERY : k % ROWS_PER_FILE;
      if (location.position !== want || (upserted && index.files.ordinalOf(location.file) !== upsertFile + 1)) {
        throw new Error(`${root}: key ${k} at ${location.file}@${location.position}, expected position ${want}`);
      }
    }
    const activity = store.activity?.[0];
    return {
      root,
      seconds,
      cpuSeconds,
      peakRssMiB,
      rssBeforeMiB: rssBefore / 2 ** 20,
      keys: index.size,
      dataFilesRead: activity?.dataFilesRead,
      bytesRead: activity?.bytesRead,
    };
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
    await catalog.close();
  }
}

/** count(*) and count(DISTINCT id) of the table as DuckDB reads it. */
async function duckdbCounts(dir: string): Promise<{ rows: bigint; distinct: bigint } | string> {
  const { startReaders } = await import("../dev/readers.ts");
  const { openSqlCatalog } = await import("../src/iceberg/catalog/sql-catalog.ts");
  const { Table } = await import("../src/iceberg/table.ts");
  const catalog = await openSqlCatalog({ warehouse: join(dir, "warehouse"), name: "bench" });
  const table = await Table.load(catalog, { namespace: [NAMESPACE], name: TABLE });
  await catalog.close();
  let readers: Awaited<ReturnType<typeof startReaders>> | undefined;
  try {
    readers = await startReaders({ engines: ["duckdb"] });
    const [row] = await readers.sql(
      "duckdb",
      `SELECT count(*) AS n, count(DISTINCT id) AS d FROM iceberg_scan('${table.metadataLocation}')`,
      null,
    );
    return { rows: BigInt(row!.n as bigint), distinct: BigInt(row!.d as bigint) };
  } catch (error) {
    return `DuckDB not available: ${(error as Error).message}`;
  } finally {
    await readers?.close();
  }
}

if (values.measure) {
  const figures = await measure(resolve(values.dir!), resolve(values.root?.[0] ?? join(here, "..")));
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} else {
  const dir = values.dir ? resolve(values.dir) : mkdtempSync(join(tmpdir(), "floe-bench-keyindex-"));
  try {
    mkdirSync(dir, { recursive: true });
    const built = existsSync(join(dir, "built.json"))
      ? JSON.parse(readFileSync(join(dir, "built.json"), "utf8"))
      : null;
    if (built && (built.keys !== KEYS || built.files !== FILES || (built.payload ?? 0) !== PAYLOAD)) {
      throw new Error(`${dir} holds another table (${JSON.stringify(built)}); use another --dir`);
    }
    if (!built) await build(dir);
    const bytes = spawnSync("du", ["-sb", join(dir, "warehouse")], { encoding: "utf8" }).stdout.split("\t")[0];
    console.log(`table: ${KEYS} keys, ${FILES + 1} data files, ${(Number(bytes) / 2 ** 20).toFixed(0)} MiB`);
    const counts = await duckdbCounts(dir);
    if (typeof counts === "string") {
      console.log(counts);
    } else {
      console.log(`DuckDB: count(*) = ${counts.rows}, count(DISTINCT id) = ${counts.distinct}`);
      if (counts.rows !== BigInt(KEYS) || counts.distinct !== BigInt(KEYS)) throw new Error("DuckDB reads other rows");
    }
    for (const root of values.root ?? [resolve(here, "..")]) {
      const child = spawnSync(
        process.execPath,
        [
          fileURLToPath(import.meta.url),
          "--measure",
          "--dir",
          dir,
          "--root",
          root,
          "--keys",
          String(KEYS),
          "--files",
          String(FILES),
        ],
        { encoding: "utf8", maxBuffer: 1 << 20, stdio: ["ignore", "pipe", "inherit"] },
      );
      if (child.status !== 0) {
        console.log(`${root}: the rebuild failed (exit ${child.status ?? child.signal})`);
        continue;
      }
      const f = JSON.parse(child.stdout.trim().split("\n").at(-1)!) as Figures;
      const read =
        f.dataFilesRead === undefined
          ? ""
          : `, ${f.dataFilesRead} files, ${(f.bytesRead! / 2 ** 20).toFixed(0)} MiB read`;
      console.log(
        `${f.root}: rebuilt ${f.keys} keys in ${f.seconds.toFixed(1)} s (${f.cpuSeconds.toFixed(1)} s CPU), peak RSS ${f.peakRssMiB.toFixed(0)} MiB (${f.rssBeforeMiB.toFixed(0)} MiB before)${read}`,
      );
    }
  } finally {
    if (!values.dir) rmSync(dir, { recursive: true, force: true });
  }
}
