// The sample of an Avro, Protobuf or JSON Schema binding (format or key_format through the schema registry),
// in the shape of a JSON binding's (decode/schema-sample.ts), for `floe check` and `floe
// discover`: the messages go through the binding's own BindingBatch, so the columns shown are
// the table's plus those the registry's schemas give, with the Iceberg type the sync would
// write, and the bad messages are counted by the reason the sync would give; a message whose
// schema version the table cannot take, on which a sync stops, counts as incompatible-schema.

import type { TableSchema } from "../decode/infer-schema.ts";
import type { JsonValue } from "../decode/json-message.ts";
import { SchemaEvolutionError } from "../decode/registry-schema.ts";
import type { SampledColumn, StreamSample } from "../decode/schema-sample.ts";
import { EXAMPLE_MAX_CHARS } from "../decode/schema-sample.ts";
import { isSystemColumn } from "../decode/system-columns.ts";
import type { TypedValue } from "../decode/typed-record.ts";
import { type IcebergType, typeToString } from "../iceberg/spec/types.ts";
import type { Binding } from "../job/job.ts";
import type { KafkaMessage } from "../kafka/read.ts";
import { stringifyJson } from "../lib/int64-json.ts";
import { BindingBatch } from "../pipeline/binding-batch.ts";
import type { RegistryDecoders } from "../pipeline/registry-decoders.ts";

export class RegistrySample {
  readonly #batch: BindingBatch;
  readonly #tableColumns: ReadonlySet<string>;

  constructor(binding: Binding, table: TableSchema | undefined, decoders: RegistryDecoders) {
    // A sample counts bad messages; it never stops on one.
    this.#batch = new BindingBatch({ ...binding, onError: "dlq" }, table, new Map(), decoders);
    this.#tableColumns = new Set(table?.schema.fields.map((f) => f.name) ?? []);
  }

  /** Messages whose schema version the table cannot take (the sync would stop on the first). */
  #incompatible = 0;

  async add(messages: readonly KafkaMessage[]): Promise<void> {
    await this.#batch.prepare(messages);
    for (const message of messages) {
      try {
        this.#batch.add(message);
      } catch (error) {
        if (!(error instanceof SchemaEvolutionError)) throw error;
        this.#incompatible++;
      }
    }
  }

  result(): StreamSample {
    const { rows, counters } = this.#batch;
    const records = rows.records.filter((r) => r !== null) as Record<string, TypedValue>[];
    const bad: Record<string, number> = {};
    for (const [reason, n] of Object.entries(counters.rejected)) if (n > 0) bad[reason] = n;
    if (this.#incompatible > 0) bad["incompatible-schema"] = this.#incompatible;
    const columns: SampledColumn[] = [];
    for (const field of this.#batch.inference.schema.fields) {
      if (isSystemColumn(field.name)) continue;
      let present = 0;
      let example: string | undefined;
      for (const record of records) {
        const value = record[field.name];
        if (value === null || value === undefined) continue;
        present++;
        example ??= exampleOf(value);
      }
      columns.push({
        name: field.name,
        type: typeToString(field.type),
        source: this.#tableColumns.has(field.name) ? "table" : "registry",
        values: { null: records.length - present, ...(present > 0 ? { [valueKind(field.type)]: present } : {}) },
        misfits: 0,
        required: field.required,
        example,
      });
    }
    return {
      messages: counters.messages,
      tombstones: rows.records.length - records.length,
      bad,
      columns,
      proposed: new Map(),
    };
  }
}

/** A column value as JSON: bytes as base64, a struct as an object, a map as an object of its keys' text. */
function jsonOf(value: TypedValue): JsonValue {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64");
  if (Array.isArray(value)) return value.map(jsonOf);
  if (value instanceof Map) {
    const out: { [key: string]: JsonValue } = {};
    for (const [key, item] of value) out[String(key)] = jsonOf(item);
    return out;
  }
  if (value !== null && typeof value === "object") {
    const out: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(value)) out[key] = jsonOf(value[key]!);
    return out;
  }
  return value;
}

function valueKind(type: IcebergType): "boolean" | "long" | "double" | "timestamptz" | "string" {
  switch (type) {
    case "boolean":
      return "boolean";
    case "int":
    case "long":
      return "long";
    case "float":
    case "double":
      return "double";
    case "timestamptz":
      return "timestamptz";
    default:
      return typeof type === "object" && type.kind === "decimal" ? "double" : "string";
  }
}

function exampleOf(value: TypedValue): string {
  const json = jsonOf(value);
  const text = typeof json === "string" ? json : stringifyJson(json);
  return text.length <= EXAMPLE_MAX_CHARS
    ? text
    : `${text.slice(0, EXAMPLE_MAX_CHARS).replace(/[\uD800-\uDBFF]$/, "")}…`;
}
