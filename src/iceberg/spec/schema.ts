// An Iceberg schema: a struct of fields with ids unique across the whole tree (spec "Schemas").
// Columns are resolved by field id, never by name or position.
import { z } from "zod";
import { array, int32, object, parseDocument } from "./json.ts";
import { fieldToJson, type IcebergType, type NestedField, nestedFieldJson, type StructType } from "./types.ts";

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

/** A schema as table metadata holds it (spec appendix C). `schema-id` is absent only in v1's `schema`. */
export const schemaJson = object({
  type: z.literal("struct").optional(),
  "schema-id": int32.optional(),
  "identifier-field-ids": array(int32).nullish(),
  fields: array(nestedFieldJson),
}).transform(
  (o): Schema => ({
    schemaId: o["schema-id"] ?? 0,
    fields: o.fields,
    ...(o["identifier-field-ids"]?.length ? { identifierFieldIds: o["identifier-field-ids"] } : {}),
  }),
);

export function schemaFromJson(json: unknown, document = "schema"): Schema {
  return parseDocument(schemaJson, json, document);
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
