// A stream's `partition_by`: the partition spec of its table, as a list of transforms of columns,
// e.g. [day(_kafka_timestamp), bucket(16, id), truncate(4, name), identity(region), region].
// A bare column name is identity; the spec's own spellings bucket[16](id) and truncate[4](name)
// are accepted too. Checked here: the syntax, the transforms floe writes (identity, year, month,
// day, hour, bucket, truncate), their argument, and for the columns whose type the job file
// fixes (the system columns, declared `columns`) whether the transform applies to it. Columns
// inferred from messages are checked when the table's schema is known (at sync time).
import { z } from "zod";
import { SYSTEM_COLUMNS } from "../decode/system-columns.ts";
import type { UnboundPartitionField } from "../iceberg/commit/update-partition-spec.ts";
import type { Transform } from "../iceberg/spec/partition-spec.ts";
import { partitionFieldName, transformApplies } from "../iceberg/spec/transform.ts";
import type { IcebergType } from "../iceberg/spec/types.ts";

const NAMED = ["identity", "year", "month", "day", "hour"] as const;
const MAX_INT = 2147483647;

/** One entry, parsed; a string saying what is wrong when it is not one. */
export function parsePartitionEntry(text: string): UnboundPartitionField | string {
  const s = text.trim();
  if (/^[^()[\],\s]+$/.test(s)) return { column: s, transform: { kind: "identity" } };
  const call = /^([a-z_]+)(?:\[\s*(\d+)\s*\])?\s*\(\s*(.*?)\s*\)$/i.exec(s);
  if (!call)
    return `${JSON.stringify(text)} is not a transform: write e.g. day(ts), bucket(16, id), truncate(4, name) or a column name`;
  const name = call[1]!.toLowerCase();
  const bracket = call[2];
  const args = call[3]!.split(",").map((a) => a.trim());
  if ((NAMED as readonly string[]).includes(name)) {
    if (bracket !== undefined || args.length !== 1 || args[0] === "")
      return `${name} takes one column: ${name}(<column>)`;
    return { column: args[0]!, transform: { kind: name } as Transform };
  }
  if (name === "bucket" || name === "truncate") {
    const what = name === "bucket" ? "the number of buckets" : "the width";
    const parts = bracket !== undefined ? [bracket, ...args] : args;
    if (parts.length !== 2 || parts[1] === "") return `${name} takes ${what} and a column: ${name}(<n>, <column>)`;
    const n = /^\d+$/.test(parts[0]!) ? Number(parts[0]) : Number.NaN;
    if (!Number.isInteger(n) || n < 1 || n > MAX_INT)
      return `${name}: ${what} must be an integer from 1 to ${MAX_INT}, got ${parts[0]}`;
    const transform: Transform = name === "bucket" ? { kind: "bucket", buckets: n } : { kind: "truncate", width: n };
    return { column: parts[1]!, transform };
  }
  return `unknown transform ${name}: floe writes identity, year, month, day, hour, bucket and truncate`;
}

const systemTypes = new Map<string, IcebergType>(SYSTEM_COLUMNS.map((f) => [f.name, f.type]));

/** `partition_by` of a stream, parsed into the fields of its partition spec. */
export const partitionBySchema = z
  .array(z.string())
  .transform((entries, ctx): UnboundPartitionField[] => {
    const fields: UnboundPartitionField[] = [];
    const names = new Map<string, number>();
    entries.forEach((entry, i) => {
      const parsed = parsePartitionEntry(entry);
      if (typeof parsed === "string") {
        ctx.addIssue({ code: "custom", path: [i], message: parsed });
        return;
      }
      const name = partitionFieldName(parsed.column, parsed.transform);
      const earlier = names.get(name);
      if (earlier !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [i],
          message: `partition field ${name} is also made by entry ${earlier}`,
        });
        return;
      }
      names.set(name, i);
      fields.push(parsed);
    });
    return fields;
  })
  .describe(
    "The table's partition spec, e.g. [day(_kafka_timestamp), bucket(16, id), truncate(4, name), region]. Absent: a new table is unpartitioned, an existing one keeps its spec; []: unpartitioned.",
  );

/** Checks the entries whose column type the job file fixes: system columns and declared columns. */
export function checkPartitionTypes(
  fields: readonly UnboundPartitionField[],
  declared: Readonly<Record<string, IcebergType>>,
  ctx: z.RefinementCtx,
  path: (string | number)[],
): void {
  fields.forEach((f, i) => {
    const type = systemTypes.get(f.column) ?? declared[f.column];
    if (type !== undefined && !transformApplies(f.transform, type)) {
      ctx.addIssue({
        code: "custom",
        path: [...path, i],
        message: `${f.transform.kind} does not apply to column ${f.column} of type ${typeof type === "string" ? type : type.kind}`,
      });
    }
  });
}
