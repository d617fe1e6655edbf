// The Parquet codecs floe writes data files with: the values of the table property
// write.parquet.compression-codec that it accepts.
export const PARQUET_CODECS = ["zstd", "snappy", "gzip", "uncompressed"] as const;
export type ParquetCodec = (typeof PARQUET_CODECS)[number];
