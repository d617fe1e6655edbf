// A change event: one message of a change-data-capture topic, an envelope around the row it
// changes. Debezium's is `{before, after, source, op, ts_ms}` (op c create, u update, d delete,
// r a snapshot read), with or without the JsonConverter's `{schema, payload}` wrapper; other
// producers (Maxwell's `{type, data, old}`, home-grown `{op, before, after}`) name the same parts
// differently, which CdcEnvelope maps. readChange takes an envelope apart into what the table
// needs: the kind of change, the row image that lands (after) or names the row to delete
// (before), the source position that orders the changes of one key, and the change's time.
//
// The source position, never the arrival order, says which of two changes of a key is the
// later: a connector restarted from an older offset replays events. Debezium's position is, by
// connector: Postgres `source.lsn`; MySQL `source.file`, `source.pos`, `source.row`; SQL Server
// `source.commit_lsn`, `source.change_lsn`, `source.event_serial_no`; otherwise `source.ts_ms`,
// then the envelope's `ts_ms`. It is encoded as one string that compares in position order
// (positionText), so that comparing two is one string comparison.
import { applyLogicalTypes, structField } from "./connect-logical-types.ts";
import type { JsonRecord, JsonValue } from "./json-message.ts";

/** A field inside the envelope, as its names from the envelope's root (`source.lsn`). */
export type FieldPath = readonly string[];

export type ChangeKind = "create" | "update" | "delete" | "read";

/** How an envelope names its parts, parsed once when the job loads. */
export interface CdcEnvelope {
  readonly op: FieldPath;
  readonly before: FieldPath;
  readonly after: FieldPath;
  /** Where the change's time is, first present wins; in tsUnit since the epoch. */
  readonly ts: readonly FieldPath[];
  readonly tsUnit: "s" | "ms" | "us" | "ns";
  /** The fields whose values, in order, are the source position; "debezium": by connector, as the header says. */
  readonly position: readonly FieldPath[] | "debezium";
  /** The op values, by kind. */
  readonly ops: Readonly<Record<ChangeKind, string>>;
  /** Metadata columns (`cdc_columns`): column name -> the envelope field it holds; `op` holds the op as written. */
  readonly columns: readonly { readonly column: string; readonly path: FieldPath }[];
}

/**
 * The column every row of a change stream carries: its change's source position, so that a later
 * sync can tell a replayed older change from a newer one (pipeline/change-order.ts).
 */
export const CDC_POSITION = "_cdc_position";

export const DEBEZIUM_OPS: Readonly<Record<ChangeKind, string>> = Object.freeze({
  create: "c",
  update: "u",
  delete: "d",
  read: "r",
});

/** Debezium's envelope. */
export const DEBEZIUM_ENVELOPE: CdcEnvelope = Object.freeze({
  op: ["op"],
  before: ["before"],
  after: ["after"],
  ts: [["source", "ts_ms"], ["ts_ms"]],
  tsUnit: "ms",
  position: "debezium",
  ops: DEBEZIUM_OPS,
  columns: [],
});

export interface Change {
  readonly kind: ChangeKind;
  /** The after image (create, update, read) or the before image, {} when absent (delete); the caller owns it. */
  readonly image: JsonRecord;
  /** Compares in source order (positionText); null when the envelope carries none. */
  readonly position: string | null;
  /** The change's time at the source, in milliseconds; null when the envelope carries none. */
  readonly tsMillis: number | null;
}

export interface EnvelopeProblem {
  readonly problem: string;
}

/** The envelope itself and its Connect schema: Debezium's JsonConverter wraps both as `{schema, payload}`. */
export function unwrapEnvelope(record: JsonRecord): { payload: JsonRecord; schema: unknown } {
  const payload = record.payload;
  if ("schema" in record && isObject(payload)) {
    let fields = 0;
    for (const _ in record) fields++;
    if (fields === 2) return { payload, schema: record.schema };
  }
  return { payload: record, schema: undefined };
}

/** The object at `path` of the envelope, where the after image lives: what whole decimals are looked for in. */
export function afterImageOf(record: JsonRecord, envelope: CdcEnvelope): unknown {
  return at(unwrapEnvelope(record).payload, envelope.after);
}

/** Takes an envelope apart; a problem names the field that is wrong. */
export function readChange(record: JsonRecord, envelope: CdcEnvelope): Change | EnvelopeProblem {
  const { payload, schema } = unwrapEnvelope(record);
  const op = at(payload, envelope.op);
  const opName = envelope.op.join(".");
  if (op === undefined || op === null) return { problem: `the envelope has no ${opName}` };
  const kind = kindOf(op, envelope.ops);
  if (kind === undefined) {
    const { create, update, delete: del, read } = envelope.ops;
    return {
      problem: `${opName} ${JSON.stringify(op)} is none of ${create}, ${update}, ${del}, ${read} (create, update, delete, read)`,
    };
  }
  const path = kind === "delete" ? envelope.before : envelope.after;
  const found = at(payload, path);
  let image: JsonRecord;
  if (isObject(found)) {
    image = found;
    if (schema !== undefined && path.length === 1) applyLogicalTypes(image, structField(schema, path[0]!));
  } else if (kind === "delete" && (found === null || found === undefined)) {
    // Debezium's before is null unless the table's replica identity says otherwise: the key names the row.
    image = {};
  } else {
    return {
      problem: `${path.join(".")} is ${found === undefined ? "missing" : found === null ? "null" : "not an object"} for ${opName} ${JSON.stringify(op)} (${kind})`,
    };
  }
  for (const { column, path } of envelope.columns) {
    const value = at(payload, path);
    if (value !== undefined) image[column] = value;
  }
  const position = positionOf(payload, envelope);
  if (kind !== "delete" && position !== null) image[CDC_POSITION] = position;
  return { kind, image, position, tsMillis: tsOf(payload, envelope) };
}

function kindOf(op: JsonValue, ops: Readonly<Record<ChangeKind, string>>): ChangeKind | undefined {
  if (typeof op !== "string") return undefined;
  if (op === ops.create) return "create";
  if (op === ops.update) return "update";
  if (op === ops.delete) return "delete";
  if (op === ops.read) return "read";
  return undefined;
}

function tsOf(payload: JsonRecord, envelope: CdcEnvelope): number | null {
  for (const path of envelope.ts) {
    const value = at(payload, path);
    if (typeof value !== "number" && typeof value !== "bigint") continue;
    const n = Number(value);
    switch (envelope.tsUnit) {
      case "s":
        return n * 1000;
      case "ms":
        return n;
      case "us":
        return Math.floor(n / 1000);
      case "ns":
        return Math.floor(n / 1e6);
    }
  }
  return null;
}

const DEBEZIUM_POSITIONS: readonly (readonly FieldPath[])[] = [
  [["source", "lsn"]],
  [
    ["source", "file"],
    ["source", "pos"],
    ["source", "row"],
  ],
  [
    ["source", "commit_lsn"],
    ["source", "change_lsn"],
    ["source", "event_serial_no"],
  ],
  [["source", "ts_ms"]],
  [["ts_ms"]],
];

function positionOf(payload: JsonRecord, envelope: CdcEnvelope): string | null {
  if (envelope.position !== "debezium") return positionText(payload, envelope.position);
  for (const fields of DEBEZIUM_POSITIONS) {
    // The first field decides which connector's position this is; the rest may be absent (row 0).
    const first = at(payload, fields[0]!);
    if (first !== undefined && first !== null) return positionText(payload, fields);
  }
  return null;
}

/** Digits of the largest int64: every non-negative integer position is padded to this width. */
const WIDTH = 19;

/**
 * The values at `fields`, each as a string that sorts like the value: an integer padded with
 * zeros (a negative one, which no source position is, sorts first), a string as it is (binlog
 * file names and SQL Server's LSNs are fixed-width), joined by a separator below every printable
 * character. Null when the first field is absent.
 */
export function positionText(payload: JsonRecord, fields: readonly FieldPath[]): string | null {
  let text = "";
  for (let i = 0; i < fields.length; i++) {
    const value = at(payload, fields[i]!);
    if (i === 0 && (value === undefined || value === null)) return null;
    if (i > 0) text += "\u0001";
    if (typeof value === "number" || typeof value === "bigint") {
      text += value < 0 ? `-${String(value).slice(1).padStart(WIDTH, "0")}` : String(value).padStart(WIDTH, "0");
    } else if (typeof value === "string") {
      text += value;
    }
  }
  return text;
}

function at(record: JsonRecord, path: FieldPath): JsonValue | undefined {
  let node: JsonValue | undefined = record;
  for (const name of path) {
    if (!isObject(node)) return undefined;
    node = node[name];
  }
  return node;
}

function isObject(value: JsonValue | undefined): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
