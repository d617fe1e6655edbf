// Iceberg schema -> Arrow schema for the Parquet writer (spec Appendix A, "Parquet"). Every
// Arrow field, nested ones included, carries its Iceberg field id as `PARQUET:field_id`
// metadata, which the Parquet writer turns into the schema node's field_id: readers resolve
// columns by that id, never by name. Types are the ones whose Parquet form the spec requires:
//   int -> Int32, long -> Int64, date -> Date32 (DATE), time -> Time64(us) (TIME_MICROS),
//   timestamp -> Timestamp(us) (TIMESTAMP_MICROS, isAdjustedToUTC=false),
//   timestamptz -> Timestamp(us, "UTC") (TIMESTAMP_MICROS, isAdjustedToUTC=true), _ns alike,
//   decimal(P,S) -> Decimal128(P,S) (int32 / int64 / minimal fixed by precision),
//   uuid -> FixedSizeBinary(16), fixed(L) -> FixedSizeBinary(L), list -> 3-level LIST with an
//   "element" child, map -> 3-level MAP of a "key_value" group of "key" and "value".
// Required fields are non-nullable.
import * as arrow from "apache-arrow";
import type { Schema } from "../spec/schema.ts";
import { childFields, type IcebergType, type NestedField } from "../spec/types.ts";

export const FIELD_ID_KEY = "PARQUET:field_id";

export function arrowSchema(schema: Schema): arrow.Schema {
  return new arrow.Schema(schema.fields.map(arrowField));
}

export function arrowField(field: NestedField): arrow.Field {
  return new arrow.Field(field.name, arrowType(field.type), !field.required, fieldIdMetadata(field.id));
}

export function fieldIdMetadata(id: number): Map<string, string> {
  return new Map([[FIELD_ID_KEY, String(id)]]);
}

export function arrowType(type: IcebergType): arrow.DataType {
  if (typeof type === "object") {
    switch (type.kind) {
      case "decimal":
        return new arrow.Decimal(type.scale, type.precision, 128);
      case "fixed":
        return new arrow.FixedSizeBinary(type.length);
      case "struct":
        return new arrow.Struct(type.fields.map(arrowField));
      case "list":
        return new arrow.List(arrowField(childFields(type)[0]!));
      case "map": {
        const [key, value] = childFields(type);
        const entries = new arrow.Field("key_value", new arrow.Struct([arrowField(key!), arrowField(value!)]), false);
        const map = new arrow.Map_(entries);
        // Arrow JS renames the entries field to "entries"; Iceberg Java and PyIceberg name the
        // repeated group "key_value", and PyIceberg finds map columns by that path
        (entries as { name: string }).name = "key_value";
        return map;
      }
    }
  }
  switch (type) {
    case "boolean":
      return new arrow.Bool();
    case "int":
      return new arrow.Int32();
    case "long":
      return new arrow.Int64();
    case "float":
      return new arrow.Float32();
    case "double":
      return new arrow.Float64();
    case "date":
      return new arrow.DateDay();
    case "time":
      return new arrow.TimeMicrosecond();
    case "timestamp":
      return new arrow.TimestampMicrosecond();
    case "timestamptz":
      return new arrow.TimestampMicrosecond("UTC");
    case "timestamp_ns":
      return new arrow.TimestampNanosecond();
    case "timestamptz_ns":
      return new arrow.TimestampNanosecond("UTC");
    case "string":
      return new arrow.Utf8();
    case "binary":
      return new arrow.Binary();
    case "uuid":
      return new arrow.FixedSizeBinary(16);
  }
}
