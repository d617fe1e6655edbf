// Partition specs (spec "Partitioning"). Partition field ids start at 1000; a manifest's
// partition struct uses those ids, and the unpartitioned spec has id 0 and no fields.
import { z } from "zod";
import { IcebergError } from "../errors.ts";
import { array, int32, object, string, UNSUPPORTED } from "./json.ts";
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

/** A transform's name; undefined for one floe does not know (a newer spec's, or none at all). */
export function transformFromString(s: string): Transform | undefined {
  const bucket = /^bucket\[(\d+)\]$/.exec(s);
  if (bucket) return { kind: "bucket", buckets: Number(bucket[1]) };
  const truncate = /^truncate\[(\d+)\]$/.exec(s);
  if (truncate) return { kind: "truncate", width: Number(truncate[1]) };
  if (["identity", "year", "month", "day", "hour", "void"].includes(s)) return { kind: s } as Transform;
  return undefined;
}

const transformJson = string.transform((name, ctx): Transform => {
  const transform = transformFromString(name);
  if (transform) return transform;
  ctx.addIssue({
    code: "custom",
    message: `partition transform ${name} is not supported by floe`,
    params: UNSUPPORTED,
  });
  return z.NEVER;
});

const partitionFieldJson = object({
  "source-id": int32.optional(),
  // v3: multi-argument transforms name their sources in source-ids.
  "source-ids": array(int32).optional(),
  // Absent only in v1, where fields are numbered from 1000 in order.
  "field-id": int32.optional(),
  name: string,
  transform: transformJson,
}).superRefine((f, ctx) => {
  if (f["source-id"] === undefined && f["source-ids"]?.length !== 1) {
    ctx.addIssue(
      f["source-ids"] === undefined
        ? { code: "custom", message: "source-id: expected a 32-bit integer, got nothing", path: ["source-id"] }
        : {
            code: "custom",
            message: "a transform of several source fields is not supported by floe",
            params: UNSUPPORTED,
          },
    );
  }
});

/** The fields of a spec (v1's `partition-spec` is only these). */
export const partitionFieldsJson = array(partitionFieldJson).transform((fields): PartitionField[] =>
  fields.map((f, i) => ({
    sourceId: f["source-id"] ?? f["source-ids"]![0]!,
    fieldId: f["field-id"] ?? PARTITION_FIELD_ID_START + i,
    name: f.name,
    transform: f.transform,
  })),
);

export const partitionSpecJson = object({ "spec-id": int32, fields: partitionFieldsJson }).transform(
  (o): PartitionSpec => ({ specId: o["spec-id"], fields: o.fields }),
);

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

/**
 * Spec "Partitioning": two specs are equivalent when they have the same fields in order, each
 * with the same source, transform and name (their ids aside).
 */
export function equivalentSpecs(a: PartitionSpec, b: PartitionSpec): boolean {
  return (
    a.fields.length === b.fields.length &&
    a.fields.every((f, i) => {
      const g = b.fields[i]!;
      return (
        f.sourceId === g.sourceId &&
        f.name === g.name &&
        transformToString(f.transform) === transformToString(g.transform)
      );
    })
  );
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
