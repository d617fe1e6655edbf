// Partition specs (spec "Partitioning"). Partition field ids start at 1000; a manifest's
// partition struct uses those ids, and the unpartitioned spec has id 0 and no fields.
import { IcebergError } from "../errors.ts";
import type { Schema } from "./schema.ts";
import { fieldById } from "./schema.ts";
import type { IcebergType } from "./types.ts";

export type Transform =
  | { kind: "identity" }
  | { kind: "year" }
  | { kind: "month" }
  | { kind: "day" }
  | { kind: "hour" }
  | { kind: "bucket"; buckets: number }
  | { kind: "truncate"; width: number }
  | { kind: "void" };

export interface PartitionField {
  sourceId: number;
  fieldId: number;
  name: string;
  transform: Transform;
}

export interface PartitionSpec {
  specId: number;
  fields: readonly PartitionField[];
}

/** Spec: partition field ids are assigned from 1000 so they never collide with schema ids. */
export const PARTITION_FIELD_ID_START = 1000;

export const unpartitioned: PartitionSpec = { specId: 0, fields: [] };

export function transformToString(t: Transform): string {
  switch (t.kind) {
    case "bucket":
      return `bucket[${t.buckets}]`;
    case "truncate":
      return `truncate[${t.width}]`;
    default:
      return t.kind;
  }
}

export function transformFromString(s: string): Transform {
  const bucket = /^bucket\[(\d+)\]$/.exec(s);
  if (bucket) return { kind: "bucket", buckets: Number(bucket[1]) };
  const truncate = /^truncate\[(\d+)\]$/.exec(s);
  if (truncate) return { kind: "truncate", width: Number(truncate[1]) };
  if (["identity", "year", "month", "day", "hour", "void"].includes(s)) return { kind: s } as Transform;
  throw new TypeError(`unknown partition transform ${JSON.stringify(s)}`);
}

export function partitionSpecToJson(spec: PartitionSpec): unknown {
  return {
    "spec-id": spec.specId,
    fields: spec.fields.map((f) => ({
      "source-id": f.sourceId,
      "field-id": f.fieldId,
      name: f.name,
      transform: transformToString(f.transform),
    })),
  };
}

export function partitionSpecFromJson(json: unknown): PartitionSpec {
  const obj = json as { "spec-id": number; fields: Record<string, unknown>[] };
  return {
    specId: Number(obj["spec-id"]),
    fields: obj.fields.map((f) => ({
      sourceId: Number(f["source-id"]),
      fieldId: Number(f["field-id"]),
      name: String(f.name),
      transform: transformFromString(String(f.transform)),
    })),
  };
}

/** The type of a partition value, the column type of the manifest's partition struct. */
export function partitionResultType(field: PartitionField, schema: Schema): IcebergType {
  const source = fieldById(schema, field.sourceId);
  if (!source) {
    throw new IcebergError(
      "validation",
      `partition field ${field.name}: source field id ${field.sourceId} is not in the schema`,
    );
  }
  switch (field.transform.kind) {
    case "identity":
    case "truncate":
      return source.type;
    case "year":
    case "month":
    case "hour":
    case "bucket":
      return "int";
    case "day":
      return "date";
    case "void":
      return source.type;
  }
}
