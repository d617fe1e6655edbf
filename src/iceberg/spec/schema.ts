// An Iceberg schema: a struct of fields with ids unique across the whole tree (spec "Schemas").
// Columns are resolved by field id, never by name or position.
import { fieldFromJson, fieldToJson, type IcebergType, type NestedField, type StructType } from "./types.ts";

export interface Schema {
  schemaId: number;
  fields: readonly NestedField[];
  identifierFieldIds?: readonly number[];
}

export function schemaToJson(schema: Schema): unknown {
  return {
    type: "struct",
    "schema-id": schema.schemaId,
    ...(schema.identifierFieldIds?.length ? { "identifier-field-ids": schema.identifierFieldIds } : {}),
    fields: schema.fields.map(fieldToJson),
  };
}

export function schemaFromJson(json: unknown): Schema {
  const obj = json as Record<string, unknown>;
  const ids = obj["identifier-field-ids"] as number[] | undefined;
  return {
    schemaId: Number(obj["schema-id"] ?? 0),
    fields: (obj.fields as unknown[]).map(fieldFromJson),
    ...(ids?.length ? { identifierFieldIds: ids } : {}),
  };
}

export function asStruct(schema: Schema): StructType {
  return { kind: "struct", fields: schema.fields };
}

/** Every field id in the tree, nested ones included (list elements and map keys/values too). */
export function allFieldIds(type: IcebergType): number[] {
  if (typeof type === "string") return [];
  switch (type.kind) {
    case "struct":
      return type.fields.flatMap((f) => [f.id, ...allFieldIds(f.type)]);
    case "list":
      return [type.elementId, ...allFieldIds(type.element)];
    case "map":
      return [type.keyId, ...allFieldIds(type.key), type.valueId, ...allFieldIds(type.value)];
    default:
      return [];
  }
}

export function highestFieldId(schema: Schema): number {
  return Math.max(0, ...allFieldIds(asStruct(schema)));
}

export function findField(schema: Schema, name: string): NestedField | undefined {
  return schema.fields.find((f) => f.name === name);
}

export function fieldById(schema: Schema, id: number): NestedField | undefined {
  const visit = (fields: readonly NestedField[]): NestedField | undefined => {
    for (const f of fields) {
      if (f.id === id) return f;
      if (typeof f.type === "object" && f.type.kind === "struct") {
        const inner = visit(f.type.fields);
        if (inner) return inner;
      }
    }
    return undefined;
  };
  return visit(schema.fields);
}
