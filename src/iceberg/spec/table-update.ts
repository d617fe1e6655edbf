// Table updates and requirements: the vocabulary of an Iceberg commit (REST catalog spec,
// CommitTableRequest). A REST catalog applies them on the server; the embedded SQL catalog
// applies them here, with the same rules, so both catalogs accept and refuse the same commits.

import { stringifyJson } from "../../lib/int64-json.ts";
import { IcebergError } from "../errors.ts";
import { equivalentSpecs, type PartitionSpec, partitionSpecToJson } from "./partition-spec.ts";
import { allFieldIds, asStruct, highestFieldId, type Schema, schemaToJson } from "./schema.ts";
import { MAIN_BRANCH, type Snapshot, snapshotToJson } from "./snapshot.ts";
import type { TableMetadata } from "./table-metadata.ts";
import { FORMAT_VERSION } from "./table-properties.ts";

export type TableUpdate =
  | { action: "add-schema"; schema: Schema }
  | { action: "set-current-schema"; schemaId: number }
  | { action: "add-spec"; spec: PartitionSpec }
  | { action: "set-default-spec"; specId: number }
  | { action: "add-snapshot"; snapshot: Snapshot }
  | { action: "set-snapshot-ref"; refName: string; snapshotId: bigint; type: "branch" | "tag" }
  | { action: "remove-snapshots"; snapshotIds: bigint[] }
  | { action: "set-properties"; updates: Record<string, string> }
  | { action: "remove-properties"; removals: string[] };

export type TableRequirement =
  | { type: "assert-create" }
  | { type: "assert-table-uuid"; uuid: string }
  | { type: "assert-ref-snapshot-id"; ref: string; snapshotId: bigint | null }
  | { type: "assert-current-schema-id"; currentSchemaId: number }
  | { type: "assert-last-assigned-field-id"; lastAssignedFieldId: number }
  | { type: "assert-default-spec-id"; defaultSpecId: number }
  | { type: "assert-last-assigned-partition-id"; lastAssignedPartitionId: number };

/** set-current-schema with this id means "the schema added by this commit" (REST spec). */
export const LAST_ADDED_SCHEMA = -1;
/** set-default-spec with this id means "the spec added by this commit" (REST spec). */
export const LAST_ADDED_SPEC = -1;

export function tableUpdateToJson(u: TableUpdate): unknown {
  switch (u.action) {
    case "add-schema":
      return { action: u.action, schema: schemaToJson(u.schema), "last-column-id": highestFieldId(u.schema) };
    case "set-current-schema":
      return { action: u.action, "schema-id": u.schemaId };
    case "add-spec":
      return { action: u.action, spec: partitionSpecToJson(u.spec) };
    case "set-default-spec":
      return { action: u.action, "spec-id": u.specId };
    case "add-snapshot":
      return { action: u.action, snapshot: snapshotToJson(u.snapshot) };
    case "set-snapshot-ref":
      return { action: u.action, "ref-name": u.refName, "snapshot-id": u.snapshotId, type: u.type };
    case "remove-snapshots":
      return { action: u.action, "snapshot-ids": u.snapshotIds };
    case "set-properties":
      return { action: u.action, updates: u.updates };
    case "remove-properties":
      return { action: u.action, removals: u.removals };
  }
}

export function tableRequirementToJson(r: TableRequirement): unknown {
  switch (r.type) {
    case "assert-create":
      return { type: r.type };
    case "assert-table-uuid":
      return { type: r.type, uuid: r.uuid };
    case "assert-ref-snapshot-id":
      return { type: r.type, ref: r.ref, "snapshot-id": r.snapshotId };
    case "assert-current-schema-id":
      return { type: r.type, "current-schema-id": r.currentSchemaId };
    case "assert-last-assigned-field-id":
      return { type: r.type, "last-assigned-field-id": r.lastAssignedFieldId };
    case "assert-default-spec-id":
      return { type: r.type, "default-spec-id": r.defaultSpecId };
    case "assert-last-assigned-partition-id":
      return { type: r.type, "last-assigned-partition-id": r.lastAssignedPartitionId };
  }
}

/** A requirement the table no longer meets: the commit must be rebuilt on fresh metadata. */
export class CommitConflictError extends IcebergError {
  constructor(message: string, options?: ErrorOptions) {
    super("conflict", message, options);
    this.name = "CommitConflictError";
  }
}

export function checkRequirements(metadata: TableMetadata, requirements: readonly TableRequirement[]): void {
  for (const r of requirements) {
    switch (r.type) {
      case "assert-create":
        throw new CommitConflictError("assert-create failed: the table already exists");
      case "assert-table-uuid":
        if (metadata.tableUuid !== r.uuid) {
          throw new CommitConflictError(`assert-table-uuid failed: expected ${r.uuid}, found ${metadata.tableUuid}`);
        }
        break;
      case "assert-ref-snapshot-id": {
        const actual = metadata.refs[r.ref]?.snapshotId ?? null;
        if (actual !== r.snapshotId) {
          throw new CommitConflictError(
            `assert-ref-snapshot-id failed: branch ${r.ref} is at ${actual ?? "no snapshot"}, expected ${r.snapshotId ?? "no snapshot"}`,
          );
        }
        break;
      }
      case "assert-current-schema-id":
        if (metadata.currentSchemaId !== r.currentSchemaId) {
          throw new CommitConflictError(
            `assert-current-schema-id failed: current schema is ${metadata.currentSchemaId}, expected ${r.currentSchemaId}`,
          );
        }
        break;
      case "assert-last-assigned-field-id":
        if (metadata.lastColumnId !== r.lastAssignedFieldId) {
          throw new CommitConflictError(
            `assert-last-assigned-field-id failed: last column id is ${metadata.lastColumnId}, expected ${r.lastAssignedFieldId}`,
          );
        }
        break;
      case "assert-default-spec-id":
        if (metadata.defaultSpecId !== r.defaultSpecId) {
          throw new CommitConflictError(
            `assert-default-spec-id failed: default spec is ${metadata.defaultSpecId}, expected ${r.defaultSpecId}`,
          );
        }
        break;
      case "assert-last-assigned-partition-id":
        if (metadata.lastPartitionId !== r.lastAssignedPartitionId) {
          throw new CommitConflictError(
            `assert-last-assigned-partition-id failed: last partition id is ${metadata.lastPartitionId}, expected ${r.lastAssignedPartitionId}`,
          );
        }
        break;
    }
  }
}

/** Applies updates in order, enforcing the spec rules a catalog must enforce. */
export function applyUpdates(metadata: TableMetadata, updates: readonly TableUpdate[], nowMs: bigint): TableMetadata {
  let m: TableMetadata = { ...metadata, lastUpdatedMs: nowMs };
  let lastAddedSchemaId: number | undefined;
  let lastAddedSpecId: number | undefined;
  for (const u of updates) {
    switch (u.action) {
      case "add-schema": {
        const schemaId = Math.max(-1, ...m.schemas.map((s) => s.schemaId)) + 1;
        m = {
          ...m,
          schemas: [...m.schemas, { ...u.schema, schemaId }],
          lastColumnId: Math.max(m.lastColumnId, highestFieldId(u.schema)),
        };
        lastAddedSchemaId = schemaId;
        break;
      }
      case "set-current-schema": {
        const id = u.schemaId === LAST_ADDED_SCHEMA ? lastAddedSchemaId : u.schemaId;
        if (id === undefined || !m.schemas.some((s) => s.schemaId === id)) {
          throw new IcebergError("validation", `set-current-schema: no schema with id ${u.schemaId}`);
        }
        m = { ...m, currentSchemaId: id };
        break;
      }
      case "add-spec": {
        // Spec "Partitioning": no new spec when an equivalent one exists (same fields: source,
        // transform and name, in order); a new one gets the next id, as Java's builder assigns.
        const equivalent = m.partitionSpecs.find((s) => equivalentSpecs(s, u.spec));
        const schema = m.schemas.find((s) => s.schemaId === m.currentSchemaId);
        for (const f of u.spec.fields) {
          if (schema && !allFieldIds(asStruct(schema)).includes(f.sourceId)) {
            throw new IcebergError(
              "validation",
              `add-spec: partition field ${f.name}: no field ${f.sourceId} in the current schema`,
            );
          }
        }
        const specId = equivalent?.specId ?? Math.max(-1, ...m.partitionSpecs.map((s) => s.specId)) + 1;
        if (!equivalent) {
          m = {
            ...m,
            partitionSpecs: [...m.partitionSpecs, { ...u.spec, specId }],
            lastPartitionId: Math.max(m.lastPartitionId, ...u.spec.fields.map((f) => f.fieldId)),
          };
        }
        lastAddedSpecId = specId;
        break;
      }
      case "set-default-spec": {
        const id = u.specId === LAST_ADDED_SPEC ? lastAddedSpecId : u.specId;
        if (id === undefined || !m.partitionSpecs.some((s) => s.specId === id)) {
          throw new IcebergError("validation", `set-default-spec: no partition spec with id ${u.specId}`);
        }
        m = { ...m, defaultSpecId: id };
        break;
      }
      case "add-snapshot": {
        const s = u.snapshot;
        if (m.snapshots.some((x) => x.snapshotId === s.snapshotId)) {
          throw new CommitConflictError(`add-snapshot: snapshot ${s.snapshotId} already exists`);
        }
        // Spec: sequence numbers increase with every snapshot of a v2+ table.
        if (s.sequenceNumber <= m.lastSequenceNumber) {
          throw new CommitConflictError(
            `add-snapshot: sequence number ${s.sequenceNumber} is not above the table's last ${m.lastSequenceNumber}`,
          );
        }
        let nextRowId = m.nextRowId;
        if (m.formatVersion >= 3) {
          // Spec (row lineage): a snapshot's first-row-id is the table's next-row-id at commit.
          if (s.firstRowId === undefined || s.addedRows === undefined) {
            throw new IcebergError("validation", "add-snapshot: a v3 snapshot needs first-row-id and added-rows");
          }
          if (s.firstRowId < m.nextRowId) {
            throw new CommitConflictError(
              `add-snapshot: first-row-id ${s.firstRowId} is behind next-row-id ${m.nextRowId}`,
            );
          }
          nextRowId = s.firstRowId + s.addedRows;
        }
        m = {
          ...m,
          snapshots: [...m.snapshots, s],
          lastSequenceNumber: s.sequenceNumber,
          nextRowId,
        };
        break;
      }
      case "set-snapshot-ref": {
        if (!m.snapshots.some((s) => s.snapshotId === u.snapshotId)) {
          throw new IcebergError("validation", `set-snapshot-ref: snapshot ${u.snapshotId} does not exist`);
        }
        m = { ...m, refs: { ...m.refs, [u.refName]: { snapshotId: u.snapshotId, type: u.type } } };
        if (u.refName === MAIN_BRANCH) {
          m = {
            ...m,
            currentSnapshotId: u.snapshotId,
            snapshotLog: [...m.snapshotLog, { timestampMs: nowMs, snapshotId: u.snapshotId }],
          };
        }
        break;
      }
      case "remove-snapshots": {
        // Spec: a ref must point at a snapshot of the table, so removing one drops the refs to
        // it (as Java's TableMetadata.Builder does); the snapshot log keeps the other entries.
        const removed = new Set(u.snapshotIds);
        if (m.currentSnapshotId !== undefined && removed.has(m.currentSnapshotId)) {
          throw new IcebergError("validation", `remove-snapshots: ${m.currentSnapshotId} is the current snapshot`);
        }
        m = {
          ...m,
          snapshots: m.snapshots.filter((s) => !removed.has(s.snapshotId)),
          snapshotLog: m.snapshotLog.filter((e) => !removed.has(e.snapshotId)),
          refs: Object.fromEntries(Object.entries(m.refs).filter(([, ref]) => !removed.has(ref.snapshotId))),
        };
        break;
      }
      case "set-properties":
        m = { ...m, properties: { ...m.properties, ...u.updates } };
        break;
      case "remove-properties":
        m = {
          ...m,
          properties: Object.fromEntries(Object.entries(m.properties).filter(([k]) => !u.removals.includes(k))),
        };
        break;
    }
  }
  return m;
}

export interface NewTable {
  location: string;
  schema: Schema;
  spec: PartitionSpec;
  properties?: Record<string, string>;
}

/** The metadata of a new, empty format-version-3 table (what a catalog builds on create). */
export function newTableMetadata(table: NewTable, nowMs: bigint): TableMetadata {
  return {
    formatVersion: 3,
    tableUuid: crypto.randomUUID(),
    location: table.location.replace(/\/+$/, ""),
    lastSequenceNumber: 0n,
    lastUpdatedMs: nowMs,
    lastColumnId: highestFieldId(table.schema),
    schemas: [{ ...table.schema, schemaId: 0 }],
    currentSchemaId: 0,
    partitionSpecs: [{ ...table.spec, specId: 0 }],
    defaultSpecId: 0,
    lastPartitionId: Math.max(999, ...table.spec.fields.map((f) => f.fieldId)),
    sortOrders: [{ orderId: 0, fields: [] }],
    defaultSortOrderId: 0,
    properties: table.properties ?? {},
    snapshots: [],
    snapshotLog: [],
    metadataLog: [],
    refs: {},
    nextRowId: 0n,
  };
}

/** The JSON body of a REST createTable request for the same table; without a location the server picks one. */
export function createTableRequestJson(
  name: string,
  table: Omit<NewTable, "location"> & { location?: string },
): string {
  return stringifyJson({
    name,
    location: table.location,
    schema: schemaToJson(table.schema),
    "partition-spec": partitionSpecToJson(table.spec),
    "write-order": { "order-id": 0, fields: [] },
    "stage-create": false,
    properties: { ...table.properties, [FORMAT_VERSION.key]: String(FORMAT_VERSION.default) },
  });
}
