// Parquet encoding choices for an upsert table's data file: what each costs to write, how large
// the file is, and how fast the readers scan it. The rows are the comparison bench's orders
// (bench/orders.ts) as an upsert table holds them, floe's columns included: `_floe_id`, the
// Kafka coordinates and `_op_type`.
//
//   node bench/parquet-encoding.ts [--rows 1000000] [--runs 3] [--out bench/results/parquet-encoding.md]
//
// Variants: parquet-wasm as floe writes today (zstd, page statistics, 64 KiB dictionary pages), its
// other codecs, no dictionary, chunk statistics only, and `_floe_id` as 16 bytes instead of 32
// hex characters; hyparquet-writer (pure JS, the writer beside the reader floe uses) with zstd
// from node:zlib and with its own snappy. Encoding is timed by the process's CPU time, median of
// --runs; each file is then read whole by DuckDB and by Spark, which must both agree with a model
// of the rows (count, distinct ids and `_floe_id`s, sums of every numeric column, lengths of the
// strings, the time range) before its figures count. DuckDB's scan of every column is timed (the
// fastest of three), and the footer gives `_floe_id`'s share of the file.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { zstdCompressSync } from "node:zlib";
import * as arrow from "apache-arrow";
import { parquetMetadata } from "hyparquet";
import { ByteWriter, parquetWrite } from "hyparquet-writer";
import * as parquet from "parquet-wasm";
import { startReaders } from "../dev/readers.ts";
import { order, orderFields } from "./orders.ts";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "1000000" },
    runs: { type: "string", default: "3" },
    out: { type: "string" },
  },
});
const ROWS = Number(values.rows);
const RUNS = Number(values.runs);
const MESSAGE_BYTES = 150;
const PARTITIONS = 4;

/** The rows as columns: message n is order n of id n % ids, at offset n / PARTITIONS of partition n % PARTITIONS. */
interface Columns {
  floeIdHex: string[];
  floeIdBytes: Uint8Array[];
  partition: Int32Array;
  offset: BigInt64Array;
  timestamp: BigInt64Array;
  opType: string[];
  id: BigInt64Array;
  customerId: BigInt64Array;
  status: string[];
  amount: Float64Array;
  currency: string[];
  createdAt: BigInt64Array;
  note: string[];
}

function columnsOf(rows: number): Columns {
  const c: Columns = {
    floeIdHex: new Array(rows),
    floeIdBytes: new Array(rows),
    partition: new Int32Array(rows),
    offset: new BigInt64Array(rows),
    timestamp: new BigInt64Array(rows),
    opType: new Array(rows),
    id: new BigInt64Array(rows),
    customerId: new BigInt64Array(rows),
    status: new Array(rows),
    amount: new Float64Array(rows),
    currency: new Array(rows),
    createdAt: new BigInt64Array(rows),
    note: new Array(rows),
  };
  for (let n = 0; n < rows; n++) {
    const document = JSON.parse(order(n, n, MESSAGE_BYTES).toString());
    const fields = orderFields(n);
    // A row's _floe_id is a 128-bit hash of its key: uniform bytes, as the hex of SHA-256's first half.
    const bytes = new Uint8Array(16);
    let x = (n * 2654435761 + 1) >>> 0;
    for (let i = 0; i < 16; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      bytes[i] = x & 0xff;
    }
    bytes[0] = n & 0xff;
    bytes[1] = (n >>> 8) & 0xff;
    bytes[2] = (n >>> 16) & 0xff;
    bytes[3] = (n >>> 24) & 0xff;
    c.floeIdBytes[n] = bytes;
    c.floeIdHex[n] = Buffer.from(bytes).toString("hex");
    c.partition[n] = n % PARTITIONS;
    c.offset[n] = BigInt(Math.floor(n / PARTITIONS));
    c.timestamp[n] = BigInt(fields.createdAt) * 1000n;
    c.opType[n] = n % 10 === 0 ? "c" : "u";
    c.id[n] = BigInt(document.id);
    c.customerId[n] = BigInt(document.customer_id);
    c.status[n] = document.status;
    c.amount[n] = document.amount;
    c.currency[n] = document.currency;
    c.createdAt[n] = BigInt(fields.createdAt) * 1000n;
    c.note[n] = document.note;
  }
  return c;
}

/** What a reader must find in a file of `c`. */
function modelOf(c: Columns): Record<string, string> {
  let cents = 0n;
  let customers = 0n;
  let offsets = 0n;
  let partitions = 0;
  let notes = 0;
  for (let n = 0; n < c.id.length; n++) {
    cents += BigInt(Math.round(c.amount[n]! * 100));
    customers += c.customerId[n]!;
    offsets += c.offset[n]!;
    partitions += c.partition[n]!;
    notes += c.note[n]!.length + c.status[n]!.length + c.currency[n]!.length + c.opType[n]!.length;
  }
  return {
    rows: String(c.id.length),
    ids: String(new Set(c.id).size),
    floe_ids: String(c.id.length),
    cents: String(cents),
    customers: String(customers),
    offsets: String(offsets),
    partitions: String(partitions),
    text: String(notes),
    first: String(c.createdAt[0]),
    last: String(c.createdAt[c.createdAt.length - 1]),
  };
}

const utc = () => new arrow.TimestampMicrosecond("UTC");

function arrowTable(c: Columns, floeIdAsBytes: boolean): arrow.Table {
  const bigints = (type: arrow.TimestampMicrosecond, data: BigInt64Array) =>
    arrow.makeVector(arrow.makeData({ type, data, length: data.length }));
  return new arrow.Table({
    _floe_id: floeIdAsBytes
      ? arrow.vectorFromArray(c.floeIdBytes, new arrow.FixedSizeBinary(16))
      : arrow.vectorFromArray(c.floeIdHex, new arrow.Utf8()),
    _kafka_partition: arrow.makeVector(c.partition),
    _kafka_offset: arrow.makeVector(c.offset),
    _kafka_timestamp: bigints(utc(), c.timestamp),
    _op_type: arrow.vectorFromArray(c.opType, new arrow.Utf8()),
    id: arrow.makeVector(c.id),
    customer_id: arrow.makeVector(c.customerId),
    status: arrow.vectorFromArray(c.status, new arrow.Utf8()),
    amount: arrow.makeVector(c.amount),
    currency: arrow.vectorFromArray(c.currency, new arrow.Utf8()),
    created_at: bigints(utc(), c.createdAt),
    note: arrow.vectorFromArray(c.note, new arrow.Utf8()),
  });
}

interface Variant {
  name: string;
  write: () => Uint8Array;
}

/** floe's writer properties (src/iceberg/parquet/data-file-writer.ts), with `change` applied. */
function wasm(table: arrow.Table, change: (b: parquet.WriterPropertiesBuilder) => parquet.WriterPropertiesBuilder) {
  return () => {
    const properties = change(
      new parquet.WriterPropertiesBuilder()
        .setCompression(parquet.Compression.ZSTD)
        .setStatisticsEnabled(parquet.EnabledStatistics.Page)
        .setDictionaryPageSizeLimit(64 * 1024),
    ).build();
    return parquet.writeParquet(parquet.Table.fromIPCStream(arrow.tableToIPC(table, "stream")), properties);
  };
}

function hyparquetWriter(c: Columns, codec: "ZSTD" | "SNAPPY") {
  const optional = "OPTIONAL" as const;
  const timestamp = { type: "INT64", logical_type: { type: "TIMESTAMP", isAdjustedToUTC: true, unit: "MICROS" } };
  const text = { type: "BYTE_ARRAY", converted_type: "UTF8", logical_type: { type: "STRING" } };
  const schema = [
    { name: "root", num_children: 12 },
    { name: "_floe_id", ...text },
    { name: "_kafka_partition", type: "INT32" },
    { name: "_kafka_offset", type: "INT64" },
    { name: "_kafka_timestamp", ...timestamp },
    { name: "_op_type", ...text },
    { name: "id", type: "INT64" },
    { name: "customer_id", type: "INT64" },
    { name: "status", ...text },
    { name: "amount", type: "DOUBLE" },
    { name: "currency", ...text },
    { name: "created_at", ...timestamp },
    { name: "note", ...text },
  ].map((e, i) => (i === 0 ? e : { ...e, repetition_type: optional }));
  const columnData = [
    { name: "_floe_id", data: c.floeIdHex },
    { name: "_kafka_partition", data: c.partition },
    { name: "_kafka_offset", data: c.offset },
    { name: "_kafka_timestamp", data: c.timestamp },
    { name: "_op_type", data: c.opType },
    { name: "id", data: c.id },
    { name: "customer_id", data: c.customerId },
    { name: "status", data: c.status },
    { name: "amount", data: c.amount },
    { name: "currency", data: c.currency },
    { name: "created_at", data: c.createdAt },
    { name: "note", data: c.note },
  ];
  return () => {
    const writer = new ByteWriter();
    parquetWrite({
      writer,
      columnData,
      // biome-ignore lint/suspicious/noExplicitAny: hyparquet's SchemaElement union, spelled as plain objects here
      schema: schema as any,
      codec,
      compressors: { ZSTD: (bytes: Uint8Array) => new Uint8Array(zstdCompressSync(bytes)) },
      rowGroupSize: 1_000_000,
    });
    return new Uint8Array(writer.getBuffer());
  };
}

function cpuMs<T>(run: () => T): { result: T; ms: number } {
  const before = process.cpuUsage();
  const result = run();
  const { user, system } = process.cpuUsage(before);
  return { result, ms: (user + system) / 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const columns = columnsOf(ROWS);
const model = modelOf(columns);
const hexTable = arrowTable(columns, false);
const bytesTable = arrowTable(columns, true);
const variants: Variant[] = [
  { name: "parquet-wasm, as floe writes (zstd, page stats, 64 KiB dictionaries)", write: wasm(hexTable, (b) => b) },
  { name: "parquet-wasm, snappy", write: wasm(hexTable, (b) => b.setCompression(parquet.Compression.SNAPPY)) },
  { name: "parquet-wasm, lz4_raw", write: wasm(hexTable, (b) => b.setCompression(parquet.Compression.LZ4_RAW)) },
  {
    name: "parquet-wasm, uncompressed",
    write: wasm(hexTable, (b) => b.setCompression(parquet.Compression.UNCOMPRESSED)),
  },
  { name: "parquet-wasm, zstd, no dictionary", write: wasm(hexTable, (b) => b.setDictionaryEnabled(false)) },
  {
    name: "parquet-wasm, zstd, chunk statistics only",
    write: wasm(hexTable, (b) => b.setStatisticsEnabled(parquet.EnabledStatistics.Chunk)),
  },
  { name: "parquet-wasm, zstd, _floe_id as 16 bytes", write: wasm(bytesTable, (b) => b) },
  { name: "hyparquet-writer 0.17, zstd (node:zlib)", write: hyparquetWriter(columns, "ZSTD") },
  { name: "hyparquet-writer 0.17, snappy", write: hyparquetWriter(columns, "SNAPPY") },
];

const scan = (path: string) => {
  const source = `read_parquet('${path}')`;
  return `SELECT count(*) AS rows, count(DISTINCT id) AS ids, count(DISTINCT _floe_id) AS floe_ids,
    sum(CAST(round(amount * 100) AS BIGINT)) AS cents, sum(customer_id) AS customers,
    sum(_kafka_offset) AS offsets, sum(_kafka_partition) AS partitions,
    sum(length(note) + length(status) + length(currency) + length(_op_type)) AS text,
    min(epoch_us(created_at)) AS first, max(epoch_us(created_at)) AS last,
    min(epoch_us(_kafka_timestamp)) - min(epoch_us(created_at)) AS skew FROM ${source}`;
};
const sparkScan = (path: string) =>
  `SELECT count(*) AS rows, count(DISTINCT id) AS ids, count(DISTINCT _floe_id) AS floe_ids,
    sum(CAST(round(amount * 100) AS BIGINT)) AS cents, sum(customer_id) AS customers,
    sum(_kafka_offset) AS offsets, sum(_kafka_partition) AS partitions,
    sum(length(note) + length(status) + length(currency) + length(_op_type)) AS text,
    min(unix_micros(created_at)) AS first, max(unix_micros(created_at)) AS last,
    min(unix_micros(_kafka_timestamp)) - min(unix_micros(created_at)) AS skew FROM parquet.\`${path}\``;

/** Reads every column and aggregates cheaply, so that its time is the scan's, not a DISTINCT's. */
const timedScan = (path: string) =>
  `SELECT max(_floe_id), sum(_kafka_partition), sum(_kafka_offset), max(_kafka_timestamp), max(_op_type),
    sum(id), sum(customer_id), max(status), sum(amount), max(currency), max(created_at), max(note)
    FROM read_parquet('${path}')`;

/** Compressed bytes of a top-level column's chunks, from the file's footer. */
function columnBytes(file: Uint8Array, column: string): number {
  const footer = parquetMetadata(file.slice().buffer);
  let bytes = 0;
  for (const group of footer.row_groups) {
    for (const chunk of group.columns) {
      if (chunk.meta_data?.path_in_schema[0] === column) bytes += Number(chunk.meta_data.total_compressed_size);
    }
  }
  return bytes;
}

const expected = { ...model, skew: "0" };
const normalise = (row: Record<string, unknown> | undefined) =>
  Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, String(v)]));

const dir = await mkdtemp(join(tmpdir(), "floe-bench-parquet-"));
const readers = await startReaders({ engines: ["duckdb", "spark"] });
const lines: string[] = [];
try {
  const results = [];
  for (const variant of variants) {
    const times: number[] = [];
    let bytes: Uint8Array = variant.write(); // warm-up: the first call compiles and grows memory
    for (let run = 0; run < RUNS; run++) {
      const { result, ms } = cpuMs(variant.write);
      times.push(ms);
      bytes = result;
    }
    const path = join(dir, `${results.length}.parquet`);
    await writeFile(path, bytes);
    const [duckdb] = await readers.sql("duckdb", scan(path), null);
    const scans: number[] = [];
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      await readers.sql("duckdb", timedScan(path), null);
      scans.push(performance.now() - started);
    }
    const duckdbMs = Math.min(...scans);
    const floeIdBytes = columnBytes(bytes, "_floe_id");
    const [spark] = await readers.sql("spark", sparkScan(path), null);
    const wrong = [
      ["DuckDB", normalise(duckdb)],
      ["Spark", normalise(spark)],
    ].filter(([, got]) => JSON.stringify(got) !== JSON.stringify(expected));
    const refused = wrong.map(([engine, got]) => `${engine} read ${JSON.stringify(got)}`).join("; ");
    results.push({ name: variant.name, encodeMs: median(times), bytes: bytes.length, floeIdBytes, duckdbMs, refused });
    console.log(
      `${variant.name}: encode ${median(times).toFixed(0)} ms CPU, ${(bytes.length / 2 ** 20).toFixed(1)} MiB, ` +
        `_floe_id ${((floeIdBytes / bytes.length) * 100).toFixed(0)}%, DuckDB scan ${duckdbMs.toFixed(0)} ms${refused ? `; REFUSED: ${refused}` : ""}`,
    );
  }
  // The hand-over alone: Arrow IPC bytes of the table, copied into wasm as parquet-wasm's table.
  const toIpc: number[] = [];
  const intoWasm: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const ipc = cpuMs(() => arrow.tableToIPC(hexTable, "stream"));
    const wasmTable = cpuMs(() => parquet.Table.fromIPCStream(ipc.result));
    wasmTable.result.free();
    if (run > 0) toIpc.push(ipc.ms);
    if (run > 0) intoWasm.push(wasmTable.ms);
  }
  lines.push(
    `# Parquet encoding of an upsert table's data file`,
    "",
    `${ROWS.toLocaleString("en")} orders-like rows of ~${MESSAGE_BYTES}-byte messages with floe's columns, one file each;`,
    `encode: median CPU of ${RUNS} runs after a warm-up (Arrow to Parquet, the IPC hand-over into wasm included);`,
    "_floe_id: its column's share of the file; DuckDB scan: every column read, fastest of 3 runs. Node " +
      `${process.version}, ${new Date().toISOString()}, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}.`,
    `Command: \`node bench/parquet-encoding.ts${ROWS === 1_000_000 ? "" : ` --rows ${ROWS}`}\``,
    "",
    "| writer and settings | encode ms CPU | rows/s | file MiB | _floe_id | DuckDB scan ms | checked |",
    "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ...results.map(
      (r) =>
        `| ${r.name} | ${r.encodeMs.toFixed(0)} | ${Math.round((ROWS / r.encodeMs) * 1000).toLocaleString("en")} | ` +
        `${(r.bytes / 2 ** 20).toFixed(1)} | ${((r.floeIdBytes / r.bytes) * 100).toFixed(0)}% | ${r.duckdbMs.toFixed(0)} | ${r.refused ? `refused: ${r.refused}` : "DuckDB, Spark"} |`,
    ),
    "",
    `Of parquet-wasm's encode time, the hand-over takes ${median(toIpc).toFixed(0)} ms CPU to make the Arrow IPC stream ` +
      `and ${median(intoWasm).toFixed(0)} ms to read it into wasm.`,
    "",
  );
  if (values.out) await writeFile(values.out, lines.join("\n"));
  console.log(lines.join("\n"));
  if (results.some((r) => r.refused)) process.exitCode = 1;
} finally {
  await readers.close();
  await rm(dir, { recursive: true, force: true });
}
