// Iceberg data types (spec: "Schemas and Data Types"). Primitive types are their spec names;
// nested types carry the field ids of their children, because readers resolve columns by id.
import { z } from "zod";
import {
  array,
  boolean,
  describeValue,
  int32,
  isJsonObject,
  object,
  oneOf,
  refused,
  string,
  UNSUPPORTED,
} from "./json.ts";

export type PrimitiveTypeName =
  | "boolean"
  | "int"
  | "long"
  | "float"
  | "double"
  | "date"
  | "time"
  | "timestamp"
  | "timestamptz"
  | "timestamp_ns"
  | "timestamptz_ns"
  | "string"
  | "uuid"
  | "binary";

export interface DecimalType {
  kind: "decimal";
  precision: number;
  scale: number;
}

export interface FixedType {
  kind: "fixed";
  length: number;
}

export type PrimitiveType = PrimitiveTypeName | DecimalType | FixedType;

export interface NestedField {
  id: number;
  name: string;
  required: boolean;
  type: IcebergType;
  doc?: string;
}

export interface StructType {
  kind: "struct";
  fields: readonly NestedField[];
}

export interface ListType {
  kind: "list";
  elementId: number;
  element: IcebergType;
  elementRequired: boolean;
}

export interface MapType {
  kind: "map";
  keyId: number;
  key: IcebergType;
  valueId: number;
  value: IcebergType;
  valueRequired: boolean;
}

export type IcebergType = PrimitiveType | StructType | ListType | MapType;

export const decimal = (precision: number, scale: number): DecimalType => ({ kind: "decimal", precision, scale });
export const fixed = (length: number): FixedType => ({ kind: "fixed", length });

export function isPrimitive(type: IcebergType): type is PrimitiveType {
  return typeof type === "string" || type.kind === "decimal" || type.kind === "fixed";
}

/** The types whose values are 64-bit signed integers (spec "Primitive Types"). */
export type Int64TypeName = "long" | "time" | "timestamp" | "timestamptz" | "timestamp_ns" | "timestamptz_ns";

/** long, time and the four timestamps: one storage, one order and one single-value form. */
export function isInt64(type: IcebergType): type is Int64TypeName {
  switch (type) {
    case "long":
    case "time":
    case "timestamp":
    case "timestamptz":
    case "timestamp_ns":
    case "timestamptz_ns":
      return true;
    default:
      return false;
  }
}

/**
 * The children of a nested type as fields: a struct's fields, a list's element, a map's key and
 * value. Lists and maps name them as Java's ListType.fields() and MapType.fields() do, which are
 * the names of the Parquet spec's 3-level layouts.
 */
export function childFields(type: IcebergType): NestedField[] {
  if (typeof type === "string") return [];
  switch (type.kind) {
    case "struct":
      return [...type.fields];
    case "list":
      return [{ id: type.elementId, name: "element", required: type.elementRequired, type: type.element }];
    case "map":
      return [
        { id: type.keyId, name: "key", required: true, type: type.key },
        { id: type.valueId, name: "value", required: type.valueRequired, type: type.value },
      ];
    default:
      return [];
  }
}

export function typeToString(type: IcebergType): string {
  if (typeof type === "string") return type;
  switch (type.kind) {
    case "decimal":
      return `decimal(${type.precision}, ${type.scale})`;
    case "fixed":
      return `fixed[${type.length}]`;
    case "struct":
      return `struct<${type.fields.map((f) => `${f.name}: ${typeToString(f.type)}`).join(", ")}>`;
    case "list":
      return `list<${typeToString(type.element)}>`;
    case "map":
      return `map<${typeToString(type.key)}, ${typeToString(type.value)}>`;
  }
}

/** Spec "Schema Evolution": the only primitive promotions a reader must accept. */
export function canPromote(from: PrimitiveType, to: PrimitiveType): boolean {
  if (typeof from === "string" && typeof to === "string") {
    return from === to || (from === "int" && to === "long") || (from === "float" && to === "double");
  }
  if (typeof from === "object" && typeof to === "object" && from.kind === "decimal" && to.kind === "decimal") {
    return from.scale === to.scale && to.precision >= from.precision;
  }
  return typeToString(from) === typeToString(to);
}

// JSON serialization (spec appendix C): primitives are strings, nested types are objects.

export function typeToJson(type: IcebergType): unknown {
  if (isPrimitive(type)) return typeToString(type);
  switch (type.kind) {
    case "struct":
      return { type: "struct", fields: type.fields.map(fieldToJson) };
    case "list":
      return {
        type: "list",
        "element-id": type.elementId,
        element: typeToJson(type.element),
        "element-required": type.elementRequired,
      };
    case "map":
      return {
        type: "map",
        "key-id": type.keyId,
        key: typeToJson(type.key),
        "value-id": type.valueId,
        value: typeToJson(type.value),
        "value-required": type.valueRequired,
      };
  }
}

export function fieldToJson(field: NestedField): unknown {
  return {
    id: field.id,
    name: field.name,
    required: field.required,
    type: typeToJson(field.type),
    ...(field.doc === undefined ? {} : { doc: field.doc }),
  };
}

const primitiveNames = new Set<string>([
  "boolean",
  "int",
  "long",
  "float",
  "double",
  "date",
  "time",
  "timestamp",
  "timestamptz",
  "timestamp_ns",
  "timestamptz_ns",
  "string",
  "uuid",
  "binary",
]);

/** Types of the v3 spec that floe does not read or write yet: a table with one is unsupported, not corrupt. */
const UNSUPPORTED_TYPE = /^(variant|unknown|geometry(\(.*\))?|geography(\(.*\))?)$/;

const primitiveTypeJson = string.transform((name, ctx): PrimitiveType => {
  if (primitiveNames.has(name)) return name as PrimitiveTypeName;
  const dec = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(name);
  if (dec) return decimal(Number(dec[1]), Number(dec[2]));
  const fix = /^fixed\[(\d+)\]$/.exec(name);
  if (fix) return fixed(Number(fix[1]));
  if (UNSUPPORTED_TYPE.test(name)) {
    ctx.addIssue({ code: "custom", message: `type ${name} is not supported by floe yet`, params: UNSUPPORTED });
  } else {
    ctx.addIssue({ code: "custom", message: `${JSON.stringify(name)} is not an Iceberg type` });
  }
  return z.NEVER;
});

const structTypeJson = object({
  type: z.literal("struct"),
  get fields() {
    return array(nestedFieldJson);
  },
}).transform((o): StructType => ({ kind: "struct", fields: o.fields }));

const listTypeJson = object({
  type: z.literal("list"),
  "element-id": int32,
  get element() {
    return icebergTypeJson;
  },
  "element-required": boolean,
}).transform(
  (o): ListType => ({
    kind: "list",
    elementId: o["element-id"],
    element: o.element,
    elementRequired: o["element-required"],
  }),
);

const mapTypeJson = object({
  type: z.literal("map"),
  "key-id": int32,
  get key() {
    return icebergTypeJson;
  },
  "value-id": int32,
  get value() {
    return icebergTypeJson;
  },
  "value-required": boolean,
}).transform(
  (o): MapType => ({
    kind: "map",
    keyId: o["key-id"],
    key: o.key,
    valueId: o["value-id"],
    value: o.value,
    valueRequired: o["value-required"],
  }),
);

const nestedTypes: Record<string, z.ZodType<IcebergType>> = {
  struct: structTypeJson,
  list: listTypeJson,
  map: mapTypeJson,
};

/** A type as spec appendix C writes it: a primitive's name, or an object of type struct, list or map. */
export const icebergTypeJson: z.ZodType<IcebergType> = oneOf((value) => {
  if (typeof value === "string") return primitiveTypeJson;
  const nested = isJsonObject(value) && typeof value.type === "string" ? nestedTypes[value.type] : undefined;
  return (
    nested ??
    refused(`expected a type (a type name, or an object of type struct, list or map), got ${describeValue(value)}`)
  );
});

export const nestedFieldJson: z.ZodType<NestedField> = object({
  id: int32,
  name: string,
  required: boolean,
  type: icebergTypeJson,
  doc: string.nullish(),
}).transform(
  (o): NestedField => ({
    id: o.id,
    name: o.name,
    required: o.required,
    type: o.type,
    ...(typeof o.doc === "string" ? { doc: o.doc } : {}),
  }),
);
