// Partition evolution (spec "Partition Evolution"): the table's default spec becomes the one
// asked for, given as (column name, transform) pairs bound to the current schema. A metadata-only
// commit; data files already written keep the spec they were written with.
// Spec rules it follows:
// - no new spec when an equivalent one exists: that one becomes the default again;
// - partition field ids are reused when an existing spec has a field of the same source and
//   transform, else assigned after the table's last-partition-id;
// - field names are Java's (transform.ts): a field reused from an earlier spec keeps its name, a
//   new one of an evolution is named as Java's UpdatePartitionSpec names it (id_bucket_16), so
//   that two writers asking for the same spec make the same one.
// Requirements: the default spec and the last partition id the update was built on, so that a
// concurrent evolution makes it rebuild on the new metadata.
import { IcebergError } from "../errors.ts";
import {
  equivalentSpecs,
  type PartitionField,
  type PartitionSpec,
  type Transform,
  transformToString,
} from "../spec/partition-spec.ts";
import type { Schema } from "../spec/schema.ts";
import { currentSchema, defaultSpec, type TableMetadata } from "../spec/table-metadata.ts";
import { LAST_ADDED_SPEC, type TableRequirement, type TableUpdate } from "../spec/table-update.ts";
import { partitionFieldName, transformApplies } from "../spec/transform.ts";
import { type NestedField, typeToString } from "../spec/types.ts";
import type { Table } from "../table.ts";
import { commitWithRetries } from "./retry.ts";

/** A partition field by its source column's name, before field ids are known. */
export interface UnboundPartitionField {
  column: string;
  transform: Transform;
}

/** A partition field that does not fit the schema: `index` is its position in the list asked for. */
export class PartitionFieldError extends IcebergError {
  readonly index: number;

  constructor(index: number, message: string) {
    super("validation", message);
    this.name = "PartitionFieldError";
    this.index = index;
  }
}

/**
 * The spec of `fields` over `schema`, with the ids of `metadata`'s specs where a field of the same
 * source and transform exists (spec id and new field ids are assigned as the next free ones).
 */
export function bindPartitionSpec(
  schema: Schema,
  fields: readonly UnboundPartitionField[],
  metadata?: Pick<TableMetadata, "partitionSpecs" | "lastPartitionId">,
): PartitionSpec {
  const existing = metadata?.partitionSpecs.flatMap((s) => s.fields) ?? [];
  let lastId = metadata?.lastPartitionId ?? 999;
  const names = new Set<string>();
  const bound = fields.map((f, index): PartitionField => {
    const source = schema.fields.find((c) => c.name === f.column);
    if (!source) throw new PartitionFieldError(index, missingSource(schema, f.column));
    if (!transformApplies(f.transform, source.type)) {
      throw new PartitionFieldError(
        index,
        `${transformToString(f.transform)} does not apply to column ${f.column} of type ${typeToString(source.type)}`,
      );
    }
    const same = existing.find(
      (e) => e.sourceId === source.id && transformToString(e.transform) === transformToString(f.transform),
    );
    const name = same?.name ?? partitionFieldName(f.column, f.transform, metadata !== undefined);
    if (names.has(name)) throw new PartitionFieldError(index, `partition field ${name} is listed twice`);
    const taken = existing.find((e) => e.name === name && e !== same);
    if (taken && !same) {
      throw new PartitionFieldError(
        index,
        `partition field ${name} would take the name of another field of an earlier spec (${transformToString(taken.transform)})`,
      );
    }
    names.add(name);
    const fieldId = same?.fieldId ?? ++lastId;
    return { sourceId: source.id, fieldId, name, transform: f.transform };
  });
  const specId = metadata ? Math.max(-1, ...metadata.partitionSpecs.map((s) => s.specId)) + 1 : 0;
  return { specId, fields: bound };
}

/** The updates that make `fields` the default spec of `base`; none when it is already. */
export function partitionSpecUpdates(
  base: TableMetadata,
  fields: readonly UnboundPartitionField[],
): { updates: TableUpdate[]; requirements: TableRequirement[] } {
  const spec = bindPartitionSpec(currentSchema(base), fields, base);
  if (equivalentSpecs(defaultSpec(base), spec)) return { updates: [], requirements: [] };
  const requirements: TableRequirement[] = [
    { type: "assert-default-spec-id", defaultSpecId: base.defaultSpecId },
    { type: "assert-last-assigned-partition-id", lastAssignedPartitionId: base.lastPartitionId },
  ];
  const known = base.partitionSpecs.find((s) => equivalentSpecs(s, spec));
  if (known) return { updates: [{ action: "set-default-spec", specId: known.specId }], requirements };
  return {
    updates: [
      { action: "add-spec", spec },
      { action: "set-default-spec", specId: LAST_ADDED_SPEC },
    ],
    requirements,
  };
}

/** Makes `fields` the table's default partition spec (a metadata-only commit, with retries). */
export function commitPartitionSpec(table: Table, fields: readonly UnboundPartitionField[]): Promise<void> {
  return commitWithRetries(table, async (base) => {
    const { updates, requirements } = partitionSpecUpdates(base, fields);
    if (updates.length === 0) return undefined;
    return { requirements: [{ type: "assert-table-uuid", uuid: base.tableUuid }, ...requirements], updates };
  });
}

/**
 * Why a partition source column is not found: none of that name, or a field inside a struct
 * (the spec allows one as a source; floe's writer partitions by top-level columns only).
 */
function missingSource(schema: Schema, column: string): string {
  const path = column.split(".");
  let fields: readonly NestedField[] = schema.fields;
  for (let i = 0; i < path.length; i++) {
    const field = fields.find((c) => c.name === path[i]);
    if (field === undefined) break;
    if (i === path.length - 1) {
      return `${column} is a field inside struct ${path.slice(0, -1).join(".")}: floe partitions by top-level columns only`;
    }
    if (typeof field.type !== "object" || field.type.kind !== "struct") break;
    fields = field.type.fields;
  }
  return `no column ${column}`;
}
