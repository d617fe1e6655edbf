// Snapshots (spec "Snapshots") and the v3 row-lineage fields they carry.
import { z } from "zod";
import { describeValue, int32, int64, object, string } from "./json.ts";

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

const OPERATIONS = ["append", "replace", "overwrite", "delete"] as const;

const summaryJson = object({
  operation: z.enum(OPERATIONS, {
    error: (issue) => `expected one of ${OPERATIONS.join(", ")}, got ${describeValue(issue.input)}`,
  }),
}).catchall(string);

/**
 * A snapshot as table metadata holds it. v1 snapshots may lack sequence-number (0) and summary
 * (an append); floe does not read v1's inline `manifests` list, only a manifest-list file.
 */
export function snapshotJson(formatVersion: number) {
  const v1 = formatVersion === 1;
  return object({
    "snapshot-id": int64,
    "parent-snapshot-id": int64.nullish(),
    "sequence-number": v1 ? int64.optional() : int64,
    "timestamp-ms": int64,
    "manifest-list": string,
    summary: v1 ? summaryJson.optional() : summaryJson,
    "schema-id": int32.nullish(),
    "first-row-id": int64.nullish(),
    "added-rows": int64.nullish(),
  }).transform(
    (o): Snapshot => ({
      snapshotId: o["snapshot-id"],
      ...(o["parent-snapshot-id"] == null ? {} : { parentSnapshotId: o["parent-snapshot-id"] }),
      sequenceNumber: o["sequence-number"] ?? 0n,
      timestampMs: o["timestamp-ms"],
      manifestList: o["manifest-list"],
      summary: (o.summary ?? { operation: "append" }) as Snapshot["summary"],
      ...(o["schema-id"] == null ? {} : { schemaId: o["schema-id"] }),
      ...(o["first-row-id"] == null ? {} : { firstRowId: o["first-row-id"] }),
      ...(o["added-rows"] == null ? {} : { addedRows: o["added-rows"] }),
    }),
  );
}

/** A random positive int64, as Java's SnapshotIdGenerator does (ids need only be unique per table). */
export function newSnapshotId(): bigint {
  const bytes = crypto.getRandomValues(new BigUint64Array(1));
  return bytes[0]! & 0x7fff_ffff_ffff_ffffn || 1n;
}
