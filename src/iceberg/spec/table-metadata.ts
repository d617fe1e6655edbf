// Table metadata (spec "Table Metadata"), the JSON document a catalog points at. floe writes
// format version 3: row lineage (next-row-id) and deletion vectors are v3 features.
import { z } from "zod";
import { IcebergError } from "../errors.ts";
import {
  array,
  describeValue,
  int32,
  int64,
  isJsonObject,
  object,
  oneOf,
  parseDocument,
  refused,
  string,
  stringMap,
} from "./json.ts";
import {
  PARTITION_FIELD_ID_START,
  type PartitionSpec,
  partitionFieldsJson,
  partitionSpecJson,
  partitionSpecToJson,
} from "./partition-spec.ts";
import { type Schema, schemaJson, schemaToJson } from "./schema.ts";
import { MAIN_BRANCH, type Snapshot, type SnapshotRef, snapshotJson, snapshotToJson } from "./snapshot.ts";

/** The newest format version floe reads and writes. */
export const FORMAT_VERSION = 3;

export interface SortOrder {
  orderId: number;
  fields: readonly unknown[];
}

/** Spec: sort order 0 is reserved for the unsorted order. */
export const unsorted: SortOrder = { orderId: 0, fields: [] };

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
  if (!schema) {
    throw new IcebergError(
      "corrupt",
      `table ${metadata.location}: current-schema-id ${metadata.currentSchemaId} has no schema`,
    );
  }
  return schema;
}

export function defaultSpec(metadata: TableMetadata): PartitionSpec {
  const spec = metadata.partitionSpecs.find((s) => s.specId === metadata.defaultSpecId);
  if (!spec) {
    throw new IcebergError(
      "corrupt",
      `table ${metadata.location}: default-spec-id ${metadata.defaultSpecId} has no spec`,
    );
  }
  return spec;
}

export function specById(metadata: TableMetadata, specId: number): PartitionSpec {
  const spec = metadata.partitionSpecs.find((s) => s.specId === specId);
  if (!spec) throw new IcebergError("corrupt", `table ${metadata.location}: no partition spec with id ${specId}`);
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const tableUuid = string.refine((value) => UUID.test(value), {
  error: (issue) => `expected a UUID, got ${describeValue(issue.input)}`,
});

const sortOrderJson = object({ "order-id": int32, fields: array(z.unknown()) }).transform(
  (o): SortOrder => ({ orderId: o["order-id"], fields: o.fields }),
);

const refJson = object({
  "snapshot-id": int64,
  type: z.enum(["branch", "tag"], { error: (issue) => `expected branch or tag, got ${describeValue(issue.input)}` }),
});

const snapshotLogJson = object({ "timestamp-ms": int64, "snapshot-id": int64 });
const metadataLogJson = object({ "timestamp-ms": int64, "metadata-file": string });

/**
 * Table metadata of one format version (spec "Table Metadata Fields"): what v2 and v3 require
 * is required; v1 tables may lack what v1 did not have (last-sequence-number, the lists of
 * schemas, specs and sort orders, given by v1's single `schema` and `partition-spec`), and
 * tables before v3 lack next-row-id. The ids the metadata refers to must be in it.
 */
function tableMetadataSchema(version: 1 | 2 | 3) {
  const v1 = version === 1;
  return object({
    "format-version": int32,
    "table-uuid": tableUuid,
    location: string,
    "last-sequence-number": v1 ? int64.optional() : int64,
    "last-updated-ms": int64,
    "last-column-id": int32,
    schemas: v1 ? array(schemaJson).optional() : array(schemaJson),
    schema: schemaJson.optional(),
    "current-schema-id": v1 ? int32.optional() : int32,
    "partition-specs": v1 ? array(partitionSpecJson).optional() : array(partitionSpecJson),
    "partition-spec": partitionFieldsJson.optional(),
    "default-spec-id": v1 ? int32.optional() : int32,
    "last-partition-id": v1 ? int32.optional() : int32,
    "sort-orders": v1 ? array(sortOrderJson).optional() : array(sortOrderJson),
    "default-sort-order-id": v1 ? int32.optional() : int32,
    properties: stringMap.nullish(),
    "current-snapshot-id": int64.nullish(),
    snapshots: array(snapshotJson(version)).nullish(),
    "snapshot-log": array(snapshotLogJson).nullish(),
    "metadata-log": array(metadataLogJson).nullish(),
    refs: z.record(z.string(), refJson).nullish(),
    "next-row-id": version >= 3 ? int64 : int64.optional(),
  }).transform((o, ctx): TableMetadata => {
    const schemas = o.schemas ?? (o.schema ? [o.schema] : []);
    if (schemas.length === 0) {
      ctx.addIssue({ code: "custom", message: "expected an array of schemas, got nothing", path: ["schemas"] });
    }
    const currentSchemaId = o["current-schema-id"] ?? o.schema?.schemaId ?? 0;
    if (schemas.length > 0 && !schemas.some((s) => s.schemaId === currentSchemaId)) {
      ctx.addIssue({ code: "custom", message: `no schema has id ${currentSchemaId}`, path: ["current-schema-id"] });
    }
    const partitionSpecs = o["partition-specs"] ?? [{ specId: 0, fields: o["partition-spec"] ?? [] }];
    const defaultSpecId = o["default-spec-id"] ?? 0;
    if (!partitionSpecs.some((s) => s.specId === defaultSpecId)) {
      ctx.addIssue({ code: "custom", message: `no partition spec has id ${defaultSpecId}`, path: ["default-spec-id"] });
    }
    const snapshots = o.snapshots ?? [];
    const snapshotIds = new Set(snapshots.map((s) => s.snapshotId));
    const current = o["current-snapshot-id"];
    const currentSnapshotId = current === null || current === undefined || current === -1n ? undefined : current;
    if (currentSnapshotId !== undefined && !snapshotIds.has(currentSnapshotId)) {
      ctx.addIssue({
        code: "custom",
        message: `no snapshot has id ${currentSnapshotId}`,
        path: ["current-snapshot-id"],
      });
    }
    const refs: Record<string, SnapshotRef> = {};
    for (const [name, ref] of Object.entries(o.refs ?? {})) {
      if (!snapshotIds.has(ref["snapshot-id"])) {
        ctx.addIssue({
          code: "custom",
          message: `no snapshot has id ${ref["snapshot-id"]}`,
          path: ["refs", name, "snapshot-id"],
        });
      }
      refs[name] = { snapshotId: ref["snapshot-id"], type: ref.type };
    }
    // Spec: a table whose metadata has no refs treats current-snapshot-id as the main branch.
    if (refs[MAIN_BRANCH] === undefined && currentSnapshotId !== undefined) {
      refs[MAIN_BRANCH] = { snapshotId: currentSnapshotId, type: "branch" };
    }
    const extra = Object.fromEntries(Object.entries(o).filter(([k]) => !modelledKeys.has(k)));
    return {
      formatVersion: version,
      tableUuid: o["table-uuid"],
      location: o.location,
      lastSequenceNumber: o["last-sequence-number"] ?? 0n,
      lastUpdatedMs: o["last-updated-ms"],
      lastColumnId: o["last-column-id"],
      schemas,
      currentSchemaId,
      partitionSpecs,
      defaultSpecId,
      lastPartitionId:
        o["last-partition-id"] ??
        Math.max(PARTITION_FIELD_ID_START - 1, ...partitionSpecs.flatMap((s) => s.fields.map((f) => f.fieldId))),
      sortOrders: o["sort-orders"] ?? [unsorted],
      defaultSortOrderId: o["default-sort-order-id"] ?? 0,
      properties: o.properties ?? {},
      ...(currentSnapshotId === undefined ? {} : { currentSnapshotId }),
      snapshots,
      snapshotLog: (o["snapshot-log"] ?? []).map((e) => ({
        timestampMs: e["timestamp-ms"],
        snapshotId: e["snapshot-id"],
      })),
      metadataLog: (o["metadata-log"] ?? []).map((e) => ({
        timestampMs: e["timestamp-ms"],
        metadataFile: e["metadata-file"],
      })),
      refs,
      nextRowId: o["next-row-id"] ?? 0n,
      ...(Object.keys(extra).length ? { extra } : {}),
    };
  });
}

const versions = { 1: tableMetadataSchema(1), 2: tableMetadataSchema(2), 3: tableMetadataSchema(3) };

/** Table metadata JSON (a metadata file, the `metadata` of a REST response) as the model. */
export const tableMetadataJson: z.ZodType<TableMetadata> = oneOf((value) => {
  const version = isJsonObject(value) ? value["format-version"] : undefined;
  if (version === 1 || version === 2 || version === 3) return versions[version];
  if (typeof version === "number" && Number.isInteger(version) && version > FORMAT_VERSION) {
    // Spec: implementations must throw if a table's version is higher than the supported version.
    return refused(`format version ${version} is newer than floe reads (1 to ${FORMAT_VERSION})`, {
      path: ["format-version"],
      unsupported: true,
    });
  }
  return isJsonObject(value)
    ? refused(`expected 1, 2 or 3, got ${describeValue(version)}`, { path: ["format-version"] })
    : refused(`expected an object, got ${describeValue(value)}`);
});

/** `json` as table metadata; a document that is not is an IcebergError naming `document` and the JSON path. */
export function tableMetadataFromJson(json: unknown, document = "table metadata"): TableMetadata {
  return parseDocument(tableMetadataJson, json, document);
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
