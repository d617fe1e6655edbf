// Iceberg type -> Avro schema (spec Appendix A, "Avro"). Readers resolve manifest columns by
// field id, so every record field carries `field-id` and every array `element-id`; maps (all
// of ours have int keys) are arrays of `k<keyId>_v<valueId>` records with logical type `map`
// whose `key`/`value` fields carry the ids; optional values are ["null", T] with default null.
// Nested records are named `r<fieldId>`, as Java's TypeToSchema names them.
import type { IcebergType, NestedField, PrimitiveType, StructType } from "../spec/types.ts";

/** Avro schema JSON, kept raw so that the id attributes reach the file's `avro.schema`. */
export type AvroSchema = string | readonly AvroSchema[] | { readonly [key: string]: unknown };

export function structToAvroSchema(struct: StructType, recordName: string): AvroSchema {
  return new AvroSchemaBuilder().record(struct, recordName);
}

/**
 * Avro names are [A-Za-z_][A-Za-z0-9_]*; like Java's AvroSchemaUtil.sanitize, a leading digit
 * gets a `_` prefix and any other character becomes `_x<hex code>`. Readers match by id, so
 * the original name is only informative (kept as `iceberg-field-name`).
 */
export function avroName(name: string): string {
  return name.replace(/^[0-9]|[^A-Za-z0-9_]/g, (c) =>
    /[0-9]/.test(c) ? `_${c}` : `_x${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

class AvroSchemaBuilder {
  // A named Avro type (fixed) may be defined once per file; later uses refer to it by name.
  readonly #defined = new Set<string>();

  record(struct: StructType, name: string): AvroSchema {
    return { type: "record", name, fields: struct.fields.map((f) => this.#field(f)) };
  }

  #field(field: NestedField): AvroSchema {
    const name = avroName(field.name);
    const type = this.#type(field.type, field.id);
    return {
      name,
      type: field.required ? type : ["null", type],
      ...(field.required ? {} : { default: null }),
      ...(name === field.name ? {} : { "iceberg-field-name": field.name }),
      "field-id": field.id,
    };
  }

  #type(type: IcebergType, fieldId: number): AvroSchema {
    if (typeof type === "string" || type.kind === "decimal" || type.kind === "fixed") return this.#primitive(type);
    switch (type.kind) {
      case "struct":
        return this.record(type, `r${fieldId}`);
      case "list": {
        const element = this.#type(type.element, type.elementId);
        return {
          type: "array",
          items: type.elementRequired ? element : ["null", element],
          "element-id": type.elementId,
        };
      }
      case "map": {
        const value = this.#type(type.value, type.valueId);
        return {
          type: "array",
          logicalType: "map",
          items: {
            type: "record",
            name: `k${type.keyId}_v${type.valueId}`,
            fields: [
              { name: "key", type: this.#type(type.key, type.keyId), "field-id": type.keyId },
              type.valueRequired
                ? { name: "value", type: value, "field-id": type.valueId }
                : { name: "value", type: ["null", value], default: null, "field-id": type.valueId },
            ],
          },
        };
      }
    }
  }

  #primitive(type: PrimitiveType): AvroSchema {
    if (typeof type === "object") {
      return type.kind === "fixed"
        ? this.#named({ type: "fixed", name: `fixed_${type.length}`, size: type.length })
        : this.#named({
            type: "fixed",
            name: `decimal_${type.precision}_${type.scale}`,
            size: decimalRequiredBytes(type.precision),
            logicalType: "decimal",
            precision: type.precision,
            scale: type.scale,
          });
    }
    switch (type) {
      case "boolean":
      case "int":
      case "long":
      case "float":
      case "double":
      case "string":
        return type;
      case "binary":
        return "bytes";
      case "date":
        return { type: "int", logicalType: "date" };
      case "time":
        return { type: "long", logicalType: "time-micros" };
      case "timestamp":
      case "timestamptz":
        return { type: "long", logicalType: "timestamp-micros", "adjust-to-utc": type === "timestamptz" };
      case "timestamp_ns":
      case "timestamptz_ns":
        return { type: "long", logicalType: "timestamp-nanos", "adjust-to-utc": type === "timestamptz_ns" };
      case "uuid":
        return this.#named({ type: "fixed", name: "uuid_fixed", size: 16, logicalType: "uuid" });
    }
  }

  #named(schema: { name: string } & Record<string, unknown>): AvroSchema {
    if (this.#defined.has(schema.name)) return schema.name;
    this.#defined.add(schema.name);
    return schema;
  }
}

/** Spec: a decimal(P, S) is a fixed of the fewest bytes whose two's complement holds 10^P - 1. */
export function decimalRequiredBytes(precision: number): number {
  let bytes = 1;
  while (2n ** BigInt(8 * bytes - 1) <= 10n ** BigInt(precision) - 1n) bytes += 1;
  return bytes;
}
