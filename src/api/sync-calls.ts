// What the API asks of sync/ that needs Kafka or the catalog, loaded when first used so that
// `floe serve` starts without the engine's modules.

import { Table } from "../iceberg/table.ts";
import { discoverBindings, withDiscoveryConnections } from "../inspect/discover-bindings.ts";
import { jobTables, previewJobTable } from "../inspect/job-tables.ts";
import { testDestination as probeDestination, testSource as probeSource } from "../inspect/test-connection.ts";
import type { Destination } from "../job/destination.ts";
import type { Job } from "../job/job.ts";
import type { Source } from "../job/source.ts";
import { openConnections, withCatalog } from "../pipeline/connect.ts";
import { namespaceTables, tableHealth } from "../pipeline/maintain.ts";
import { measureLag } from "../runtime/job-status.ts";
import type { JobGroup } from "./schemas.ts";

export const testSource = (source: Source) => probeSource(source);
export const testDestination = (destination: Destination) => probeDestination(destination);

/** `floe discover`'s discovery (inspect/discover-bindings.ts), in the shape of the streams step. */
export async function discover(job: Job, sample: number) {
  const found = await withDiscoveryConnections(job, (connections) => discoverBindings(job, connections, { sample }));
  return {
    topics: found.streams.map((s) => ({
      topic: s.topic,
      table: s.table,
      tableExists: s.tableExists,
      partitions: s.partitions.map((p) => ({
        partition: p.partition,
        logStartOffset: String(p.logStartOffset),
        highWatermark: String(p.highWatermark),
        retained: Number(p.retained),
      })),
      retained: Number(s.retained),
      sampled: s.sample.messages,
      columns: s.sample.columns.map((c) => ({
        name: c.name,
        ...(c.type === undefined ? {} : { type: c.type }),
        nullable: c.nullable || c.nulls > 0,
        ...(c.example === undefined ? {} : { example: c.example }),
      })),
    })),
    skipped: found.skipped.map((t) => ({ topic: t.topic, reason: t.reason })),
  };
}

/** Each table's health (files, average size, deleted rows, snapshots, manifests). */
export function health(job: Job) {
  return withCatalog(job.destination, async (catalog) => {
    const out = [];
    for (const identifier of await namespaceTables(catalog, job.namespace)) {
      out.push({ table: identifier.name, ...(await tableHealth(await Table.load(catalog, identifier))) });
    }
    return out;
  });
}

/**
 * The job's consumer group as `floe status` shows it (runtime/job-status.ts), for any job: floe
 * serve's jobs have no `cluster:` of their own, but `floe run` replicas of the same job may be
 * the group's members.
 */
export async function group(job: Job): Promise<JobGroup> {
  const connections = await openConnections(job);
  try {
    const lag = await measureLag(job, connections, { members: true });
    const found = lag.group!;
    return {
      group: found.group,
      state: found.state,
      protocol: found.protocol,
      members: found.members.map((m) => ({
        memberId: m.memberId,
        clientId: m.clientId,
        host: m.host,
        partitions: m.partitions.map((p) => ({ ...p })),
        lag: Number(m.lag),
        moved: m.moved ? { gained: [...m.moved.gained], gaveUp: [...m.moved.gaveUp] } : null,
      })),
      lastRebalance: found.lastRebalance
        ? { generation: found.lastRebalance.generationId, at: new Date(found.lastRebalance.at).toISOString() }
        : null,
      lag: Number(lag.partitions.reduce((sum, p) => sum + p.lag, 0n)),
    };
  } finally {
    await connections.close();
  }
}

export function tables(job: Job) {
  return withCatalog(job.destination, (catalog) => jobTables(job, catalog));
}

export async function preview(job: Job, table: string, limit: number) {
  const result = await withCatalog(job.destination, (catalog) => previewJobTable(job, catalog, table, limit));
  // The message's fields first, floe's system columns (_kafka_key, _op_type, ...) after them.
  const names = [...new Set(result.rows.flatMap((r) => Object.keys(r)))];
  const columns = [...names.filter((n) => !n.startsWith("_")), ...names.filter((n) => n.startsWith("_"))];
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
