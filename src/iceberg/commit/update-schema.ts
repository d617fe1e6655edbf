// Schema evolution (spec "Schema Evolution"): add optional columns with fresh field ids, at the
// top level or inside a struct (a parent path of field names; a list's element struct and a
// map's value struct are reached through the list or map, as Java's UpdateSchema does), and
// widen primitive types (int -> long, float -> double, decimal precision), of a top-level
// column or of a field inside a struct reached so. Changes are kept
// by column name and re-applied to whatever schema is current at commit time, so a retry
// after a concurrent schema change neither duplicates a column nor loses one.

import { withFreshIds } from "../spec/fresh-ids.ts";
import type { Schema } from "../spec/schema.ts";
import { currentSchema, type TableMetadata } from "../spec/table-metadata.ts";
import { LAST_ADDED_SCHEMA, type TableRequirement, type TableUpdate } from "../spec/table-update.ts";
import {
  canPromote,
  type IcebergType,
  isPrimitive,
  type NestedField,
  type PrimitiveType,
  typeToString,
} from "../spec/types.ts";
import type { Table } from "../table.ts";
import { commitWithRetries } from "./retry.ts";
import { ValidationError } from "./validation-error.ts";

type Change =
  | { kind: "add-column"; name: string; type: IcebergType; doc?: string; parent?: readonly string[] }
  | { kind: "widen"; name: string; type: PrimitiveType; parent?: readonly string[] };

export interface SchemaUpdates {
  updates: TableUpdate[];
  requirements: TableRequirement[];
}

export class SchemaChange {
  readonly #changes: Change[] = [];

  /** `parent`: the names of the struct fields down to the struct that gets the column. */
  addColumn(name: string, type: IcebergType, doc?: string, parent?: readonly string[]): this {
    this.#changes.push({
      kind: "add-column",
      name,
      type,
      ...(doc === undefined ? {} : { doc }),
      ...(parent === undefined || parent.length === 0 ? {} : { parent }),
    });
    return this;
  }

  /** `parent`: the names of the struct fields down to the struct that has the field. */
  widenColumn(name: string, type: PrimitiveType, parent?: readonly string[]): this {
    this.#changes.push({
      kind: "widen",
      name,
      type,
      ...(parent === undefined || parent.length === 0 ? {} : { parent }),
    });
    return this;
  }

  get isEmpty(): boolean {
    return this.#changes.length === 0;
  }

  /** The schema these changes give when applied to `base`, or undefined when they change nothing. */
  applyTo(base: Schema, lastColumnId: number): Schema | undefined {
    let nextId = lastColumnId;
    const fields: NestedField[] = [...base.fields];
    let changed = false;
    for (const change of this.#changes) {
      if (change.kind === "add-column" && change.parent !== undefined) {
        const added = addNested(fields, change.parent, change.name, change.type, nextId);
        if (added === undefined) continue;
        fields.splice(0, fields.length, ...added.fields);
        nextId = added.lastId;
        changed = true;
        continue;
      }
      if (change.kind === "widen" && change.parent !== undefined) {
        const widened = widenNested(fields, change.parent, change.name, change.type);
        if (widened === undefined) continue;
        fields.splice(0, fields.length, ...widened);
        changed = true;
        continue;
      }
      const index = fields.findIndex((f) => f.name === change.name);
      const existing = fields[index];
      if (change.kind === "add-column") {
        if (existing) {
          if (typeToString(existing.type) !== typeToString(change.type)) {
            throw new ValidationError(
              `cannot add column ${change.name} as ${typeToString(change.type)}: it exists as ${typeToString(existing.type)}`,
            );
          }
          continue;
        }
        nextId += 1;
        const id = nextId;
        const { type, lastId } = withFreshIds(change.type, nextId);
        nextId = lastId;
        fields.push({ id, name: change.name, required: false, type, ...(change.doc ? { doc: change.doc } : {}) });
        changed = true;
        continue;
      }
      if (!existing) throw new ValidationError(`cannot widen column ${change.name}: no such column`);
      if (!isPrimitive(existing.type) || !canPromote(existing.type, change.type)) {
        throw new ValidationError(
          `cannot change column ${change.name} from ${typeToString(existing.type)} to ${typeToString(change.type)}`,
        );
      }
      if (typeToString(existing.type) === typeToString(change.type)) continue;
      fields[index] = { ...existing, type: change.type };
      changed = true;
    }
    if (!changed) return undefined;
    return { ...base, schemaId: base.schemaId + 1, fields };
  }

  updatesFor(base: TableMetadata): SchemaUpdates {
    const current = currentSchema(base);
    const next = this.applyTo(current, base.lastColumnId);
    if (!next) return { updates: [], requirements: [] };
    const schemaId = Math.max(...base.schemas.map((s) => s.schemaId)) + 1;
    return {
      updates: [
        { action: "add-schema", schema: { ...next, schemaId } },
        { action: "set-current-schema", schemaId: LAST_ADDED_SCHEMA },
      ],
      requirements: [
        { type: "assert-current-schema-id", currentSchemaId: base.currentSchemaId },
        { type: "assert-last-assigned-field-id", lastAssignedFieldId: base.lastColumnId },
      ],
    };
  }
}

/**
 * The fields with `name` added to the struct at `parent`, or undefined when it is there with
 * the same type already (a retry). Throws when the parent is no struct or the name has another type.
 */
function addNested(
  fields: readonly NestedField[],
  parent: readonly string[],
  name: string,
  type: IcebergType,
  lastId: number,
): { fields: NestedField[]; lastId: number } | undefined {
  const [head, ...rest] = parent;
  const index = fields.findIndex((f) => f.name === head);
  const field = fields[index];
  if (field === undefined)
    throw new ValidationError(`cannot add column ${parent.join(".")}.${name}: no parent ${head}`);
  const inner = withNested(field.type, rest, name, type, lastId, parent);
  if (inner === undefined) return undefined;
  const next = [...fields];
  next[index] = { ...field, type: inner.type };
  return { fields: next, lastId: inner.lastId };
}

function withNested(
  parentType: IcebergType,
  rest: readonly string[],
  name: string,
  type: IcebergType,
  lastId: number,
  parent: readonly string[],
): { type: IcebergType; lastId: number } | undefined {
  if (typeof parentType === "object" && parentType.kind === "list") {
    const inner = withNested(parentType.element, rest, name, type, lastId, parent);
    return inner && { type: { ...parentType, element: inner.type }, lastId: inner.lastId };
  }
  if (typeof parentType === "object" && parentType.kind === "map") {
    const inner = withNested(parentType.value, rest, name, type, lastId, parent);
    return inner && { type: { ...parentType, value: inner.type }, lastId: inner.lastId };
  }
  if (typeof parentType !== "object" || parentType.kind !== "struct") {
    throw new ValidationError(`cannot add column ${parent.join(".")}.${name}: the parent is no struct`);
  }
  if (rest.length > 0) {
    const added = addNested(parentType.fields, rest, name, type, lastId);
    return added && { type: { kind: "struct", fields: added.fields }, lastId: added.lastId };
  }
  const existing = parentType.fields.find((f) => f.name === name);
  if (existing !== undefined) {
    if (typeToString(existing.type) !== typeToString(type)) {
      throw new ValidationError(
        `cannot add column ${parent.join(".")}.${name} as ${typeToString(type)}: it exists as ${typeToString(existing.type)}`,
      );
    }
    return undefined;
  }
  const id = lastId + 1;
  const fresh = withFreshIds(type, id);
  const field: NestedField = { id, name, required: false, type: fresh.type };
  return { type: { kind: "struct", fields: [...parentType.fields, field] }, lastId: fresh.lastId };
}

/**
 * The fields with the field `name` of the struct at `parent` widened to `type`, or undefined
 * when it has that type already (a retry). Throws when there is no such field or it cannot be.
 */
function widenNested(
  fields: readonly NestedField[],
  parent: readonly string[],
  name: string,
  type: PrimitiveType,
): NestedField[] | undefined {
  const where = [...parent, name].join(".");
  const [head, ...rest] = parent;
  const index = fields.findIndex((f) => f.name === (head ?? name));
  const field = fields[index];
  if (field === undefined) throw new ValidationError(`cannot widen column ${where}: no field ${head ?? name}`);
  if (head === undefined) {
    if (!isPrimitive(field.type) || !canPromote(field.type, type)) {
      throw new ValidationError(
        `cannot change column ${where} from ${typeToString(field.type)} to ${typeToString(type)}`,
      );
    }
    if (typeToString(field.type) === typeToString(type)) return undefined;
    const next = [...fields];
    next[index] = { ...field, type };
    return next;
  }
  const inner = widenIn(field.type, rest, name, type, where);
  if (inner === undefined) return undefined;
  const next = [...fields];
  next[index] = { ...field, type: inner };
  return next;
}

function widenIn(
  parentType: IcebergType,
  rest: readonly string[],
  name: string,
  type: PrimitiveType,
  where: string,
): IcebergType | undefined {
  if (typeof parentType === "object" && parentType.kind === "list") {
    const inner = widenIn(parentType.element, rest, name, type, where);
    return inner && { ...parentType, element: inner };
  }
  if (typeof parentType === "object" && parentType.kind === "map") {
    const inner = widenIn(parentType.value, rest, name, type, where);
    return inner && { ...parentType, value: inner };
  }
  if (typeof parentType !== "object" || parentType.kind !== "struct") {
    throw new ValidationError(`cannot widen column ${where}: the parent is no struct`);
  }
  const fields = widenNested(parentType.fields, rest, name, type);
  return fields && { kind: "struct", fields };
}

/** UpdateSchema on its own: a metadata-only commit, no snapshot. */
export function commitSchemaChange(table: Table, change: SchemaChange): Promise<void> {
  return commitWithRetries(table, async (base) => {
    const { updates, requirements } = change.updatesFor(base);
    if (updates.length === 0) return undefined;
    return { requirements: [{ type: "assert-table-uuid", uuid: base.tableUuid }, ...requirements], updates };
  });
}
