// target_engines: the engines that will read the tables. floe writes what every one of them
// reads, or refuses the job before it writes anything.
//
// Upsert mode retires old rows with deletion vectors (Iceberg format v3, Puffin
// deletion-vector-v1 blobs); v3 has no other way (position delete files are v2 only). So an
// engine that does not apply deletion vectors would read every retired row as live: combined
// with an upsert stream that is a config error. Append mode writes no deletes; any engine that
// reads format v3 reads its tables.

export const TARGET_ENGINES = [
  "databricks",
  "duckdb",
  "spark",
  "snowflake",
  "trino",
  "pyiceberg",
  "athena",
  "bigquery",
  "redshift",
  "iceberg-rust",
] as const;

export type TargetEngine = (typeof TARGET_ENGINES)[number];

interface EngineSupport {
  readonly deletionVectors: boolean;
  /** The release that reads them, or why not: shown in errors and `floe check`. */
  readonly note: string;
}

export const ENGINE_SUPPORT: Readonly<Record<TargetEngine, EngineSupport>> = {
  databricks: { deletionVectors: true, note: "Iceberg v3 tables with deletion vectors" },
  duckdb: { deletionVectors: true, note: "iceberg extension 1.3 or later" },
  spark: { deletionVectors: true, note: "Iceberg Spark runtime 1.8 or later (1.10 for Spark 4.0)" },
  snowflake: { deletionVectors: true, note: "Iceberg v3 tables with deletion vectors" },
  trino: { deletionVectors: true, note: "a release with Iceberg format v3 support" },
  pyiceberg: { deletionVectors: true, note: "0.10 or later" },
  athena: { deletionVectors: false, note: "reads Iceberg v2 position and equality deletes, not v3 deletion vectors" },
  bigquery: { deletionVectors: false, note: "does not apply Iceberg v3 deletion vectors" },
  redshift: { deletionVectors: false, note: "does not apply Iceberg v3 deletion vectors" },
  "iceberg-rust": { deletionVectors: false, note: "0.10 reads v3 tables but does not apply deletion vectors" },
};

/** One engine that cannot read what the upsert streams write. */
export interface EngineConflict {
  readonly engine: TargetEngine;
  /** Index in target_engines, to point at the line of the job file. */
  readonly index: number;
  /** The upsert streams by topic name; "default_stream" when that one is upsert. */
  readonly upsertStreams: readonly string[];
  readonly message: string;
}

/** The engines that read no deletion vectors while some stream is in upsert mode; empty when all is well. */
export function engineConflicts(
  targetEngines: readonly TargetEngine[],
  upsertStreams: readonly string[],
): EngineConflict[] {
  if (upsertStreams.length === 0) return [];
  const conflicts: EngineConflict[] = [];
  targetEngines.forEach((engine, index) => {
    const support = ENGINE_SUPPORT[engine];
    if (support.deletionVectors) return;
    const streams = upsertStreams.join(", ");
    conflicts.push({
      engine,
      index,
      upsertStreams,
      message:
        `${engine} ${support.note}, and upsert mode retires old rows with deletion vectors ` +
        `(upsert streams: ${streams}); ${engine} would read the retired rows as live. ` +
        `Use mode: append for ${upsertStreams.length === 1 ? "that stream" : "those streams"}, or remove ${engine}.`,
    });
  });
  return conflicts;
}
