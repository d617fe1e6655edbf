// Iceberg data types (spec: "Schemas and Data Types"). Primitive types are their spec names;
// nested types carry the field ids of their children, because readers resolve columns by id.

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

export function typeFromJson(json: unknown): IcebergType {
  if (typeof json === "string") {
    if (primitiveNames.has(json)) return json as PrimitiveTypeName;
    const dec = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(json);
    if (dec) return decimal(Number(dec[1]), Number(dec[2]));
    const fix = /^fixed\[(\d+)\]$/.exec(json);
    if (fix) return fixed(Number(fix[1]));
    throw new TypeError(`unknown Iceberg type ${JSON.stringify(json)}`);
  }
  const obj = json as Record<string, unknown>;
  switch (obj.type) {
    case "struct":
      return { kind: "struct", fields: (obj.fields as unknown[]).map(fieldFromJson) };
    case "list":
      return {
        kind: "list",
        elementId: Number(obj["element-id"]),
        element: typeFromJson(obj.element),
        elementRequired: Boolean(obj["element-required"]),
      };
    case "map":
      return {
        kind: "map",
        keyId: Number(obj["key-id"]),
        key: typeFromJson(obj.key),
        valueId: Number(obj["value-id"]),
        value: typeFromJson(obj.value),
        valueRequired: Boolean(obj["value-required"]),
      };
    default:
      throw new TypeError(`unknown Iceberg type ${JSON.stringify(json)}`);
  }
}

export function fieldFromJson(json: unknown): NestedField {
  const obj = json as Record<string, unknown>;
  return {
    id: Number(obj.id),
    name: String(obj.name),
    required: Boolean(obj.required),
    type: typeFromJson(obj.type),
    ...(typeof obj.doc === "string" ? { doc: obj.doc } : {}),
  };
}
