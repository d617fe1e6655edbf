// On-disk size of an upsert table's data files by the form of `_floe_id`, for the comparison
// bench's rows (bench/compare/workload.ts: 1M orders-like messages of ~150 bytes, 100k ids, nine
// in ten updating an earlier id), written the way an upsert sync writes them: the messages cut
// into commit batches by the default commit policy (250k messages or 32 MiB of keys and values),
// each batch's latest message per id decoded, inferred and built into rows by the sync's own row
// writer (pipeline/row-batch.ts) and written by its data file writer (default settings: zstd, or
// --codec, any write.parquet.compression-codec).
// Every batch's rows stay on disk, as they do in the table until a compaction: the deletion
// vectors that retire the older rows (a few bytes per row, alike in every variant) and the
// metadata are not counted.
//
//   node bench/floe-id-size.ts [--messages 1000000] [--size 150] [--codec zstd] [--out bench/results/floe-id-size.md]
//
// Variants: `_floe_id` null (a table whose dedup keys are columns: floe leaves it null there),
// 32 hex digits in a string column (tables created before fixed[16]), fixed[16] (what floe creates
// now) and binary. A variant's figure is printed only when DuckDB reads its files as the model
// says: the row count, one row per id and batch, and every `_floe_id` equal to the hash DuckDB
// computes from the id (docs/job-file.md's expression), in the variant's form.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parquetMetadata } from "hyparquet";
import { startReaders } from "../dev/readers.ts";
import { SchemaInference } from "../src/decode/infer-schema.ts";
import { decodeJsonMessage, type JsonRecord } from "../src/decode/json-message.ts";
import { FLOE_ID, kafkaKeyText } from "../src/decode/system-columns.ts";
import { PARQUET_CODECS, type ParquetCodec } from "../src/iceberg/parquet/compression-codec.ts";
import { writeDataFiles } from "../src/iceberg/parquet/data-file-writer.ts";
import type { Schema } from "../src/iceberg/spec/schema.ts";
import { fixed, type IcebergType } from "../src/iceberg/spec/types.ts";
import { DEFAULT_COMMIT } from "../src/job/commit-policy.ts";
import { parseDedupKey } from "../src/job/dedup-key.ts";
import type { RowMessages } from "../src/pipeline/binding-batch.ts";
import { hashRowKeys } from "../src/pipeline/key-hashes.ts";
import { RowBatch } from "../src/pipeline/row-batch.ts";
import { idOf } from "./compare/workload.ts";
import { order } from "./orders.ts";

const { values } = parseArgs({
  options: {
    messages: { type: "string", default: "1000000" },
    size: { type: "string", default: "150" },
    codec: { type: "string", default: "zstd" },
    out: { type: "string" },
  },
});
const MESSAGES = Number(values.messages);
const SIZE = Number(values.size);
const PARTITIONS = 4;
const KEYS = Math.max(1, Math.floor(MESSAGES / 10));
if (!(PARQUET_CODECS as readonly string[]).includes(values.codec)) {
  throw new Error(`--codec ${values.codec}: one of ${PARQUET_CODECS.join(", ")}`);
}
const CODEC = values.codec as ParquetCodec;

/** The commit batches: message ranges [from, to) closed by the default commit policy's limits. */
function batches(): [number, number][] {
  const out: [number, number][] = [];
  let from = 0;
  let bytes = 0;
  for (let n = 0; n < MESSAGES; n++) {
    const id = idOf(n, KEYS);
    bytes += String(id).length + order(n, id, SIZE).length;
    if (n + 1 - from >= DEFAULT_COMMIT.maxMessages || bytes >= DEFAULT_COMMIT.maxBytes) {
      out.push([from, n + 1]);
      from = n + 1;
      bytes = 0;
    }
  }
  if (from < MESSAGES) out.push([from, MESSAGES]);
  return out;
}

/** The latest message of each id in a batch, as the rows an upsert commit writes. */
function batchRows(from: number, to: number, inference: SchemaInference): RowMessages {
  const latest = new Map<number, number>();
  for (let n = from; n < to; n++) latest.set(idOf(n, KEYS), n);
  const winners = [...latest.values()].sort((a, b) => a - b);
  const records: JsonRecord[] = [];
  for (const n of winners) {
    const decoded = decodeJsonMessage(order(n, idOf(n, KEYS), SIZE));
    if (decoded.kind !== "record" || inference.observe(decoded) !== undefined) throw new Error(`message ${n}`);
    records.push(decoded.record);
  }
  inference.settle();
  return {
    count: winners.length,
    partitions: winners.map((n) => idOf(n, KEYS) % PARTITIONS),
    // An offset within its partition: this bench's rows need only be distinct and rising.
    offsets: winners.map((n) => BigInt(n)),
    timestamps: winners.map((n) => BigInt(Date.UTC(2026, 0, 1) + n)),
    keys: winners.map((n) => kafkaKeyText(Buffer.from(String(idOf(n, KEYS))))),
    keyRecords: winners.map(() => null),
    records,
    typed: false,
  };
}

interface Variant {
  name: string;
  /** The `_floe_id` column's type, or undefined for rows that leave it null. */
  type: IcebergType | undefined;
  /** DuckDB's test that a row's `_floe_id` is the hash of its id, in this form. */
  check: string;
}

const hashOfId = "sha256(to_json([id]))[1:32]";
const variants: Variant[] = [
  { name: "null (dedup keys are columns)", type: undefined, check: "_floe_id IS NULL" },
  { name: "string, 32 hex digits (tables created before)", type: "string", check: `_floe_id = ${hashOfId}` },
  { name: "fixed[16] (tables floe creates now)", type: fixed(16), check: `_floe_id = unhex(${hashOfId})` },
  { name: "binary, 16 bytes", type: "binary", check: `_floe_id = unhex(${hashOfId})` },
];

const cuts = batches();
const inference = new SchemaInference();
const rowsOfBatches = cuts.map(([from, to]) => batchRows(from, to, inference));
const base = inference.schema;
const totalRows = rowsOfBatches.reduce((sum, r) => sum + r.count, 0);
console.log(
  `${MESSAGES.toLocaleString("en")} messages, ${KEYS.toLocaleString("en")} ids, ${cuts.length} commit batches, ` +
    `${totalRows.toLocaleString("en")} rows written`,
);

const dir = await mkdtemp(join(tmpdir(), "floe-id-size-"));
const readers = await startReaders({ engines: ["duckdb"] });
interface Result {
  name: string;
  bytes: number;
  floeIdBytes: number;
  files: number;
}
const results: Result[] = [];
try {
  for (const [v, variant] of variants.entries()) {
    const schema: Schema = {
      ...base,
      fields: base.fields.map((f) => (f.name === FLOE_ID && variant.type ? { ...f, type: variant.type } : f)),
    };
    const dedupKeys = [parseDedupKey("id")];
    let bytes = 0;
    let floeIdBytes = 0;
    let files = 0;
    for (const [b, rows] of rowsOfBatches.entries()) {
      const hashes = variant.type === undefined ? undefined : hashRowKeys(rows, dedupKeys, schema);
      const batch = new RowBatch(schema, rows.count);
      for (let i = 0; i < rows.count; i++) batch.append(rows, i, b === 0 ? "c" : "u", hashes);
      for (const written of writeDataFiles(batch.builder.build(), schema, { codec: CODEC })) {
        await writeFile(join(dir, `v${v}-${files++}.parquet`), written.bytes);
        bytes += written.bytes.length;
        floeIdBytes += columnBytes(written.bytes, FLOE_ID);
      }
    }
    const glob = `'${join(dir, `v${v}-*.parquet`)}'`;
    const [read] = await readers.sql(
      "duckdb",
      `SELECT count(*) AS n, count(DISTINCT (id, filename)) AS ids, count(*) FILTER (WHERE ${variant.check}) AS checked
         FROM read_parquet(${glob}, filename = true)`,
      null,
    );
    const expected = { n: BigInt(totalRows), ids: BigInt(totalRows), checked: BigInt(totalRows) };
    if (read?.n !== expected.n || read.ids !== expected.ids || read.checked !== expected.checked) {
      throw new Error(
        `${variant.name}: DuckDB reads ${JSON.stringify(read, (_, x) => (typeof x === "bigint" ? Number(x) : x))}, expected ${totalRows} rows of distinct ids per batch, all checked`,
      );
    }
    results.push({ name: variant.name, bytes, floeIdBytes, files });
    console.log(
      `${variant.name}: ${(bytes / 1e6).toFixed(1)} MB, _floe_id ${(floeIdBytes / 1e6).toFixed(1)} MB (${files} files)`,
    );
  }
} finally {
  await readers.close();
  await rm(dir, { recursive: true, force: true });
}

/** The compressed bytes of a column's chunks in a Parquet file. */
function columnBytes(file: Uint8Array, column: string): number {
  const buffer = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength) as ArrayBuffer;
  let total = 0;
  for (const group of parquetMetadata(buffer).row_groups) {
    for (const chunk of group.columns) {
      if (chunk.meta_data?.path_in_schema.join(".") === column) total += Number(chunk.meta_data.total_compressed_size);
    }
  }
  return total;
}

const load = loadavg()
  .map((l) => l.toFixed(1))
  .join(" ");
const lines = [
  "# Upsert table size by the form of `_floe_id`",
  "",
  `${MESSAGES.toLocaleString("en")} orders-like messages of ~${SIZE} bytes, ${KEYS.toLocaleString("en")} ids (the comparison bench's workload), ` +
    `${cuts.length} commit batches by the default commit policy, ${totalRows.toLocaleString("en")} rows written (each batch's latest message per id), ` +
    `through floe's row writer and data file writer (${CODEC}). Data files only: deletion vectors and metadata are left out. ` +
    `Every variant's files read right in DuckDB. Node ${process.version}, ${new Date().toISOString()}, load ${load}.`,
  `Command: \`node bench/floe-id-size.ts${MESSAGES === 1_000_000 ? "" : ` --messages ${MESSAGES}`}${CODEC === "zstd" ? "" : ` --codec ${CODEC}`}\``,
  "",
  "| `_floe_id` | data files MB | `_floe_id` MB | share |",
  "| --- | ---: | ---: | ---: |",
  ...results.map(
    (r) =>
      `| ${r.name} | ${(r.bytes / 1e6).toFixed(1)} | ${(r.floeIdBytes / 1e6).toFixed(1)} | ${((r.floeIdBytes / r.bytes) * 100).toFixed(0)}% |`,
  ),
  "",
];
if (values.out) await writeFile(values.out, lines.join("\n"));
console.log(lines.join("\n"));
