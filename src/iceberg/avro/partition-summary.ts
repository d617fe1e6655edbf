// The manifest list's per-partition-field summary of a manifest (spec "Manifest Lists",
// field_summary): whether any file's value is null or NaN, and the lower and upper bound of
// the other values in single-value binary form. Like Java, every entry counts, deleted ones too.
import { IcebergError } from "../errors.ts";
import type { PartitionFieldSummary, PartitionValues } from "../spec/manifest.ts";
import { encodeSingleValue, type SingleValue } from "../spec/single-value.ts";
import type { PrimitiveType, StructType } from "../spec/types.ts";

export class PartitionSummary {
  readonly #fields: FieldStats[];

  constructor(partition: StructType) {
    this.#fields = partition.fields.map((f) => {
      if (typeof f.type === "object" && f.type.kind !== "decimal" && f.type.kind !== "fixed") {
        throw new IcebergError("validation", `partition field ${f.name} has a nested type`);
      }
      return new FieldStats(f.id, f.type);
    });
  }

  update(partition: PartitionValues): void {
    for (const field of this.#fields) field.update(partition.get(field.id) as SingleValue | null | undefined);
  }

  summaries(): PartitionFieldSummary[] {
    return this.#fields.map((f) => f.summary());
  }
}

class FieldStats {
  #containsNull = false;
  #containsNan = false;
  #min: SingleValue | undefined;
  #max: SingleValue | undefined;
  readonly id: number;
  readonly #type: PrimitiveType;

  constructor(id: number, type: PrimitiveType) {
    this.id = id;
    this.#type = type;
  }

  update(value: SingleValue | null | undefined): void {
    if (value === null || value === undefined) this.#containsNull = true;
    else if (typeof value === "number" && Number.isNaN(value)) this.#containsNan = true;
    else {
      if (this.#min === undefined || compare(value, this.#min) < 0) this.#min = value;
      if (this.#max === undefined || compare(value, this.#max) > 0) this.#max = value;
    }
  }

  summary(): PartitionFieldSummary {
    return {
      containsNull: this.#containsNull,
      containsNan: this.#containsNan,
      ...(this.#min === undefined ? {} : { lowerBound: encodeSingleValue(this.#type, this.#min) }),
      ...(this.#max === undefined ? {} : { upperBound: encodeSingleValue(this.#type, this.#max) }),
    };
  }
}

const utf8 = new TextEncoder();

/**
 * Iceberg's order for values of one partition type: numbers numerically with -0 before +0,
 * strings by code point (their UTF-8 bytes), bytes unsigned lexicographically, false < true.
 */
function compare(a: SingleValue, b: SingleValue): number {
  if (typeof a === "number" && typeof b === "number") {
    return a < b ? -1 : a > b ? 1 : Number(Object.is(b, -0)) - Number(Object.is(a, -0));
  }
  if (typeof a === "bigint" && typeof b === "bigint") return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === "boolean" && typeof b === "boolean") return Number(a) - Number(b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) return compareBytes(a, b);
  if (typeof a === "string" && typeof b === "string") return compareBytes(utf8.encode(a), utf8.encode(b));
  throw new TypeError(`cannot compare partition values ${typeof a} and ${typeof b}`);
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    if (a[i] !== b[i]) return a[i]! - b[i]!;
  }
  return a.length - b.length;
}
