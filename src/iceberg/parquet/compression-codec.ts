// The table property write.parquet.compression-codec as Parquet writes it. floe accepts the
// values whose files DuckDB, PyIceberg (pyarrow) and Spark (parquet-mr) all read, and refuses
// the others before a file is written, rather than writing something else (the key, its
// default and its parser: spec/table-properties.ts):
// - lz4: Java writes Parquet's deprecated LZ4 codec (Hadoop framing), which DuckDB refuses
//   ("Unsupported compression codec LZ4"). floe writes LZ4_RAW, as PyIceberg does through
//   pyarrow; all three read it. lz4_raw, Java's name for that codec, is the same.
// - brotli: Spark's Parquet library ships no Brotli codec (BrotliCodec not found): refused.
// - lzo: parquet-wasm cannot write it: refused.
import * as parquet from "parquet-wasm";
import { type ParquetCodec, propertyValue, WRITE_PARQUET_COMPRESSION_CODEC } from "../spec/table-properties.ts";

export { PARQUET_CODECS, type ParquetCodec } from "../spec/table-properties.ts";

export const parquetCompression: Readonly<Record<ParquetCodec, parquet.Compression>> = {
  zstd: parquet.Compression.ZSTD,
  snappy: parquet.Compression.SNAPPY,
  gzip: parquet.Compression.GZIP,
  lz4: parquet.Compression.LZ4_RAW,
  uncompressed: parquet.Compression.UNCOMPRESSED,
};

/** The codec the table's properties ask for; `table` names it in the error of a value floe does not write. */
export function compressionCodec(properties: Readonly<Record<string, string>>, table: string): ParquetCodec {
  return propertyValue(properties, WRITE_PARQUET_COMPRESSION_CODEC, table);
}
