import assert from "node:assert/strict";
import { test } from "node:test";
import protobuf from "protobufjs";
import { avroDecoder } from "#src/decode/avro-decoder.ts";
import {
  CDC_POSITION,
  type CdcEnvelope,
  type Change,
  DEBEZIUM_ENVELOPE,
  type EnvelopeProblem,
  readChange,
} from "#src/decode/cdc-envelope.ts";
import { decodeJsonMessage, type JsonRecord } from "#src/decode/json-message.ts";
import { protobufDecoder } from "#src/decode/protobuf-decoder.ts";
import { typeToString } from "#src/iceberg/spec/types.ts";
import { parseJob } from "#src/job/load-job.ts";
import { avroWriter } from "../../../dev/registry.ts";
import {
  avroEnvelope,
  avroEnvelopeSchema,
  type ChangeMessage,
  CONFLUENT_PROTOBUF_FILES,
  DebeziumTable,
  protobufEnvelopeEncoder,
  protobufEnvelopeSchema,
  sourceRow,
} from "../../helpers/debezium-events.ts";

function change(value: JsonRecord, envelope: CdcEnvelope = DEBEZIUM_ENVELOPE): Change {
  const c = readChange(value, envelope);
  assert.ok(!("problem" in c), (c as EnvelopeProblem).problem);
  return c;
}

function problem(value: JsonRecord, envelope: CdcEnvelope = DEBEZIUM_ENVELOPE): string {
  const c = readChange(value, envelope);
  assert.ok("problem" in c, "expected a problem");
  return c.problem;
}

test("Debezium's envelope, bare or in the JsonConverter's {schema, payload}: the after image, its op, its position and time", () => {
  const payload = {
    before: null,
    after: { id: 1, name: "a" },
    source: { connector: "postgresql", lsn: 24023184, ts_ms: 1700000000000 },
    op: "c",
    ts_ms: 1700000000123,
  };
  const bare = change(structuredClone(payload));
  assert.equal(bare.kind, "create");
  assert.deepEqual(bare.image, { id: 1, name: "a", [CDC_POSITION]: "0000000000024023184" });
  assert.equal(bare.tsMillis, 1700000000000);
  const wrapped = change({ schema: { type: "struct", fields: [] }, payload: structuredClone(payload) });
  assert.deepEqual([wrapped.kind, wrapped.position, wrapped.image.name], ["create", "0000000000024023184", "a"]);
  // r (snapshot) and u upsert the after image too; d names its row by the before image, or {} when Debezium sends none.
  assert.equal(change({ ...structuredClone(payload), op: "r" }).kind, "read");
  assert.equal(change({ ...structuredClone(payload), op: "u" }).kind, "update");
  const d = change({ ...structuredClone(payload), op: "d", before: { id: 1 }, after: null });
  assert.deepEqual([d.kind, d.image], ["delete", { id: 1 }]);
  assert.deepEqual(change({ op: "d", before: null, after: null }).image, {});
});

test("the source position: Postgres lsn; MySQL file, pos and row; SQL Server's LSNs; else source.ts_ms, then ts_ms", () => {
  const at = (source: JsonRecord | undefined, ts_ms?: number) =>
    change({ op: "u", after: { id: 1 }, ...(source ? { source } : {}), ...(ts_ms ? { ts_ms } : {}) }).position;
  // Compared as strings, positions sort as the source does: 9 before 10, a later binlog file after any position of an earlier one.
  assert.ok(at({ lsn: 9 })! < at({ lsn: 10 })!);
  assert.ok(at({ lsn: 2n ** 60n })! > at({ lsn: 2 ** 52 })!);
  const mysql = (file: string, pos: number, row?: number) => at({ file, pos, ...(row === undefined ? {} : { row }) })!;
  assert.ok(mysql("mysql-bin.000003", 999) < mysql("mysql-bin.000003", 1000));
  assert.ok(mysql("mysql-bin.000003", 1000, 0) < mysql("mysql-bin.000003", 1000, 1));
  assert.ok(mysql("mysql-bin.000003", 99999) < mysql("mysql-bin.000004", 4));
  const mssql = (commit: string, change: string) => at({ commit_lsn: commit, change_lsn: change, event_serial_no: 1 })!;
  assert.ok(
    mssql("00000027:00000758:0003", "00000027:00000758:0002") <
      mssql("00000027:00000758:0005", "00000027:00000758:0004"),
  );
  assert.ok(at({ ts_ms: 5 })! < at({ ts_ms: 6 })!);
  assert.ok(at(undefined, 5)! < at(undefined, 6)!);
  assert.equal(at(undefined), null);
});

test("an envelope that is not a change event says which field is wrong", () => {
  assert.equal(problem({ after: { id: 1 } }), "the envelope has no op");
  assert.equal(problem({ op: "t", after: null }), 'op "t" is none of c, u, d, r (create, update, delete, read)');
  assert.equal(problem({ op: 1, after: {} }), "op 1 is none of c, u, d, r (create, update, delete, read)");
  assert.equal(problem({ op: "c" }), 'after is missing for op "c" (create)');
  assert.equal(problem({ op: "u", after: [1] }), 'after is not an object for op "u" (update)');
  assert.equal(problem({ op: "d", before: "x" }), 'before is not an object for op "d" (delete)');
});

/** The envelope a job file's stream settings make. */
function envelopeOf(stream: string): CdcEnvelope {
  const job = parseJob(
    `name: j\nsource:\n  kafka:\n    bootstrap_servers: [k:9092]\nstreams:\n  t: ${stream}\n`,
    "job.yaml",
  );
  return job.bindings.get("t")!.envelope!;
}

test("a generic envelope: Maxwell's {type, data, old, ts} with its op names, its ts in seconds and cdc_columns", () => {
  const maxwell = envelopeOf(
    "{mode: upsert, dedup_keys: [id], envelope: {op: type, before: data, after: data, ts: ts, ts_unit: s, position: [xid, xoffset], ops: {create: insert, update: update, delete: delete, read: bootstrap-insert}}, cdc_columns: [type, database]}",
  );
  const insert = change(
    { database: "shop", table: "t", type: "insert", ts: 1700000000, xid: 8, xoffset: 0, data: { id: 1, v: "a" } },
    maxwell,
  );
  assert.deepEqual(
    [insert.kind, insert.tsMillis, insert.image],
    [
      "create",
      1700000000000,
      { id: 1, v: "a", _cdc_type: "insert", _cdc_database: "shop", [CDC_POSITION]: insert.position },
    ],
  );
  const del = change({ type: "delete", ts: 1700000001, xid: 9, xoffset: 1, data: { id: 1, v: "a" } }, maxwell);
  assert.deepEqual([del.kind, del.image.id], ["delete", 1]);
  assert.ok(insert.position! < del.position!);
  assert.equal(change({ type: "bootstrap-insert", data: { id: 2 } }, maxwell).kind, "read");
  assert.match(problem({ type: "c", data: {} }, maxwell), /none of insert, update, delete, bootstrap-insert/);
});

test("whole decimals of the after image are doubles to inference, as at a plain record's top level", () => {
  const text = '{"op":"c","after":{"id":1,"price":1299.0},"source":{"lsn":5}}';
  const decoded = decodeJsonMessage(new TextEncoder().encode(text), (root) => (root.after as JsonRecord) ?? undefined);
  assert.equal(decoded.kind, "record");
  if (decoded.kind === "record") assert.deepEqual([...(decoded.wholeDecimals ?? [])], ["price"]);
});

test("Debezium's Avro envelope: the after record's fields are the columns, with Connect's types; a delete names its row by before", () => {
  const table = new DebeziumTable("pg", "avro_customers");
  const schema = avroEnvelopeSchema(table);
  const decoder = avroDecoder(JSON.stringify(schema)).changes!(DEBEZIUM_ENVELOPE);
  assert.deepEqual(
    decoder.columns.map((c) => [c.name, typeToString(c.type)]),
    [
      ["id", "int"],
      ["name", "string"],
      ["balance", "decimal(10, 2)"],
      ["born", "date"],
      ["updated_at", "timestamp"],
      [CDC_POSITION, "string"],
    ],
  );
  const writer = avroWriter(schema);
  const encode = (m: ChangeMessage) => new Uint8Array(writer.toBuffer(avroEnvelope(m.value, table)));
  const [create] = table.insert(sourceRow(1, "one", { balance: "-17.25", born: "1970-01-02", updatedAt: 5 }));
  const decoded = decoder.decode(encode(create!));
  assert.ok(!("problem" in decoded));
  assert.equal(decoded.change.kind, "create");
  assert.deepEqual(decoded.record, {
    id: 1,
    name: "one",
    balance: -1725n,
    born: 1,
    updated_at: 5,
    [CDC_POSITION]: decoded.change.position,
  });
  const [del] = table.delete(1);
  const gone = decoder.decode(encode(del!));
  assert.ok(!("problem" in gone));
  assert.deepEqual([gone.change.kind, gone.record.id], ["delete", 1]);
  assert.ok(gone.change.position! > decoded.change.position!);
  // A schema that is no envelope is refused as such.
  assert.throws(
    () =>
      avroDecoder(JSON.stringify({ type: "record", name: "R", fields: [{ name: "a", type: "int" }] })).changes!(
        DEBEZIUM_ENVELOPE,
      ),
    /no record field after/,
  );
});

test("Debezium's Protobuf envelope (Confluent's ProtobufConverter): the after message's fields are the columns, Connect's Decimal and Date typed; a delete names its row by before", () => {
  const table = new DebeziumTable("pg", "pb_customers");
  table.addColumn("email");
  const envelope: CdcEnvelope = {
    ...DEBEZIUM_ENVELOPE,
    columns: [
      { column: "_cdc_op", path: ["op"] },
      { column: "_cdc_lsn", path: ["source", "lsn"] },
    ],
  };
  const decoder = protobufDecoder(protobufEnvelopeSchema(table)).changes!(envelope);
  assert.deepEqual(
    decoder.columns.map((c) => [c.name, typeToString(c.type)]),
    [
      ["id", "int"],
      ["name", "string"],
      ["balance", "decimal(10, 2)"],
      ["born", "date"],
      ["updated_at", "timestamptz"],
      ["email", "string"],
      [CDC_POSITION, "string"],
      ["_cdc_op", "string"],
      ["_cdc_lsn", "long"],
    ],
  );
  const encode = protobufEnvelopeEncoder(table);
  const [create] = table.insert(sourceRow(1, "one", { balance: "-17.25", born: "1970-01-02", updatedAt: 5 }));
  const decoded = decoder.decode(encode(create!.value));
  assert.ok(!("problem" in decoded));
  assert.equal(decoded.change.kind, "create");
  const lsn = (create!.value as { payload: { source: { lsn: number } } }).payload.source.lsn;
  assert.deepEqual(decoded.record, {
    id: 1,
    name: "one",
    balance: -1725n,
    born: 1,
    updated_at: 5,
    email: null,
    [CDC_POSITION]: decoded.change.position,
    _cdc_op: "c",
    _cdc_lsn: lsn,
  });
  assert.equal(decoded.change.position, String(lsn).padStart(19, "0"));
  const [update] = table.update(1, { email: "one@example.com" });
  const updated = decoder.decode(encode(update!.value));
  assert.ok(!("problem" in updated));
  assert.deepEqual([updated.change.kind, updated.record.email], ["update", "one@example.com"]);
  assert.ok(updated.change.position! > decoded.change.position!);
  const [del] = table.delete(1);
  const gone = decoder.decode(encode(del!.value));
  assert.ok(!("problem" in gone));
  assert.deepEqual([gone.change.kind, gone.record.id, gone.record.balance], ["delete", 1, null]);
  // A field declared json keeps the message's JSON text.
  const text = protobufDecoder(protobufEnvelopeSchema(table)).changes!(envelope, new Set(["born"]));
  assert.equal(text.columns.find((c) => c.name === "born")?.type, "string");
  const asText = text.decode(encode(update!.value));
  assert.ok(!("problem" in asText));
  assert.equal(asText.record.born, '{"year":1970,"month":1,"day":2}');
  // An envelope without an op, and a message that is no envelope.
  const noOp = decoder.decode(encode({ payload: { ...(update!.value as { payload: object }).payload, op: "" } }));
  assert.ok("problem" in noOp && noOp.envelope);
  assert.match((noOp as { problem: string }).problem, /has no op|none of c, u, d, r/);
  assert.throws(
    () => protobufDecoder('syntax = "proto3"; message R { int32 a = 1; }').changes!(DEBEZIUM_ENVELOPE),
    /no message field after/,
  );
});

test("Protobuf: Confluent's well-known Decimal, Date and TimeOfDay are decimal, date and time columns without references", () => {
  const schema = `syntax = "proto3";
import "confluent/meta.proto";
import "confluent/type/decimal.proto";
import "google/type/date.proto";
import "google/type/timeofday.proto";
message Row {
  confluent.type.Decimal price = 1 [(confluent.field_meta) = { params: [{ key: "precision", value: "6" }, { key: "scale", value: "3" }] }];
  confluent.type.Decimal loose = 2;
  google.type.Date day = 3;
  google.type.TimeOfDay at = 4;
}`;
  const decoder = protobufDecoder(schema);
  assert.deepEqual(
    decoder.columns.map((c) => [c.name, typeToString(c.type)]),
    [
      ["price", "decimal(6, 3)"],
      ["loose", "string"],
      ["day", "date"],
      ["at", "time"],
    ],
  );
  const root = new protobuf.Root();
  for (const file of CONFLUENT_PROTOBUF_FILES) protobuf.parse(file, root, { keepCase: true });
  protobuf.parse(
    'syntax = "proto3"; package google.type; message TimeOfDay { int32 hours = 1; int32 minutes = 2; int32 seconds = 3; int32 nanos = 4; }',
    root,
  );
  protobuf.parse(schema, root, { keepCase: true });
  root.resolveAll();
  const Row = root.lookupType("Row");
  const encode = (v: object) => Row.encode(Row.fromObject(v)).finish();
  // -1.5 at scale 2 is -150 (0xff6a): rescaled exactly to -1500 at the column's scale 3.
  const decoded = decoder.decode(
    encode({
      price: { value: Uint8Array.of(0xff, 0x6a), scale: 2 },
      loose: { value: Uint8Array.of(0x04, 0xd2), scale: 3 },
      day: { year: 2026, month: 1, day: 2 },
      at: { hours: 1, minutes: 2, seconds: 3, nanos: 4_005_000 },
    }),
    [0],
  );
  assert.ok(!("problem" in decoded));
  assert.deepEqual({ ...decoded.record }, { price: -1500n, loose: "1.234", day: 20455, at: 3_723_004_005 });
  const tooFine = decoder.decode(encode({ price: { value: Uint8Array.of(0x04, 0xd3), scale: 4 } }), [0]);
  assert.ok("problem" in tooFine);
  assert.match(tooFine.problem, /field price: the decimal 0\.1235 has more places than its column's scale 3/);
});

// Events as Debezium 3.6.1's Postgres connector wrote them (pgoutput, JsonConverter with
// schemas, default decimal and time handling), captured by sync-debezium-postgres.test.ts; the
// schema keeps the after/before struct, the rest of the envelope's schema is left out.
const capturedRowSchema = {
  type: "struct",
  fields: [
    { type: "int32", optional: false, field: "id" },
    { type: "string", optional: true, field: "name" },
    {
      type: "bytes",
      optional: true,
      name: "org.apache.kafka.connect.data.Decimal",
      version: 1,
      parameters: { scale: "2", "connect.decimal.precision": "10" },
      field: "balance",
    },
    { type: "string", optional: true, name: "io.debezium.time.ZonedTimestamp", version: 1, field: "updated_at" },
    { type: "int64", optional: true, name: "io.debezium.time.MicroTimestamp", version: 1, field: "seen_at" },
    { type: "int32", optional: true, name: "io.debezium.time.Date", version: 1, field: "born" },
    { type: "boolean", optional: true, field: "active" },
    { type: "string", optional: true, name: "io.debezium.data.Uuid", version: 1, field: "ref" },
    { type: "string", optional: true, name: "io.debezium.data.Json", version: 1, field: "attrs" },
    { type: "int64", optional: true, field: "visits" },
    { type: "double", optional: true, field: "rating" },
  ],
  optional: true,
  name: "probe.public.customers.Value",
};
const capturedSchema = {
  type: "struct",
  fields: [
    { ...capturedRowSchema, field: "before" },
    { ...capturedRowSchema, field: "after" },
  ],
  optional: false,
  name: "probe.public.customers.Envelope",
};
const capturedSource = `{"version":"3.6.1.Final","connector":"postgresql","name":"probe","ts_ms":1796295732748,"snapshot":"false","db":"shop","sequence":"[null,\\"26369712\\"]","ts_us":1796295732748752,"ts_ns":1796295732748752000,"schema":"public","table":"customers","txId":729,"lsn":26369712,"xmin":null,"origin":null,"origin_lsn":null}`;

/** The change, and the after image's fields written as whole decimals (4.0: a double, not a long). */
function captured(payload: string): Change & { wholeDecimals: ReadonlySet<string> | undefined } {
  const text = `{"schema":${JSON.stringify(capturedSchema)},"payload":${payload}}`;
  const decoded = decodeJsonMessage(new TextEncoder().encode(text), (root) => (root.payload as JsonRecord)?.after);
  assert.equal(decoded.kind, "record");
  const { record, wholeDecimals } = decoded as { record: JsonRecord; wholeDecimals: ReadonlySet<string> | undefined };
  return { ...change(record), wholeDecimals };
}

test("a real Debezium 3.6 update: every logical type of the Postgres row as floe's columns take it", () => {
  const c = captured(
    `{"before":null,"after":{"id":1,"name":"uno","balance":"BOI=","updated_at":"2026-01-01T10:00:00.123456Z","seen_at":1767261600000000,"born":7338,"active":true,"ref":"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11","attrs":"{\\"a\\": 1, \\"b\\": [1, 2]}","visits":9007199254740993,"rating":4.0},"source":${capturedSource},"transaction":null,"op":"u","ts_ms":1796295733096,"ts_us":1796295733096558,"ts_ns":1796295733096558331}`,
  );
  assert.equal(c.kind, "update");
  assert.deepEqual([...(c.wholeDecimals ?? [])], ["rating"]);
  assert.deepEqual(c.image, {
    id: 1,
    name: "uno",
    balance: "12.50",
    updated_at: "2026-01-01T10:00:00.123456Z",
    seen_at: "2026-01-01T10:00:00.000000Z",
    born: "1990-02-03",
    active: true,
    ref: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
    attrs: '{"a": 1, "b": [1, 2]}',
    visits: 9007199254740993n,
    rating: 4,
    [CDC_POSITION]: "0000000000026369712",
  });
  assert.equal(c.position, "0000000000026369712");
  assert.equal(c.tsMillis, 1796295732748);
});

test("a real Debezium 3.6 delete: the before image holds the primary key and nulls", () => {
  const c = captured(
    `{"before":{"id":2,"name":null,"balance":null,"updated_at":null,"seen_at":null,"born":null,"active":null,"ref":null,"attrs":null,"visits":null,"rating":null},"after":null,"source":${capturedSource},"transaction":null,"op":"d","ts_ms":1796295733099}`,
  );
  assert.equal(c.kind, "delete");
  assert.equal(c.image.id, 2);
  assert.equal(c.position, "0000000000026369712");
});
