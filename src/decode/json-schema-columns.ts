// The column types a JSON Schema (Confluent's JSON Schema serializer, schemaType JSON) gives the
// top-level properties of its object, where the schema says more than inference from a sample
// can: a `number` property is a double column even when its first values are whole, an
// `integer` one a long, a `string` with `format: date-time` a timestamptz.
//
//   type: integer                                  long
//   type: number                                   double
//   type: boolean                                  boolean
//   type: string, format: date-time                timestamptz
//   type: string (any other format)                string
//   a type list of one of those and "null"         the same (every column is optional anyway)
//   object, array, $ref, oneOf, anything else      not declared: inference decides, as for JSON
//
// The values themselves are still JSON and decoded as such (json-message.ts); the schema is not
// validated against them. A value that does not fit its declared column is a bad message, as
// for a column the job file declares. `format: date` has no declarable type yet and stays a
// string.
import type { DeclarableType, DeclaredColumns } from "./declared-columns.ts";
import { UnsupportedSchemaError } from "./typed-record.ts";

/** The declared columns of a registered JSON Schema's top-level properties, in schema order. */
export function jsonSchemaColumns(schemaText: string): DeclaredColumns {
  let schema: unknown;
  try {
    schema = JSON.parse(schemaText);
  } catch (error) {
    throw new UnsupportedSchemaError(`the JSON Schema is not JSON: ${(error as Error).message}`);
  }
  if (typeof schema === "boolean") return new Map();
  if (!isObject(schema)) throw new UnsupportedSchemaError("the JSON Schema is neither an object nor a boolean");
  const columns = new Map<string, DeclarableType>();
  const properties = schema.properties;
  if (!isObject(properties)) return columns;
  for (const [name, property] of Object.entries(properties)) {
    const type = isObject(property) ? columnType(property) : undefined;
    if (type !== undefined) columns.set(name, type);
  }
  return columns;
}

function columnType(property: Record<string, unknown>): DeclarableType | undefined {
  let type = property.type;
  if (Array.isArray(type)) {
    const types = type.filter((t) => t !== "null");
    if (types.length !== 1) return undefined;
    type = types[0];
  }
  switch (type) {
    case "integer":
      return "long";
    case "number":
      return "double";
    case "boolean":
      return "boolean";
    case "string":
      return property.format === "date-time" ? "timestamptz" : "string";
    default:
      return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
