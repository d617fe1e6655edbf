// The table property write.parquet.compression-codec: which Parquet codec data files get. Iceberg
// Java reads its value case-insensitively as a Parquet codec name; floe accepts the values whose
// files DuckDB, PyIceberg (pyarrow) and Spark (parquet-mr) all read, and refuses the others
// before a file is written, rather than writing something else:
// - lz4: Java writes Parquet's deprecated LZ4 codec (Hadoop framing), which DuckDB refuses
//   ("Unsupported compression codec LZ4"). floe writes LZ4_RAW, as PyIceberg does through
//   pyarrow; all three read it. lz4_raw, Java's name for that codec, is the same.
// - brotli: Spark's Parquet library ships no Brotli codec (BrotliCodec not found): refused.
// - lzo: parquet-wasm cannot write it: refused.
import * as parquet from "parquet-wasm";
import { IcebergError } from "../errors.ts";

export const COMPRESSION_CODEC_PROPERTY = "write.parquet.compression-codec";

/** The values floe writes (the job file's `compression` offers the same). */
export const PARQUET_CODECS = ["zstd", "snappy", "gzip", "lz4", "uncompressed"] as const;
export type ParquetCodec = (typeof PARQUET_CODECS)[number];

/** Iceberg's default since 1.4. */
export const DEFAULT_CODEC: ParquetCodec = "zstd";

export const parquetCompression: Readonly<Record<ParquetCodec, parquet.Compression>> = {
  zstd: parquet.Compression.ZSTD,
  snappy: parquet.Compression.SNAPPY,
  gzip: parquet.Compression.GZIP,
  lz4: parquet.Compression.LZ4_RAW,
  uncompressed: parquet.Compression.UNCOMPRESSED,
};

const aliases: Readonly<Record<string, ParquetCodec>> = { lz4_raw: "lz4" };

const refused: Readonly<Record<string, string>> = {
  brotli: "Spark cannot read Brotli-compressed Parquet (its Parquet library has no Brotli codec)",
  lzo: "floe cannot write LZO-compressed Parquet",
};

/** The codec the table's properties ask for; `table` names it in the error of a value floe does not write. */
export function compressionCodec(properties: Readonly<Record<string, string>>, table: string): ParquetCodec {
  const value = properties[COMPRESSION_CODEC_PROPERTY];
  if (value === undefined) return DEFAULT_CODEC;
  const name = value.toLowerCase();
  if (Object.hasOwn(parquetCompression, name)) return name as ParquetCodec;
  const alias = aliases[name];
  if (alias) return alias;
  const accepted = `use ${Object.keys(parquetCompression).join(", ")}`;
  const reason = refused[name];
  if (reason)
    throw new IcebergError("unsupported", `${table}: ${COMPRESSION_CODEC_PROPERTY} ${value}: ${reason}; ${accepted}`);
  throw new IcebergError(
    "validation",
    `${table}: ${COMPRESSION_CODEC_PROPERTY} ${JSON.stringify(value)} is not a Parquet codec; ${accepted}`,
  );
}
