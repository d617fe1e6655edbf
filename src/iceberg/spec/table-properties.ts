// The table properties floe reads or writes (spec "Table Properties", and Java's TableProperties
// for the keys the spec leaves to implementations): every key with its default and its parser,
// in this one place, so that a key is spelled once and its default written once. A value that
// is not one of the property (a size that is not a positive number, say) is read as the default,
// as Java's PropertyUtil does for most keys; the keys whose wrong value would silently write
// something else (a Parquet codec, a metrics mode) refuse it instead, naming key and value.
//
// floe's own keys (floe.*) record which job writes a table and the Kafka position of its last
// commit; their JSON is decoded above iceberg/ (pipeline/snapshot-offsets.ts).
import { IcebergError } from "../errors.ts";

export interface TableProperty<T> {
  readonly key: string;
  /** What an unset property means. */
  readonly default: T;
  /** The value the text says; undefined when it says none (the default then applies); throws for a value refused. */
  readonly parse: (text: string) => T | undefined;
}

/**
 * The value of `property` in `properties`: its parsed text, else its default. `where` (the table)
 * goes in front of the message of a refused value.
 */
export function propertyValue<T>(
  properties: Readonly<Record<string, string>>,
  property: TableProperty<T>,
  where?: string,
): T {
  const text = properties[property.key];
  if (text === undefined) return property.default;
  try {
    return property.parse(text) ?? property.default;
  } catch (error) {
    if (where === undefined || !(error instanceof IcebergError)) throw error;
    throw new IcebergError(error.kind, `${where}: ${error.message}`, { cause: error });
  }
}

function property<T>(key: string, defaultValue: T, parse: (text: string) => T | undefined): TableProperty<T> {
  return { key, default: defaultValue, parse };
}

const MIB = 1024 * 1024;

/** A finite number above `min` (or at it when `inclusive`), else none. */
function number(min: number, inclusive = false) {
  return (text: string): number | undefined => {
    const value = Number(text);
    return text.trim() !== "" && Number.isFinite(value) && (inclusive ? value >= min : value > min) ? value : undefined;
  };
}

const text = (value: string): string => value;

// --- Format ---

/** Spec: the format version a REST createTable asks for; floe creates v3 tables. */
export const FORMAT_VERSION = property("format-version", 3, number(0));

// --- Where files go (spec "Table Properties"); unset: <table location>/data and /metadata ---

export const WRITE_DATA_PATH = property<string | undefined>("write.data.path", undefined, text);
export const WRITE_METADATA_PATH = property<string | undefined>("write.metadata.path", undefined, text);
/** How many previous metadata files the metadata-log keeps. */
export const WRITE_METADATA_PREVIOUS_VERSIONS_MAX = property(
  "write.metadata.previous-versions-max",
  100,
  number(0, true),
);

// --- Data files ---

/**
 * Bytes a data file should not exceed. floe's default is 128 MiB (Java's is 512 MiB): files of
 * a streaming sync land often and small tables stay a few files; compaction aims at the same
 * size, so Spark's rewrite_data_files and floe's agree when floe records it on the table.
 */
export const WRITE_TARGET_FILE_SIZE_BYTES = property("write.target-file-size-bytes", 128 * MIB, number(0));

/** The Parquet codecs floe writes (the job file's `compression` offers the same). */
export const PARQUET_CODECS = ["zstd", "snappy", "gzip", "lz4", "uncompressed"] as const;
export type ParquetCodec = (typeof PARQUET_CODECS)[number];

// Java reads the codec case-insensitively as a Parquet codec name. lz4_raw, Java's name for
// the codec floe writes for lz4 (parquet/compression-codec.ts), is the same one.
const CODEC_ALIASES: Readonly<Record<string, ParquetCodec>> = { lz4_raw: "lz4" };
const REFUSED_CODECS: Readonly<Record<string, string>> = {
  brotli: "Spark cannot read Brotli-compressed Parquet (its Parquet library has no Brotli codec)",
  lzo: "floe cannot write LZO-compressed Parquet",
};

const COMPRESSION_KEY = "write.parquet.compression-codec";

function parseCodec(value: string): ParquetCodec {
  const name = value.toLowerCase();
  if ((PARQUET_CODECS as readonly string[]).includes(name)) return name as ParquetCodec;
  const alias = CODEC_ALIASES[name];
  if (alias) return alias;
  const accepted = `use ${PARQUET_CODECS.join(", ")}`;
  const reason = REFUSED_CODECS[name];
  if (reason) throw new IcebergError("unsupported", `${COMPRESSION_KEY} ${value}: ${reason}; ${accepted}`);
  throw new IcebergError(
    "validation",
    `${COMPRESSION_KEY} ${JSON.stringify(value)} is not a Parquet codec; ${accepted}`,
  );
}

/** Which codec data files get; zstd, Iceberg's default since 1.4. Refuses a codec floe does not write. */
export const WRITE_PARQUET_COMPRESSION_CODEC = property<ParquetCodec>(COMPRESSION_KEY, "zstd", parseCodec);

// --- Column metrics (Java's MetricsConfig): none | counts | truncate(N) | full ---

export type MetricsMode =
  | { kind: "none" }
  | { kind: "counts" }
  | { kind: "truncate"; length: number }
  | { kind: "full" };

export function parseMetricsMode(text: string): MetricsMode {
  const mode = text.trim().toLowerCase();
  if (mode === "none" || mode === "counts" || mode === "full") return { kind: mode };
  const truncate = /^truncate\((\d+)\)$/.exec(mode);
  if (truncate && Number(truncate[1]) > 0) return { kind: "truncate", length: Number(truncate[1]) };
  throw new IcebergError("validation", `invalid metrics mode ${JSON.stringify(text)}`);
}

/** The mode of every column no column property names; unset: truncate(16) within the inferred limit. */
export const WRITE_METADATA_METRICS_DEFAULT = property<MetricsMode | undefined>(
  "write.metadata.metrics.default",
  undefined,
  parseMetricsMode,
);
/** The mode of one column, by its full dotted name. */
export function writeMetadataMetricsColumn(column: string): TableProperty<MetricsMode | undefined> {
  return property(`write.metadata.metrics.column.${column}`, undefined, parseMetricsMode);
}
/** Without a default mode, columns past this many keep no metrics. */
export const WRITE_METADATA_METRICS_MAX_INFERRED_COLUMN_DEFAULTS = property(
  "write.metadata.metrics.max-inferred-column-defaults",
  100,
  number(0, true),
);

// --- Commits: retries (floe tries more often than Java's 4, see commit/retry.ts) and manifest merging ---

export const COMMIT_RETRY_NUM_RETRIES = property("commit.retry.num-retries", 9, number(0, true));
export const COMMIT_RETRY_MIN_WAIT_MS = property("commit.retry.min-wait-ms", 100, number(0, true));
export const COMMIT_RETRY_MAX_WAIT_MS = property("commit.retry.max-wait-ms", 10_000, number(0, true));
export const COMMIT_MANIFEST_MERGE_ENABLED = property("commit.manifest-merge.enabled", true, (t) => t !== "false");
export const COMMIT_MANIFEST_MIN_COUNT_TO_MERGE = property("commit.manifest.min-count-to-merge", 100, number(0));
export const COMMIT_MANIFEST_TARGET_SIZE_BYTES = property("commit.manifest.target-size-bytes", 8 * MIB, number(0));

// --- Snapshot retention (spec "Snapshot Retention Policy") ---

export const HISTORY_EXPIRE_MAX_SNAPSHOT_AGE_MS = property(
  "history.expire.max-snapshot-age-ms",
  5n * 24n * 3600n * 1000n,
  (t) => (/^\s*\d+\s*$/.test(t) ? BigInt(t.trim()) : undefined),
);
export const HISTORY_EXPIRE_MIN_SNAPSHOTS_TO_KEEP = property("history.expire.min-snapshots-to-keep", 1, (t) => {
  const value = Number(t);
  return Number.isInteger(value) && value > 0 ? value : undefined;
});

// --- floe's own ---

/** The job that writes the table (also the summary key of each of its snapshots). */
export const FLOE_JOB = property<string | undefined>("floe.job", undefined, text);
/** The Kafka position of floe's last commit: JSON `{"<topic>": {"<partition>": "<next offset>"}}`. */
export const FLOE_KAFKA_OFFSETS = property<string | undefined>("floe.kafka.offsets", undefined, text);
/** JSON `{"<topic>": "<topic id>"}` for the topics of floe.kafka.offsets whose id is known. */
export const FLOE_KAFKA_TOPIC_IDS = property<string | undefined>("floe.kafka.topic-ids", undefined, text);
/** The snapshot that recorded floe.kafka.offsets, and its sequence number. */
export const FLOE_KAFKA_SNAPSHOT_ID = property<string | undefined>("floe.kafka.snapshot-id", undefined, text);
export const FLOE_KAFKA_SEQUENCE_NUMBER = property<string | undefined>("floe.kafka.sequence-number", undefined, text);
