// Table metadata (spec "Table Metadata"), the JSON document a catalog points at. floe writes
// format version 3: row lineage (next-row-id) and deletion vectors are v3 features.
import { int64, optionalInt64 } from "./json.ts";
import { type PartitionSpec, partitionSpecFromJson, partitionSpecToJson } from "./partition-spec.ts";
import { type Schema, schemaFromJson, schemaToJson } from "./schema.ts";
import { MAIN_BRANCH, type Snapshot, type SnapshotRef, snapshotFromJson, snapshotToJson } from "./snapshot.ts";

export interface SortOrder {
  orderId: number;
  fields: readonly unknown[];
}

export interface TableMetadata {
  formatVersion: number;
  tableUuid: string;
  location: string;
  lastSequenceNumber: bigint;
  lastUpdatedMs: bigint;
  lastColumnId: number;
  schemas: readonly Schema[];
  currentSchemaId: number;
  partitionSpecs: readonly PartitionSpec[];
  defaultSpecId: number;
  lastPartitionId: number;
  sortOrders: readonly SortOrder[];
  defaultSortOrderId: number;
  properties: Readonly<Record<string, string>>;
  currentSnapshotId?: bigint;
  snapshots: readonly Snapshot[];
  snapshotLog: readonly { timestampMs: bigint; snapshotId: bigint }[];
  metadataLog: readonly { timestampMs: bigint; metadataFile: string }[];
  refs: Readonly<Record<string, SnapshotRef>>;
  /** v3 row lineage: the first row id the next snapshot assigns. */
  nextRowId: bigint;
  /** Keys we do not model (statistics, encryption-keys, ...), carried through untouched. */
  extra?: Readonly<Record<string, unknown>>;
}

export function currentSchema(metadata: TableMetadata): Schema {
  const schema = metadata.schemas.find((s) => s.schemaId === metadata.currentSchemaId);
  if (!schema)
    throw new Error(`table ${metadata.location}: current-schema-id ${metadata.currentSchemaId} has no schema`);
  return schema;
}

export function defaultSpec(metadata: TableMetadata): PartitionSpec {
  const spec = metadata.partitionSpecs.find((s) => s.specId === metadata.defaultSpecId);
  if (!spec) throw new Error(`table ${metadata.location}: default-spec-id ${metadata.defaultSpecId} has no spec`);
  return spec;
}

export function specById(metadata: TableMetadata, specId: number): PartitionSpec {
  const spec = metadata.partitionSpecs.find((s) => s.specId === specId);
  if (!spec) throw new Error(`table ${metadata.location}: no partition spec with id ${specId}`);
  return spec;
}

/** The snapshot the main branch points at, or undefined for a table with no data yet. */
export function currentSnapshot(metadata: TableMetadata): Snapshot | undefined {
  const id = metadata.refs[MAIN_BRANCH]?.snapshotId ?? metadata.currentSnapshotId;
  return id === undefined ? undefined : snapshotById(metadata, id);
}

export function snapshotById(metadata: TableMetadata, snapshotId: bigint): Snapshot | undefined {
  return metadata.snapshots.find((s) => s.snapshotId === snapshotId);
}

/** `from` and its parents, newest first, as far as the metadata still holds them (expiry cuts the chain). */
export function* ancestors(metadata: TableMetadata, from: Snapshot | undefined): Generator<Snapshot> {
  for (let s = from; s; s = s.parentSnapshotId === undefined ? undefined : snapshotById(metadata, s.parentSnapshotId)) {
    yield s;
  }
}

const modelledKeys = new Set([
  "format-version",
  "table-uuid",
  "location",
  "last-sequence-number",
  "last-updated-ms",
  "last-column-id",
  "schemas",
  "current-schema-id",
  "partition-specs",
  "default-spec-id",
  "last-partition-id",
  "sort-orders",
  "default-sort-order-id",
  "properties",
  "current-snapshot-id",
  "snapshots",
  "snapshot-log",
  "metadata-log",
  "refs",
  "next-row-id",
  // v1 leftovers that v2+ writers drop
  "schema",
  "partition-spec",
]);

export function tableMetadataFromJson(json: unknown): TableMetadata {
  const o = json as Record<string, unknown>;
  const currentSnapshotId = optionalInt64(o["current-snapshot-id"], "current-snapshot-id");
  const refs: Record<string, SnapshotRef> = {};
  for (const [name, ref] of Object.entries((o.refs ?? {}) as Record<string, Record<string, unknown>>)) {
    refs[name] = {
      snapshotId: int64(ref["snapshot-id"], `refs.${name}.snapshot-id`),
      type: ref.type as "branch" | "tag",
    };
  }
  // Spec: a table whose metadata has no refs treats current-snapshot-id as the main branch.
  if (refs[MAIN_BRANCH] === undefined && currentSnapshotId !== undefined && currentSnapshotId !== -1n) {
    refs[MAIN_BRANCH] = { snapshotId: currentSnapshotId, type: "branch" };
  }
  const extra = Object.fromEntries(Object.entries(o).filter(([k]) => !modelledKeys.has(k)));
  return {
    formatVersion: Number(o["format-version"]),
    tableUuid: String(o["table-uuid"]),
    location: String(o.location),
    lastSequenceNumber: int64(o["last-sequence-number"] ?? 0, "last-sequence-number"),
    lastUpdatedMs: int64(o["last-updated-ms"], "last-updated-ms"),
    lastColumnId: Number(o["last-column-id"]),
    schemas: ((o.schemas ?? []) as unknown[]).map(schemaFromJson),
    currentSchemaId: Number(o["current-schema-id"] ?? 0),
    partitionSpecs: ((o["partition-specs"] ?? []) as unknown[]).map(partitionSpecFromJson),
    defaultSpecId: Number(o["default-spec-id"] ?? 0),
    lastPartitionId: Number(o["last-partition-id"] ?? 999),
    sortOrders: ((o["sort-orders"] ?? []) as Record<string, unknown>[]).map((s) => ({
      orderId: Number(s["order-id"]),
      fields: (s.fields ?? []) as unknown[],
    })),
    defaultSortOrderId: Number(o["default-sort-order-id"] ?? 0),
    properties: (o.properties ?? {}) as Record<string, string>,
    ...(currentSnapshotId === undefined || currentSnapshotId === -1n ? {} : { currentSnapshotId }),
    snapshots: ((o.snapshots ?? []) as unknown[]).map(snapshotFromJson),
    snapshotLog: ((o["snapshot-log"] ?? []) as Record<string, unknown>[]).map((e) => ({
      timestampMs: int64(e["timestamp-ms"], "snapshot-log.timestamp-ms"),
      snapshotId: int64(e["snapshot-id"], "snapshot-log.snapshot-id"),
    })),
    metadataLog: ((o["metadata-log"] ?? []) as Record<string, unknown>[]).map((e) => ({
      timestampMs: int64(e["timestamp-ms"], "metadata-log.timestamp-ms"),
      metadataFile: String(e["metadata-file"]),
    })),
    refs,
    nextRowId: int64(o["next-row-id"] ?? 0, "next-row-id"),
    ...(Object.keys(extra).length ? { extra } : {}),
  };
}

export function tableMetadataToJson(m: TableMetadata): unknown {
  return {
    "format-version": m.formatVersion,
    "table-uuid": m.tableUuid,
    location: m.location,
    "last-sequence-number": m.lastSequenceNumber,
    "last-updated-ms": m.lastUpdatedMs,
    "last-column-id": m.lastColumnId,
    "current-schema-id": m.currentSchemaId,
    schemas: m.schemas.map(schemaToJson),
    "default-spec-id": m.defaultSpecId,
    "partition-specs": m.partitionSpecs.map(partitionSpecToJson),
    "last-partition-id": m.lastPartitionId,
    "default-sort-order-id": m.defaultSortOrderId,
    "sort-orders": m.sortOrders.map((s) => ({ "order-id": s.orderId, fields: s.fields })),
    properties: m.properties,
    ...(m.currentSnapshotId === undefined ? {} : { "current-snapshot-id": m.currentSnapshotId }),
    refs: Object.fromEntries(
      Object.entries(m.refs).map(([name, r]) => [name, { "snapshot-id": r.snapshotId, type: r.type }]),
    ),
    snapshots: m.snapshots.map(snapshotToJson),
    "snapshot-log": m.snapshotLog.map((e) => ({ "timestamp-ms": e.timestampMs, "snapshot-id": e.snapshotId })),
    "metadata-log": m.metadataLog.map((e) => ({ "timestamp-ms": e.timestampMs, "metadata-file": e.metadataFile })),
    "next-row-id": m.nextRowId,
    ...m.extra,
  };
}
