// Snapshots (spec "Snapshots") and the v3 row-lineage fields they carry.
import { int64, optionalInt64 } from "./json.ts";

export type SnapshotOperation = "append" | "replace" | "overwrite" | "delete";

export interface Snapshot {
  snapshotId: bigint;
  parentSnapshotId?: bigint;
  sequenceNumber: bigint;
  timestampMs: bigint;
  manifestList: string;
  /** `operation` plus the summary keys Java writes (added-data-files, total-records, ...) and caller properties. */
  summary: { operation: SnapshotOperation } & Record<string, string>;
  schemaId?: number;
  /** v3 row lineage: the table's next-row-id when this snapshot was committed. */
  firstRowId?: bigint;
  /** v3 row lineage: rows assigned ids by this snapshot (upper bound on rows added). */
  addedRows?: bigint;
}

export interface SnapshotRef {
  snapshotId: bigint;
  type: "branch" | "tag";
}

export const MAIN_BRANCH = "main";

export function snapshotToJson(s: Snapshot): unknown {
  return {
    "snapshot-id": s.snapshotId,
    ...(s.parentSnapshotId === undefined ? {} : { "parent-snapshot-id": s.parentSnapshotId }),
    "sequence-number": s.sequenceNumber,
    "timestamp-ms": s.timestampMs,
    "manifest-list": s.manifestList,
    summary: s.summary,
    ...(s.schemaId === undefined ? {} : { "schema-id": s.schemaId }),
    ...(s.firstRowId === undefined ? {} : { "first-row-id": s.firstRowId }),
    ...(s.addedRows === undefined ? {} : { "added-rows": s.addedRows }),
  };
}

export function snapshotFromJson(json: unknown): Snapshot {
  const o = json as Record<string, unknown>;
  const parent = optionalInt64(o["parent-snapshot-id"], "parent-snapshot-id");
  const firstRowId = optionalInt64(o["first-row-id"], "first-row-id");
  const addedRows = optionalInt64(o["added-rows"], "added-rows");
  return {
    snapshotId: int64(o["snapshot-id"], "snapshot-id"),
    ...(parent === undefined ? {} : { parentSnapshotId: parent }),
    sequenceNumber: int64(o["sequence-number"] ?? 0, "sequence-number"),
    timestampMs: int64(o["timestamp-ms"], "timestamp-ms"),
    manifestList: String(o["manifest-list"]),
    summary: (o.summary ?? { operation: "append" }) as Snapshot["summary"],
    ...(o["schema-id"] === undefined ? {} : { schemaId: Number(o["schema-id"]) }),
    ...(firstRowId === undefined ? {} : { firstRowId }),
    ...(addedRows === undefined ? {} : { addedRows }),
  };
}

/** A random positive int64, as Java's SnapshotIdGenerator does (ids need only be unique per table). */
export function newSnapshotId(): bigint {
  const bytes = crypto.getRandomValues(new BigUint64Array(1));
  return bytes[0]! & 0x7fff_ffff_ffff_ffffn || 1n;
}
