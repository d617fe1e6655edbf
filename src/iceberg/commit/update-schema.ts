// Schema evolution (spec "Schema Evolution"): add optional columns with fresh field ids and
// widen primitive types (int -> long, float -> double, decimal precision). Changes are kept
// by column name and re-applied to whatever schema is current at commit time, so a retry
// after a concurrent schema change neither duplicates a column nor loses one.
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
  | { kind: "add-column"; name: string; type: IcebergType; doc?: string }
  | { kind: "widen"; name: string; type: PrimitiveType };

export interface SchemaUpdates {
  updates: TableUpdate[];
  requirements: TableRequirement[];
}

export class SchemaChange {
  readonly #changes: Change[] = [];

  addColumn(name: string, type: IcebergType, doc?: string): this {
    this.#changes.push({ kind: "add-column", name, type, ...(doc === undefined ? {} : { doc }) });
    return this;
  }

  widenColumn(name: string, type: PrimitiveType): this {
    this.#changes.push({ kind: "widen", name, type });
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

/** Nested types get fresh ids after the column's own id, depth first (as Java's TypeUtil does). */
function withFreshIds(type: IcebergType, lastId: number): { type: IcebergType; lastId: number } {
  if (isPrimitive(type)) return { type, lastId };
  switch (type.kind) {
    case "struct": {
      let id = lastId + type.fields.length;
      const fields = type.fields.map((f, i) => {
        const inner = withFreshIds(f.type, id);
        id = inner.lastId;
        return { ...f, id: lastId + 1 + i, type: inner.type };
      });
      return { type: { kind: "struct", fields }, lastId: id };
    }
    case "list": {
      const inner = withFreshIds(type.element, lastId + 1);
      return { type: { ...type, elementId: lastId + 1, element: inner.type }, lastId: inner.lastId };
    }
    case "map": {
      const key = withFreshIds(type.key, lastId + 2);
      const value = withFreshIds(type.value, key.lastId);
      return {
        type: { ...type, keyId: lastId + 1, valueId: lastId + 2, key: key.type, value: value.type },
        lastId: value.lastId,
      };
    }
  }
}

/** UpdateSchema on its own: a metadata-only commit, no snapshot. */
export function commitSchemaChange(table: Table, change: SchemaChange): Promise<void> {
  return commitWithRetries(table, async (base) => {
    const { updates, requirements } = change.updatesFor(base);
    if (updates.length === 0) return undefined;
    return { requirements: [{ type: "assert-table-uuid", uuid: base.tableUuid }, ...requirements], updates };
  });
}
