// Write rate of src/iceberg: narrow rows (long id, string name, double amount, timestamptz ts)
// built with ColumnBatchBuilder, written as Parquet data files (zstd) into a temporary
// warehouse and committed with FastAppend to the embedded SQLite catalog.
//
//   node bench/iceberg-write.ts [--rows 1000000] [--runs 3] [--codec zstd] [--appender typed|record]
//
// Each run is a fresh table in a fresh child process, so peak RSS is that of one write alone.
// Prints, per run and as the median: build (rows/s), Parquet write (rows/s, MB), build + write
// (rows/s), commit (ms), peak RSS (MiB).
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { openSqlCatalog } from "../src/iceberg/catalog/sql-catalog.ts";
import { writeDataFiles } from "../src/iceberg/data-writer.ts";
import { ColumnBatchBuilder } from "../src/iceberg/parquet/column-batch.ts";
import { unpartitioned } from "../src/iceberg/spec/partition-spec.ts";
import { currentSchema } from "../src/iceberg/spec/table-metadata.ts";
import { Table } from "../src/iceberg/table.ts";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "1000000" },
    runs: { type: "string", default: "3" },
    codec: { type: "string", default: "zstd" },
    appender: { type: "string", default: "typed" },
    // Internal: one measured write in this process, figures as JSON on stdout.
    once: { type: "boolean", default: false },
  },
});

interface Figures {
  rows: number;
  files: number;
  parquetBytes: number;
  buildMs: number;
  writeMs: number;
  commitMs: number;
  peakRssMiB: number;
}

const names = Array.from(
  { length: 1000 },
  (_, i) => `customer-${i.toString(36).padStart(4, "0")}-${"abcdefgh"[i % 8]}`,
);

async function writeOnce(rows: number): Promise<Figures> {
  const warehouse = await mkdtemp(join(tmpdir(), "floe-bench-write-"));
  const catalog = await openSqlCatalog({ warehouse, name: "bench" });
  try {
    await catalog.createNamespace(["bench"]);
    const table = new Table(
      catalog,
      await catalog.createTable(
        { namespace: ["bench"], name: "narrow" },
        {
          schema: {
            schemaId: 0,
            fields: [
              { id: 1, name: "id", required: true, type: "long" },
              { id: 2, name: "name", required: false, type: "string" },
              { id: 3, name: "amount", required: false, type: "double" },
              { id: 4, name: "ts", required: false, type: "timestamptz" },
            ],
          },
          spec: unpartitioned,
          properties: { "write.parquet.compression-codec": values.codec },
        },
      ),
    );

    const t0 = performance.now();
    const batch = new ColumnBatchBuilder(currentSchema(table.metadata));
    const start = 1_700_000_000_000_000n;
    if (values.appender === "record") {
      for (let i = 0; i < rows; i++) {
        batch.appendRow({
          id: BigInt(i),
          name: names[i % names.length],
          amount: (i % 100_000) / 100,
          ts: start + BigInt(i) * 1000n,
        });
      }
    } else {
      // The sync engine's path: typed appenders per column, then endRow().
      const id = batch.column(1);
      const name = batch.column(2);
      const amount = batch.column(3);
      const ts = batch.column(4);
      if (id.kind !== "long" || name.kind !== "bytes" || amount.kind !== "floating" || ts.kind !== "long") {
        throw new Error("unexpected column kinds");
      }
      const startMs = 1_700_000_000_000;
      for (let i = 0; i < rows; i++) {
        id.appendNumber(i);
        name.append(names[i % names.length]!);
        amount.append((i % 100_000) / 100);
        ts.appendNumber((startMs + i) * 1000);
        batch.endRow();
      }
    }
    const arrowTable = batch.build();
    const t1 = performance.now();
    const files = await writeDataFiles(table, arrowTable);
    const t2 = performance.now();
    await table
      .newFastAppend()
      .appendFile(...files)
      .commit();
    const t3 = performance.now();
    const recorded = files.reduce((n, f) => n + Number(f.recordCount), 0);
    if (recorded !== rows) throw new Error(`wrote ${recorded} rows, expected ${rows}`);
    return {
      rows,
      files: files.length,
      parquetBytes: files.reduce((n, f) => n + Number(f.fileSizeInBytes), 0),
      buildMs: t1 - t0,
      writeMs: t2 - t1,
      commitMs: t3 - t2,
      peakRssMiB: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    await catalog.close();
    await rm(warehouse, { recursive: true, force: true });
  }
}

if (values.once) {
  process.stdout.write(`${JSON.stringify(await writeOnce(Number(values.rows)))}\n`);
} else {
  const runs: Figures[] = [];
  const perSecond = (rows: number, ms: number) => Math.round(rows / (ms / 1000)).toLocaleString("en-US");
  console.log(
    `iceberg write: ${Number(values.rows).toLocaleString("en-US")} rows (long, string, double, timestamptz), ` +
      `${values.codec}, ${values.appender} appenders, SQLite catalog, node ${process.version}`,
  );
  for (let run = 0; run < Number(values.runs); run++) {
    const child = spawnSync(
      process.execPath,
      [
        fileURLToPath(import.meta.url),
        "--once",
        "--rows",
        values.rows,
        "--codec",
        values.codec,
        "--appender",
        values.appender,
      ],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
    );
    if (child.status !== 0) throw new Error(`run ${run + 1} failed (exit ${child.status})`);
    const f = JSON.parse(child.stdout) as Figures;
    runs.push(f);
    console.log(
      `run ${run + 1}: build ${perSecond(f.rows, f.buildMs)} rows/s (${f.buildMs.toFixed(0)} ms), ` +
        `parquet ${perSecond(f.rows, f.writeMs)} rows/s (${f.writeMs.toFixed(0)} ms, ${f.files} file(s), ` +
        `${(f.parquetBytes / 2 ** 20).toFixed(1)} MiB), build+write ${perSecond(f.rows, f.buildMs + f.writeMs)} rows/s, ` +
        `commit ${f.commitMs.toFixed(0)} ms, peak RSS ${f.peakRssMiB.toFixed(0)} MiB`,
    );
  }
  const median = (pick: (f: Figures) => number) => {
    const sorted = runs.map(pick).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  };
  const rows = Number(values.rows);
  console.log(
    `median: build ${perSecond(
      rows,
      median((f) => f.buildMs),
    )} rows/s, ` +
      `parquet ${perSecond(
        rows,
        median((f) => f.writeMs),
      )} rows/s, ` +
      `build+write ${perSecond(
        rows,
        median((f) => f.buildMs + f.writeMs),
      )} rows/s, ` +
      `commit ${median((f) => f.commitMs).toFixed(0)} ms, peak RSS ${median((f) => f.peakRssMiB).toFixed(0)} MiB`,
  );
}
