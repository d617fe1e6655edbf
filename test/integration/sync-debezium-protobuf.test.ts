// A Debezium change stream in Protobuf through the real schema registry: the envelopes Confluent's
// ProtobufConverter writes for Debezium (produced to its documented schema conventions, not
// captured from a running Postgres: the converter is not on Maven Central;
// test/helpers/debezium-events.ts), keyed by the framed primary key. The schema imports
// Confluent's well-known decimal and meta files without references, as the converter registers
// it. After every sync DuckDB, PyIceberg and Spark read exactly the source table's rows, in the
// Iceberg types the schema says (int, decimal(10, 2), date, timestamptz). Phases: the snapshot
// and inserts; updates, deletes with their tombstones and a primary-key change; a connector
// replay; a column added upstream (a new schema version).
import assert from "node:assert/strict";
import { test } from "node:test";
import protobuf from "protobufjs";
import { typeToString } from "#src/iceberg/spec/types.ts";
import { produce } from "../../dev/kafka.ts";
import { type Row, restTable } from "../../dev/readers.ts";
import { protobufValue, registerSchema } from "../../dev/registry.ts";
import {
  type ChangeMessage,
  DebeziumTable,
  protobufEnvelopeEncoder,
  protobufEnvelopeSchema,
  sourceRow,
} from "../helpers/debezium-events.ts";
import { registrySuite, report, tableSchema } from "../helpers/registry-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const suite = registrySuite();
const { run, topics, stateDir, jobFor } = suite;
const partitions = 2;

test("Debezium's Protobuf envelopes land as the source table, after every phase, in all three readers", async () => {
  const topic = await topics.create("pb_customers", partitions);
  const source = new DebeziumTable(run, "pb_customers");
  const keyProto = `syntax = "proto3";\npackage ${run}.public.pb_customers;\n\nmessage Key {\n  int32 id = 1;\n}\n`;
  const keyId = await registerSchema(`${topic}-key`, keyProto, { schemaType: "PROTOBUF" });
  const keyRoot = protobuf.parse(keyProto, new protobuf.Root(), { keepCase: true }).root;
  const Key = keyRoot.lookupType(`${run}.public.pb_customers.Key`);
  let valueId = await registerSchema(`${topic}-value`, protobufEnvelopeSchema(source), { schemaType: "PROTOBUF" });
  let encode = protobufEnvelopeEncoder(source);

  const name = `${run}_dbzpb`;
  const namespace = `${name}_topics`;
  const job = jobFor(name, {
    [topic]: {
      mode: "upsert",
      format: "protobuf",
      envelope: "debezium",
      dedup_keys: ["id"],
      table: "customers",
      cdc_columns: ["op", "source.lsn"],
    },
  });

  async function produceChanges(messages: ChangeMessage[]) {
    await produce(
      topic,
      messages.map((m) => {
        const id = JSON.parse(m.key).payload.id as number;
        return {
          key: protobufValue(keyId, [0], Key.encode(Key.fromObject({ id })).finish()),
          value: m.value === null ? null : protobufValue(valueId, [0], encode(m.value)),
          partition: id % partitions,
        };
      }),
    );
  }

  function micros(us: number): string {
    const iso = new Date(Math.floor(us / 1000)).toISOString();
    return `${iso.slice(0, 23)}${String(us % 1000).padStart(3, "0")}Z`;
  }

  /** The op and LSN of each row's last change, as the model's history says. */
  function lastChanges(): Map<number, { op: string; lsn: number }> {
    const last = new Map<number, { op: string; lsn: number }>();
    for (const m of source.history) {
      const payload = (m.value as { payload?: { op: string; after: { id: number } | null; source: { lsn: number } } })
        ?.payload;
      if (payload?.after) {
        const seen = last.get(payload.after.id);
        if (seen === undefined || seen.lsn <= payload.source.lsn) {
          last.set(payload.after.id, { op: payload.op, lsn: payload.source.lsn });
        }
      }
    }
    return last;
  }

  async function syncAndCheck() {
    const r = await syncJob(job, { stateDir });
    assert.equal(r.status, "complete");
    const t = report(r, "customers");
    assert.equal(t.deadLetters, 0);
    const last = lastChanges();
    const expected: Row[] = [...source.rows.values()]
      .sort((a, b) => a.id - b.id)
      .map((row) => ({
        id: row.id,
        name: row.name,
        balance: row.balance,
        born: row.born,
        updated_at: micros(row.updatedAt),
        ...Object.fromEntries(source.extraColumns.map((c) => [c, row[c] ?? null])),
        _cdc_op: last.get(row.id)!.op,
        _cdc_lsn: BigInt(last.get(row.id)!.lsn),
      }));
    await suite.readers.assertRows(restTable(namespace, "customers"), expected, {
      columns: ["id", "name", "balance", "born", "updated_at", ...source.extraColumns, "_cdc_op", "_cdc_lsn"],
      orderBy: ["id"],
    });
    return t;
  }

  await produceChanges([
    ...source.snapshot(Array.from({ length: 12 }, (_, i) => sourceRow(i + 1, `c${i + 1}`))),
    ...source.insert(sourceRow(20, "c20")),
  ]);
  await syncAndCheck();
  const types = new Map((await tableSchema(namespace, "customers")).fields.map((f) => [f.name, typeToString(f.type)]));
  assert.deepEqual(
    ["id", "name", "balance", "born", "updated_at", "_cdc_position", "_cdc_op", "_cdc_lsn"].map((c) => types.get(c)),
    ["int", "string", "decimal(10, 2)", "date", "timestamptz", "string", "string", "long"],
  );

  const olderUpdate = source.update(3, { name: "three, older" });
  await produceChanges([
    ...olderUpdate,
    ...source.update(3, { name: "three", balance: "-1.05" }),
    ...source.delete(4),
    ...source.changeKey(5, 105),
    ...source.update(20, { name: "twenty" }),
  ]);
  await syncAndCheck();

  // A replay in a sync of its own: the older update of 3 must not win.
  await produceChanges(olderUpdate);
  const replay = await syncAndCheck();
  assert.deepEqual([replay.recordsAdded, replay.positionsDeleted], [0, 0]);

  // ALTER TABLE ADD COLUMN: the converter registers a new schema version with the column.
  source.addColumn("email");
  valueId = await registerSchema(`${topic}-value`, protobufEnvelopeSchema(source), { schemaType: "PROTOBUF" });
  encode = protobufEnvelopeEncoder(source);
  await produceChanges([...source.update(6, { email: "six@example.com" }), ...source.delete(7)]);
  const evolved = await syncAndCheck();
  assert.deepEqual(evolved.columnsAdded, ["email"]);
});
