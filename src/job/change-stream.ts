// A stream's change-data-capture settings in the job file, checked in one place: `format:
// debezium` (JSON Debezium envelopes), `envelope:` (another producer's envelope, or Debezium's
// with other names), `cdc_columns:` (metadata columns from the envelope) and `key_columns:`
// (fields of a JSON key that become columns when the value lacks them). A change stream deletes
// rows, so it is an upsert stream: in append mode every event would be a row and a delete one
// more row, which is the opposite of what the topic says, so that is a configuration error.
//
// Its dedup keys default to what identifies the source row: the key columns' names when
// key_columns is given, else the whole Kafka key (`_kafka_key`), which Debezium writes from the
// table's primary key, byte for byte the same for the same key.
import { z } from "zod";
import {
  type CdcEnvelope,
  type ChangeKind,
  DEBEZIUM_ENVELOPE,
  DEBEZIUM_OPS,
  type FieldPath,
} from "../decode/cdc-envelope.ts";
import { isSystemColumn, KAFKA_KEY } from "../decode/system-columns.ts";
import { nonEmpty } from "./schema-parts.ts";

/** A field of the envelope, dots between levels: `source.lsn`. */
const fieldPath = z
  .string()
  .regex(/^[^.]+(\.[^.]+)*$/, "a field name, with dots between levels (source.lsn)")
  .describe("A field of the envelope; dots between levels (source.lsn).");

const envelopeFields = z
  .strictObject({
    op: fieldPath.optional().describe("The field holding the kind of change. Default: op."),
    before: fieldPath.optional().describe("The row before the change, which a delete names. Default: before."),
    after: fieldPath
      .optional()
      .describe("The row after the change, which a create, update or read lands. Default: after."),
    ts: fieldPath.optional().describe("The change's time at the source. Default: source.ts_ms, else ts_ms."),
    ts_unit: z.enum(["s", "ms", "us", "ns"]).optional().describe("The unit of ts since the epoch. Default: ms."),
    position: z
      .array(fieldPath)
      .min(1)
      .optional()
      .describe(
        "Fields whose values, in order, order the changes of one key (integers, or strings that sort). Default: Debezium's source position (lsn; file, pos, row; commit_lsn, change_lsn), else ts.",
      ),
    ops: z
      .strictObject({
        create: nonEmpty.optional(),
        update: nonEmpty.optional(),
        delete: nonEmpty.optional(),
        read: nonEmpty.optional(),
      })
      .optional()
      .describe("The op values, when they are not Debezium's c, u, d, r."),
  })
  .describe("How the change events name their parts; Debezium's names by default.");

/** `debezium`: Debezium's envelope as it is (with format avro or protobuf: Debezium's envelope through the registry). */
export const envelopeSchema = z
  .union([z.literal("debezium"), envelopeFields])
  .describe(
    "The values are change events: debezium (Debezium's envelope), or how another producer's envelope names its parts.",
  );

export const changeStreamFields = {
  envelope: envelopeSchema.optional(),
  cdc_columns: z
    .array(fieldPath)
    .min(1)
    .optional()
    .describe(
      "Metadata columns of a change stream: op becomes _cdc_op, an envelope field such as source.lsn becomes _cdc_lsn.",
    ),
  key_columns: z
    .record(nonEmpty, nonEmpty)
    .optional()
    .describe(
      "Fields of a JSON key (or a framed one, with key_format) that become columns when the value lacks them: {<key field>: <column>}.",
    ),
};

export interface ChangeStreamInput {
  mode: "upsert" | "append";
  format?: string;
  dedup_keys?: string[] | undefined;
  envelope?: z.infer<typeof envelopeSchema> | undefined;
  cdc_columns?: string[] | undefined;
  key_columns?: Record<string, string> | undefined;
}

/** Whether the stream's messages are change events. */
export function isChangeStream(s: ChangeStreamInput): boolean {
  return s.format === "debezium" || s.envelope !== undefined;
}

/** The issues of a stream's change-data-capture settings, at their paths in the stream. */
export function checkChangeStream(s: ChangeStreamInput, ctx: z.RefinementCtx): void {
  const change = isChangeStream(s);
  if (s.envelope !== undefined && s.format === "json_schema") {
    ctx.addIssue({
      code: "custom",
      path: ["envelope"],
      message: `only with format json, debezium, avro or protobuf, not ${s.format}`,
    });
  }
  if (change && s.mode !== "upsert") {
    ctx.addIssue({
      code: "custom",
      path: ["mode"],
      message:
        "a change stream (format debezium or envelope) needs mode: upsert; in append mode each delete would add a row",
    });
  }
  if (s.cdc_columns !== undefined && !change) {
    ctx.addIssue({
      code: "custom",
      path: ["cdc_columns"],
      message: "only in a change stream (format debezium or envelope)",
    });
  }
  const columns = new Map<string, number>();
  s.cdc_columns?.forEach((path, i) => {
    const column = cdcColumnName(path);
    if (columns.has(column)) {
      ctx.addIssue({ code: "custom", path: ["cdc_columns", i], message: `makes column ${column}, as another does` });
    }
    columns.set(column, i);
  });
  if (s.key_columns !== undefined) {
    if (s.format !== undefined && s.format !== "json" && s.format !== "json_schema" && s.format !== "debezium") {
      ctx.addIssue({
        code: "custom",
        path: ["key_columns"],
        message: `only with format json or debezium; this ${s.format} stream's columns come from its schema`,
      });
    }
    const seen = new Set<string>();
    for (const [field, column] of Object.entries(s.key_columns)) {
      if (isSystemColumn(column) || column.startsWith("_cdc_")) {
        ctx.addIssue({ code: "custom", path: ["key_columns", field], message: `${column} is a name floe reserves` });
      } else if (seen.has(column)) {
        ctx.addIssue({ code: "custom", path: ["key_columns", field], message: `column ${column} is named twice` });
      }
      seen.add(column);
    }
  }
}

/** The column of a cdc_columns entry: `_cdc_` and its last field name. */
export function cdcColumnName(path: string): string {
  return `_cdc_${path.slice(path.lastIndexOf(".") + 1)}`;
}

/** The dedup keys a change stream that names none gets. */
export function defaultChangeDedupKeys(s: ChangeStreamInput): string[] {
  return s.key_columns === undefined ? [KAFKA_KEY] : Object.values(s.key_columns);
}

/** The envelope of a change stream; undefined for another stream. */
export function toEnvelope(s: ChangeStreamInput): CdcEnvelope | undefined {
  if (!isChangeStream(s)) return undefined;
  const e = s.envelope === undefined || s.envelope === "debezium" ? {} : s.envelope;
  const path = (text: string): FieldPath => text.split(".");
  const ops: Record<ChangeKind, string> = { ...DEBEZIUM_OPS, ...definedOnly(e.ops ?? {}) };
  const ts = e.ts === undefined ? DEBEZIUM_ENVELOPE.ts : [path(e.ts)];
  return Object.freeze({
    op: e.op === undefined ? DEBEZIUM_ENVELOPE.op : path(e.op),
    before: e.before === undefined ? DEBEZIUM_ENVELOPE.before : path(e.before),
    after: e.after === undefined ? DEBEZIUM_ENVELOPE.after : path(e.after),
    ts,
    tsUnit: e.ts_unit ?? "ms",
    position:
      e.position !== undefined ? e.position.map(path) : s.format === "debezium" || e.ts === undefined ? "debezium" : ts,
    ops,
    columns: (s.cdc_columns ?? []).map((text) => ({ column: cdcColumnName(text), path: path(text) })),
  });
}

/** key_columns as a map, key field -> column; empty when none. */
export function toKeyColumns(s: ChangeStreamInput): ReadonlyMap<string, string> {
  return new Map(Object.entries(s.key_columns ?? {}));
}

function definedOnly<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as never;
}
