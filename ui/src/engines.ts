// The target engines a job can name (config/target-engines.ts); whether one reads deletion
// vectors is the server's answer (POST /api/engines/check), not decided here.
export const ENGINES = [
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
];
