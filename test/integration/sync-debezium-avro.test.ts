// A Debezium change stream in Avro through the real schema registry: the envelopes Debezium's
// AvroConverter writes (produced to its documented schema, not captured from a running Postgres;
// test/helpers/debezium-events.ts), keyed by the framed primary key. After every sync DuckDB,
// PyIceberg and Spark read exactly the source table's rows, in the Iceberg types Connect's names
// say (int, decimal(10, 2), date, timestamp). Phases: the snapshot and inserts; updates, deletes
// with their tombstones and a primary-key change; a connector replay; a column added upstream
// (a new schema version).
import assert from "node:assert/strict";
import { test } from "node:test";
import { produce } from "../../dev/kafka.ts";
import { type Row, restTable } from "../../dev/readers.ts";
import { avroValue, avroWriter, registerSchema } from "../../dev/registry.ts";
import {
  avroEnvelope,
  avroEnvelopeSchema,
  type ChangeMessage,
  DebeziumTable,
  sourceRow,
} from "../helpers/debezium-events.ts";
import { registrySuite, report } from "../helpers/registry-sync.ts";
import { syncJob } from "../helpers/sync-job.ts";

const suite = registrySuite();
const { run, topics, stateDir, jobFor } = suite;
const partitions = 2;

test("Debezium's Avro envelopes land as the source table, after every phase, in all three readers", async () => {
  const topic = await topics.create("avro_customers", partitions);
  const source = new DebeziumTable(run, "avro_customers");
  const keySchema = {
    type: "record",
    name: "Key",
    namespace: `${run}.public.avro_customers`,
    fields: [{ name: "id", type: "int" }],
  };
  const keyId = await registerSchema(`${topic}-key`, keySchema);
  const keyWriter = avroWriter(keySchema);
  let valueId = await registerSchema(`${topic}-value`, avroEnvelopeSchema(source));
  let valueWriter = avroWriter(avroEnvelopeSchema(source));

  const name = `${run}_dbz`;
  const job = jobFor(name, {
    [topic]: { mode: "upsert", format: "avro", envelope: "debezium", dedup_keys: ["id"], table: "customers" },
  });

  async function produceChanges(messages: ChangeMessage[]) {
    await produce(
      topic,
      messages.map((m) => {
        const id = JSON.parse(m.key).payload.id as number;
        return {
          key: avroValue(keyId, keyWriter, { id }),
          value: m.value === null ? null : avroValue(valueId, valueWriter, avroEnvelope(m.value, source)),
          partition: id % partitions,
        };
      }),
    );
  }

  function micros(us: number): string {
    const iso = new Date(Math.floor(us / 1000)).toISOString();
    return `${iso.slice(0, 23)}${String(us % 1000).padStart(3, "0")}`;
  }

  async function syncAndCheck() {
    const r = await syncJob(job, { stateDir });
    assert.equal(r.status, "complete");
    const t = report(r, "customers");
    assert.equal(t.deadLetters, 0);
    const expected: Row[] = [...source.rows.values()]
      .sort((a, b) => a.id - b.id)
      .map((row) => ({
        id: row.id,
        name: row.name,
        balance: row.balance,
        born: row.born,
        updated_at: micros(row.updatedAt),
        ...Object.fromEntries(source.extraColumns.map((c) => [c, row[c] ?? null])),
      }));
    await suite.readers.assertRows(restTable(`${name}_topics`, "customers"), expected, {
      columns: ["id", "name", "balance", "born", "updated_at", ...source.extraColumns],
      orderBy: ["id"],
    });
    return t;
  }

  await produceChanges([
    ...source.snapshot(Array.from({ length: 12 }, (_, i) => sourceRow(i + 1, `c${i + 1}`))),
    ...source.insert(sourceRow(20, "c20")),
  ]);
  await syncAndCheck();

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

  // ALTER TABLE ADD COLUMN: Debezium registers a new schema version with the column.
  source.addColumn("email");
  valueId = await registerSchema(`${topic}-value`, avroEnvelopeSchema(source));
  valueWriter = avroWriter(avroEnvelopeSchema(source));
  await produceChanges([...source.update(6, { email: "six@example.com" }), ...source.delete(7)]);
  const evolved = await syncAndCheck();
  assert.deepEqual(evolved.columnsAdded, ["email"]);
});
