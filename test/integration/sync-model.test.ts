// Several syncs of three 3-partition topics read with max_threads 3, against the real broker
// and REST catalog, each compared with an in-memory model (test/helpers/sync-model.ts) through
// DuckDB, PyIceberg and Spark: an upsert stream keyed on _kafka_key (tombstones delete), an
// upsert stream keyed on a payload field (tombstones are counted and ignored) and an append
// stream (every message, tombstones too). Keys repeat within a sync and across syncs, deleted
// keys come back, and a new field appears in the third sync. The commit report of every sync
// must show the model's figures. FLOE_SEED replays a run.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { SyncReport } from "#src/pipeline/sync.ts";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { buildJob } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import {
  AppendModel,
  type BatchFigures,
  defaultConvert,
  modelColumns,
  OffsetCounter,
  produceExactly,
  Random,
  UpsertModel,
  type Value,
} from "../helpers/sync-model.ts";

const seed = Number(process.env.FLOE_SEED ?? Date.now() % 1_000_000);
const random = new Random(seed);
const run = `${process.pid}_${Date.now()}`;
const prefix = `model${run}_`;
const name = `model_${run}`;
const namespace = `${name}_topics`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-model-"));
const PARTITIONS = 3;
const SYNCS = 4;

const topics = { kv: `${prefix}kv`, acct: `${prefix}acct`, events: `${prefix}events` };

const job = buildJob(
  {
    name,
    kafka: {
      consumer_group: `floe_${name}`,
      topic_pattern: `^${prefix}(kv|acct|events)$`,
      security: { protocol: "PLAINTEXT" },
      max_threads: 3,
    },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri }, target_engines: ["databricks", "duckdb", "spark"] },
    streams: {
      [topics.kv]: { mode: "upsert", dedup_keys: ["_kafka_key"], table: "kv" },
      [topics.acct]: { mode: "upsert", dedup_keys: ["id"], table: "acct" },
      [topics.events]: { mode: "append", table: "events" },
    },
  },
  join(stateDir, "job.yaml"),
);

let readers: Readers;
before(async () => {
  readers = await startReaders();
  for (const topic of Object.values(topics)) await createTopic(topic, PARTITIONS);
});
after(async () => {
  await readers?.close();
  for (const topic of Object.values(topics)) await deleteTopic(topic);
});

const counters = { kv: new OffsetCounter(), acct: new OffsetCounter(), events: new OffsetCounter() };
const models = {
  kv: new UpsertModel((m) => m.key, true),
  acct: new UpsertModel((m) => (m.value === null || typeof m.value === "string" ? null : String(m.value.id)), false),
  events: new AppendModel(),
};

/** A random instant as ISO 8601 with milliseconds, in UTC or at an offset of whole or half hours. */
function timestamp(): string {
  const ms = Date.UTC(2020, 0, 1) + random.int(5 * 365 * 86_400) * 1000 + random.int(1000);
  const offsetMinutes = random.chance(0.5) ? 0 : (random.int(27) - 13) * 30;
  if (offsetMinutes === 0) return new Date(ms).toISOString();
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, -1);
  const sign = offsetMinutes < 0 ? "-" : "+";
  const abs = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

/** The messages of one sync; from the third on, some values carry a new field `tag`. */
function generate(sync: number) {
  const tag = (v: Value): Value => (sync >= 2 && random.chance(0.5) ? { ...v, tag: `t${sync}_${random.int(5)}` } : v);
  const kv = Array.from({ length: 150 }, () => {
    const k = random.int(40);
    const value = random.chance(0.2) ? null : tag({ name: `kv${k}_${sync}_${random.int(1000)}`, n: random.int(1e6) });
    return { partition: k % PARTITIONS, key: `k${k}`, value };
  });
  const acct = Array.from({ length: 150 }, () => {
    const id = random.int(50);
    const value = random.chance(0.1)
      ? null
      : {
          id,
          name: `acct${id}_${sync}`,
          n: random.int(1e6) - 500_000,
          // The other inferred types: timestamptz (any offset, read in UTC), boolean, double, and a
          // struct holding a long and a list of strings.
          at: timestamp(),
          ok: random.chance(0.5),
          score: random.int(10_000) / 10 + 0.05,
          meta: { tier: random.int(3), tags: [`t${random.int(4)}`, null] },
        };
    return { partition: id % PARTITIONS, key: `a${id}`, value };
  });
  const events = Array.from({ length: 120 }, (_, i) => ({
    partition: random.int(PARTITIONS),
    key: random.chance(0.2) ? null : `e${random.int(30)}`,
    value: random.chance(0.1) ? null : tag({ seq: sync * 1000 + i, kind: random.chance(0.5) ? "click" : "view" }),
  }));
  return { kv: counters.kv.assign(kv), acct: counters.acct.assign(acct), events: counters.events.assign(events) };
}

function tableFigures(report: SyncReport, table: string): BatchFigures {
  const t = report.tables.find((r) => r.table === `${namespace}.${table}`);
  assert.ok(t, `no report for ${table}`);
  return {
    messagesRead: t.messagesRead,
    recordsAdded: t.recordsAdded,
    positionsDeleted: t.positionsDeleted,
    tombstonesIgnored: t.tombstonesIgnored,
  };
}

const orderBy = ["_kafka_partition", "_kafka_offset"];

test(`3 partitions, max_threads 3: every sync matches the model in DuckDB, PyIceberg and Spark (FLOE_SEED=${seed})`, async () => {
  for (let sync = 0; sync < SYNCS; sync++) {
    const batch = generate(sync);
    await Promise.all([
      produceExactly(topics.kv, batch.kv, counters.kv),
      produceExactly(topics.acct, batch.acct, counters.acct),
      produceExactly(topics.events, batch.events, counters.events),
    ]);
    const figures = {
      kv: models.kv.apply(batch.kv),
      acct: models.acct.apply(batch.acct),
      events: models.events.apply(batch.events),
    };
    const report = await syncJob(job, { stateDir });
    const where = `sync ${sync + 1} (FLOE_SEED=${seed})`;
    assert.equal(report.status, "complete", where);
    assert.equal(report.messagesRead, batch.kv.length + batch.acct.length + batch.events.length, where);
    for (const table of ["kv", "acct", "events"] as const) {
      assert.deepEqual(tableFigures(report, table), figures[table], `${where}: report of ${table}`);
    }

    const tagged = sync >= 2 ? ["tag"] : [];
    const kvColumns = ["name", "n", ...tagged];
    await readers.assertRows(restTable(namespace, "kv"), models.kv.rows(kvColumns), {
      columns: modelColumns(kvColumns),
      orderBy,
    });
    const acctColumns = ["id", "name", "n", "at", "ok", "score", "meta"];
    const acctRow = (column: string, v: unknown) => {
      if (column !== "meta" || v === null) return defaultConvert(column, v);
      const meta = v as { tier: number; tags: (string | null)[] };
      return { tier: BigInt(meta.tier), tags: meta.tags };
    };
    await readers.assertRows(restTable(namespace, "acct"), models.acct.rows(acctColumns, acctRow), {
      columns: modelColumns(acctColumns),
      orderBy,
    });
    const eventColumns = ["seq", "kind", ...tagged];
    await readers.assertRows(restTable(namespace, "events"), models.events.rows(eventColumns), {
      columns: modelColumns(eventColumns),
      orderBy,
    });
    console.log(
      `${where}: kv ${models.kv.live.size} live keys, acct ${models.acct.live.size}, events ${models.events.messages.length} rows; report ${JSON.stringify(figures)}`,
    );
  }

  // Nothing new: nothing read, nothing changed.
  const idle = await syncJob(job, { stateDir });
  assert.equal(idle.messagesRead, 0);
});
