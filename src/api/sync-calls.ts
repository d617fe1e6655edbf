// What the API asks of sync/ that needs Kafka or the catalog, loaded when first used so that
// `floe serve` starts without the engine's modules.
import type { Destination } from "../config/destination.ts";
import type { Job } from "../config/job.ts";
import type { Source } from "../config/source.ts";
import { withCatalog, withKafkaSource } from "../sync/connect.ts";
import { jobTables, previewJobTable } from "../sync/job-tables.ts";
import { discoverStreams } from "../sync/stream-discovery.ts";
import { testDestination as probeDestination, testSource as probeSource } from "../sync/test-connection.ts";

export const testSource = (source: Source) => probeSource(source);
export const testDestination = (destination: Destination) => probeDestination(destination);

export function discover(source: Source, topicPattern: string | undefined, sample: number) {
  return withKafkaSource(source, (s) => discoverStreams(s, { topicPattern, sample }));
}

export function tables(job: Job) {
  return withCatalog(job.destination, (catalog) => jobTables(job, catalog));
}

export async function preview(job: Job, table: string, limit: number) {
  const result = await withCatalog(job.destination, (catalog) => previewJobTable(job, catalog, table, limit));
  const columns = [...new Set(result.rows.flatMap((r) => Object.keys(r)))];
  return { columns, rows: result.rows.map(plainRow), liveRows: result.liveRows };
}

/** JSON-safe values: bigints and timestamps as text, bytes as base64. */
function plainRow(row: Record<string, unknown>): Record<string, unknown> {
  const plain = (v: unknown): unknown => {
    if (typeof v === "bigint") return v.toString();
    if (v instanceof Date) return v.toISOString();
    if (v instanceof Uint8Array) return Buffer.from(v).toString("base64");
    if (Array.isArray(v)) return v.map(plain);
    if (typeof v === "object" && v !== null)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
    return v;
  };
  return plain(row) as Record<string, unknown>;
}
