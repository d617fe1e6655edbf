// A source table and the change events Debezium's Postgres connector would emit for it, in
// Debezium's documented JSON format (JsonConverter with schemas.enable=true: each key and value
// is `{schema, payload}`; the value's payload is the envelope {before, after, source, op, ts_ms,
// transaction}). Produced to the format, not captured from a running Postgres
// (test/integration/sync-debezium-postgres.test.ts captures from one), in the shapes Debezium
// 3.6 was seen to write there: a delete's before image holds the primary key and nulls (replica
// identity DEFAULT), and the key-change headers hold the key's payload without its schema. The
// table itself is the model: after any sequence of changes, the Iceberg table must hold exactly
// its rows.
//
// Columns: id int32 (the primary key), name string, balance Decimal(10, 2) (base64 bytes),
// born io.debezium.time.Date (days), updated_at io.debezium.time.MicroTimestamp (µs); addColumn
// adds optional string columns, as an ALTER TABLE ADD COLUMN does upstream.

import protobuf from "protobufjs";

export interface SourceRow {
  id: number;
  name: string;
  /** Decimal text with two places: "12.50". */
  balance: string;
  /** YYYY-MM-DD. */
  born: string;
  /** Microseconds since the epoch. */
  updatedAt: number;
  [extra: string]: string | number;
}

export interface ChangeMessage {
  key: string;
  /** null: the tombstone after a delete. */
  value: unknown;
  headers?: Record<string, string>;
}

const BASE_LSN = 24_000_000;
const BASE_TS = 1_767_225_600_000; // 2026-01-01T00:00:00Z

export class DebeziumTable {
  readonly rows = new Map<number, SourceRow>();
  readonly extraColumns: string[] = [];
  /** Every event emitted so far, for replays. */
  readonly history: ChangeMessage[] = [];
  #lsn = BASE_LSN;
  readonly #topicPrefix: string;
  readonly server: string;
  readonly table: string;

  constructor(server = "pg", table = "customers") {
    this.server = server;
    this.table = table;
    this.#topicPrefix = `${server}.public.${table}`;
  }

  /** The snapshot phase: an `r` event per row. */
  snapshot(rows: SourceRow[]): ChangeMessage[] {
    return rows.map((row) => {
      this.rows.set(row.id, { ...row });
      return this.#event("r", null, row, true);
    });
  }

  insert(row: SourceRow): ChangeMessage[] {
    this.rows.set(row.id, { ...row });
    return [this.#event("c", null, row)];
  }

  update(id: number, change: Partial<SourceRow>): ChangeMessage[] {
    const before = this.rows.get(id);
    if (!before) throw new Error(`no row ${id}`);
    const after = { ...before, ...change, id } as SourceRow;
    this.rows.set(id, after);
    return [this.#event("u", before, after)];
  }

  /** A delete and the tombstone Debezium emits after it (tombstones.on.delete=true). */
  delete(id: number): ChangeMessage[] {
    const before = this.rows.get(id);
    if (!before) throw new Error(`no row ${id}`);
    this.rows.delete(id);
    return [this.#event("d", keyOnly(before), null), this.#tombstone(id)];
  }

  /** An UPDATE of the primary key: Debezium's delete of the old key, its tombstone, and a create of the new key. */
  changeKey(id: number, newId: number): ChangeMessage[] {
    const before = this.rows.get(id);
    if (!before) throw new Error(`no row ${id}`);
    const after = { ...before, id: newId };
    this.rows.delete(id);
    this.rows.set(newId, after);
    const oldKey = JSON.stringify({ id });
    const newKey = JSON.stringify({ id: newId });
    const lsn = this.#nextLsn();
    const d = this.#event("d", keyOnly(before), null, false, lsn);
    d.headers = { "__debezium.newkey": newKey };
    const tombstone = this.#tombstone(id);
    tombstone.headers = { "__debezium.newkey": newKey };
    const c = this.#event("c", null, after, false, lsn);
    c.headers = { "__debezium.oldkey": oldKey };
    return [d, tombstone, c];
  }

  /** ALTER TABLE ADD COLUMN: later events carry it (null in rows written before). */
  addColumn(name: string): void {
    this.extraColumns.push(name);
  }

  #nextLsn(): number {
    this.#lsn += 56;
    return this.#lsn;
  }

  #tombstone(id: number): ChangeMessage {
    const m: ChangeMessage = { key: keyText(this.#topicPrefix, id), value: null };
    this.history.push(m);
    return m;
  }

  #event(
    op: string,
    before: KeyOnlyRow | SourceRow | null,
    after: SourceRow | null,
    snapshot = false,
    lsn = this.#nextLsn(),
  ) {
    const ts = BASE_TS + (lsn - BASE_LSN);
    const rowSchema = (field: string) => ({
      type: "struct",
      fields: [
        { type: "int32", optional: false, default: 0, field: "id" },
        { type: "string", optional: true, field: "name" },
        {
          type: "bytes",
          optional: true,
          name: "org.apache.kafka.connect.data.Decimal",
          version: 1,
          parameters: { scale: "2", "connect.decimal.precision": "10" },
          field: "balance",
        },
        { type: "int32", optional: true, name: "io.debezium.time.Date", version: 1, field: "born" },
        { type: "int64", optional: true, name: "io.debezium.time.MicroTimestamp", version: 1, field: "updated_at" },
        ...this.extraColumns.map((c) => ({ type: "string", optional: true, field: c })),
      ],
      optional: true,
      name: `${this.#topicPrefix}.Value`,
      field,
    });
    const value = {
      schema: {
        type: "struct",
        fields: [
          rowSchema("before"),
          rowSchema("after"),
          {
            type: "struct",
            fields: [
              { type: "string", optional: false, field: "version" },
              { type: "string", optional: false, field: "connector" },
              { type: "string", optional: false, field: "name" },
              { type: "int64", optional: false, field: "ts_ms" },
              {
                type: "string",
                optional: true,
                name: "io.debezium.data.Enum",
                version: 1,
                parameters: { allowed: "true,last,false,incremental" },
                default: "false",
                field: "snapshot",
              },
              { type: "string", optional: false, field: "db" },
              { type: "string", optional: true, field: "sequence" },
              { type: "string", optional: false, field: "schema" },
              { type: "string", optional: false, field: "table" },
              { type: "int64", optional: true, field: "txId" },
              { type: "int64", optional: true, field: "lsn" },
              { type: "int64", optional: true, field: "xmin" },
            ],
            optional: false,
            name: "io.debezium.connector.postgresql.Source",
            field: "source",
          },
          { type: "string", optional: false, field: "op" },
          { type: "int64", optional: true, field: "ts_ms" },
          {
            type: "struct",
            fields: [
              { type: "string", optional: false, field: "id" },
              { type: "int64", optional: false, field: "total_order" },
              { type: "int64", optional: false, field: "data_collection_order" },
            ],
            optional: true,
            name: "event.block",
            version: 1,
            field: "transaction",
          },
        ],
        optional: false,
        name: `${this.#topicPrefix}.Envelope`,
        version: 1,
      },
      payload: {
        before: before && this.#image(before),
        after: after && this.#image(after),
        source: {
          version: "3.6.1.Final",
          connector: "postgresql",
          name: this.server,
          ts_ms: ts,
          snapshot: snapshot ? "true" : "false",
          db: "shop",
          sequence: JSON.stringify([String(lsn - 56), String(lsn)]),
          schema: "public",
          table: this.table,
          txId: 700 + (lsn - BASE_LSN) / 56,
          lsn,
          xmin: null,
        },
        op,
        ts_ms: ts + 7,
        transaction: null,
      },
    };
    const m: ChangeMessage = { key: keyText(this.#topicPrefix, (after ?? before)!.id), value };
    this.history.push(m);
    return m;
  }

  #image(row: KeyOnlyRow | SourceRow): Record<string, unknown> {
    const image: Record<string, unknown> = {
      id: row.id,
      name: row.name ?? null,
      balance: row.balance === undefined ? null : decimalBytes(row.balance),
      born: row.born === undefined ? null : Math.round(Date.parse(`${row.born}T00:00:00Z`) / 86_400_000),
      updated_at: row.updatedAt ?? null,
    };
    for (const c of this.extraColumns) image[c] = row[c] ?? null;
    return image;
  }
}

/** A delete's before image under replica identity DEFAULT: the primary key, every other column null. */
interface KeyOnlyRow {
  id: number;
  name?: undefined;
  balance?: undefined;
  born?: undefined;
  updatedAt?: undefined;
  [extra: string]: string | number | undefined;
}

function keyOnly(row: SourceRow): KeyOnlyRow {
  return { id: row.id };
}

/** The key Debezium writes: the primary key as a struct, with its schema. */
export function keyText(topicPrefix: string, id: number): string {
  return JSON.stringify({
    schema: {
      type: "struct",
      fields: [{ type: "int32", optional: false, default: 0, field: "id" }],
      optional: false,
      name: `${topicPrefix}.Key`,
    },
    payload: { id },
  });
}

/** A decimal text with two places as Connect's Decimal bytes: the unscaled value, big-endian two's complement, base64. */
export function decimalBytes(text: string): string {
  let unscaled = BigInt(text.replace(".", ""));
  const bytes: number[] = [];
  do {
    bytes.unshift(Number(unscaled & 0xffn));
    unscaled >>= 8n;
  } while (unscaled !== 0n && unscaled !== -1n);
  if (unscaled === 0n && bytes[0]! & 0x80) bytes.unshift(0);
  if (unscaled === -1n && !(bytes[0]! & 0x80)) bytes.unshift(0xff);
  return Buffer.from(bytes).toString("base64");
}

export function sourceRow(id: number, name: string, extra: Partial<SourceRow> = {}): SourceRow {
  return {
    id,
    name,
    balance: `${id * 3}.${String(id % 100).padStart(2, "0")}`,
    born: `19${String(50 + (id % 50)).padStart(2, "0")}-0${1 + (id % 9)}-1${id % 10}`,
    updatedAt: 1_767_225_600_000_000 + id * 1_000_123,
    ...extra,
  } as SourceRow;
}

/**
 * The Avro schema Debezium's AvroConverter registers for the table's envelopes (its value
 * subject), with the table's extra columns: Connect types in `connect.name`, Decimal with Avro's
 * decimal logical type, optional columns as unions with null.
 */
export function avroEnvelopeSchema(table: DebeziumTable): object {
  const optional = (type: unknown) => ({ type: ["null", type], default: null });
  const ns = `${table.server}.public.${table.table}`;
  return {
    type: "record",
    name: "Envelope",
    namespace: ns,
    fields: [
      {
        name: "before",
        ...optional({
          type: "record",
          name: "Value",
          fields: [
            { name: "id", type: { type: "int", "connect.default": 0 }, default: 0 },
            { name: "name", ...optional("string") },
            {
              name: "balance",
              ...optional({
                type: "bytes",
                scale: 2,
                precision: 10,
                "connect.version": 1,
                "connect.parameters": { scale: "2", "connect.decimal.precision": "10" },
                "connect.name": "org.apache.kafka.connect.data.Decimal",
                logicalType: "decimal",
              }),
            },
            {
              name: "born",
              ...optional({ type: "int", "connect.version": 1, "connect.name": "io.debezium.time.Date" }),
            },
            {
              name: "updated_at",
              ...optional({ type: "long", "connect.version": 1, "connect.name": "io.debezium.time.MicroTimestamp" }),
            },
            ...table.extraColumns.map((c) => ({ name: c, ...optional("string") })),
          ],
          "connect.name": `${ns}.Value`,
        }),
      },
      { name: "after", ...optional("Value") },
      {
        name: "source",
        type: {
          type: "record",
          name: "Source",
          namespace: "io.debezium.connector.postgresql",
          fields: [
            { name: "version", type: "string" },
            { name: "connector", type: "string" },
            { name: "name", type: "string" },
            { name: "ts_ms", type: "long" },
            { name: "snapshot", ...optional("string") },
            { name: "db", type: "string" },
            { name: "sequence", ...optional("string") },
            { name: "schema", type: "string" },
            { name: "table", type: "string" },
            { name: "txId", ...optional("long") },
            { name: "lsn", ...optional("long") },
            { name: "xmin", ...optional("long") },
          ],
          "connect.name": "io.debezium.connector.postgresql.Source",
        },
      },
      { name: "op", type: "string" },
      { name: "ts_ms", ...optional("long") },
      {
        name: "transaction",
        ...optional({
          type: "record",
          name: "block",
          namespace: "event",
          fields: [
            { name: "id", type: "string" },
            { name: "total_order", type: "long" },
            { name: "data_collection_order", type: "long" },
          ],
        }),
      },
    ],
    "connect.name": `${ns}.Envelope`,
  };
}

/** The Avro datum of a JSON change event's payload (as avsc writes it: bytes as Buffers, longs as bigints). */
export function avroEnvelope(value: unknown, table: DebeziumTable): Record<string, unknown> {
  const payload = (value as { payload: Record<string, unknown> }).payload;
  const image = (row: Record<string, unknown> | null) =>
    row && {
      ...Object.fromEntries(table.extraColumns.map((c) => [c, null])),
      ...row,
      balance: row.balance === null ? null : Buffer.from(row.balance as string, "base64"),
      updated_at: row.updated_at === null ? null : BigInt(row.updated_at as number),
    };
  const source = payload.source as Record<string, unknown>;
  return {
    before: image(payload.before as Record<string, unknown> | null),
    after: image(payload.after as Record<string, unknown> | null),
    source: {
      ...source,
      ts_ms: BigInt(source.ts_ms as number),
      txId: BigInt(source.txId as number),
      lsn: BigInt(source.lsn as number),
    },
    op: payload.op,
    ts_ms: BigInt(payload.ts_ms as number),
    transaction: null,
  };
}

/**
 * The .proto Confluent's ProtobufConverter registers for the table's envelopes (its value
 * subject), with Debezium at `decimal.handling.mode: precise` and `time.precision.mode:
 * connect` and the converter at `optional.for.nullables: true`: one message `Envelope` in the
 * package of the Connect schema's namespace, its fields numbered in order, each struct a message
 * nested in it under the struct's unqualified name; Connect's Decimal a confluent.type.Decimal
 * with its precision and scale in `(confluent.field_meta)`, Date a google.type.Date, Timestamp a
 * google.protobuf.Timestamp; an optional primitive a proto3 `optional`. The well-known imports
 * have no references: the registry knows them.
 */
export function protobufEnvelopeSchema(table: DebeziumTable): string {
  const extra = table.extraColumns.map((c, i) => `    optional string ${c} = ${6 + i};`).join("\n");
  return `syntax = "proto3";
package ${table.server}.public.${table.table};

import "confluent/meta.proto";
import "confluent/type/decimal.proto";
import "google/protobuf/timestamp.proto";
import "google/type/date.proto";

message Envelope {
  Value before = 1;
  Value after = 2;
  Source source = 3;
  string op = 4;
  optional int64 ts_ms = 5;
  block transaction = 6;

  message Value {
    int32 id = 1;
    optional string name = 2;
    confluent.type.Decimal balance = 3 [(confluent.field_meta) = { params: [{ key: "precision", value: "10" }, { key: "scale", value: "2" }] }];
    google.type.Date born = 4;
    google.protobuf.Timestamp updated_at = 5;
${extra}
  }
  message Source {
    string version = 1;
    string connector = 2;
    string name = 3;
    int64 ts_ms = 4;
    optional string snapshot = 5;
    string db = 6;
    optional string sequence = 7;
    string schema = 8;
    string table = 9;
    optional int64 txId = 10;
    optional int64 lsn = 11;
    optional int64 xmin = 12;
  }
  message block {
    string id = 1;
    int64 total_order = 2;
    int64 data_collection_order = 3;
  }
}
`;
}

/** The well-known files the envelope's schema imports, as the registry knows them: what an encoder parses with it. */
export const CONFLUENT_PROTOBUF_FILES: readonly string[] = [
  `syntax = "proto3"; package confluent;
   message Meta { string doc = 1; map<string, string> params = 2; repeated string tags = 3; }`,
  `syntax = "proto3"; package confluent.type;
   message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; }`,
  `syntax = "proto3"; package google.type;
   message Date { int32 year = 1; int32 month = 2; int32 day = 3; }`,
];

/** The Protobuf message (as protobufjs's fromObject takes it) of a JSON change event's payload. */
export function protobufEnvelope(value: unknown, table: DebeziumTable): Record<string, unknown> {
  const payload = (value as { payload: Record<string, unknown> }).payload;
  const image = (row: Record<string, unknown> | null) => {
    if (row === null) return undefined;
    const out: Record<string, unknown> = { id: row.id };
    if (row.name !== null) out.name = row.name;
    if (row.balance !== null) {
      out.balance = { value: Buffer.from(row.balance as string, "base64"), precision: 10, scale: 2 };
    }
    if (row.born !== null) {
      const d = new Date((row.born as number) * 86_400_000);
      out.born = { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
    }
    if (row.updated_at !== null) {
      const us = row.updated_at as number;
      out.updated_at = { seconds: Math.floor(us / 1_000_000), nanos: (us % 1_000_000) * 1000 };
    }
    for (const c of table.extraColumns) if (row[c] !== null && row[c] !== undefined) out[c] = row[c];
    return out;
  };
  const source = { ...(payload.source as Record<string, unknown>) };
  delete source.xmin;
  return {
    before: image(payload.before as Record<string, unknown> | null),
    after: image(payload.after as Record<string, unknown> | null),
    source,
    op: payload.op,
    ts_ms: payload.ts_ms,
  };
}

/** Encodes the table's change events as its Envelope messages, with the schema of protobufEnvelopeSchema as it is now. */
export function protobufEnvelopeEncoder(table: DebeziumTable): (value: unknown) => Uint8Array {
  const root = new protobuf.Root();
  root.addJSON(protobuf.common.get("google/protobuf/timestamp.proto")!.nested!);
  for (const file of CONFLUENT_PROTOBUF_FILES) protobuf.parse(file, root, { keepCase: true });
  protobuf.parse(protobufEnvelopeSchema(table), root, { keepCase: true });
  root.resolveAll();
  const type = root.lookupType(`${table.server}.public.${table.table}.Envelope`);
  return (value) => type.encode(type.fromObject(protobufEnvelope(value, table))).finish();
}
