// Months of a shared table, compressed: a randomized run of floe syncs (upserts, tombstones and
// appends), floe's own maintenance (compaction, manifest rewrite, snapshot expiry, orphan
// removal) and Spark as the other engine (rewrite_data_files, rewrite_manifests,
// expire_snapshots(retain_last => 1), INSERT and MERGE of existing keys, DELETE), some of them
// concurrently with a sync. After every step DuckDB, PyIceberg and Spark must read exactly the
// model's rows: nothing duplicated, nothing lost, no message landed twice in the append table.
// Then the consumer group is deleted, and the next syncs must still land only new messages.
//
// The model of the upsert table is a multiset per key: a Spark INSERT of an existing key makes
// two rows of it (that is what the user asked); floe's next commit to the table keeps one row
// per key, the last written (the higher _last_updated_sequence_number), and its next upsert or
// tombstone of the key replaces or deletes every row of it. FLOE_TEST_SEED replays a run; the seed is in every failure message.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import pino from "pino";
import { currentSchema } from "#src/iceberg/spec/table-metadata.ts";
import type { Job } from "#src/job/job.ts";
import { recordMaintenance } from "#src/runtime/recorded-maintenance.ts";
import { createTopic, deleteTopic, plainBroker, produce, withAdmin } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { buildJob, type JobFileSpec, type StreamSection } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";
import { loadJobTable } from "../helpers/tables.ts";

const seed = Number(process.env.FLOE_TEST_SEED ?? Date.now() % 1_000_000);
const steps = Number(process.env.FLOE_TEST_STEPS ?? 16);
const run = `${process.pid}_${Date.now()}`;
const stateDir = mkdtempSync(join(tmpdir(), "floe-maint-random-"));
const topics = { upsert: `maintrand${run}_accounts`, append: `maintrand${run}_events` };
const KEYS = 60;
const logger = pino({ level: "silent" });

/** floe's maintenance with thresholds low enough to act on a small table; orphans older than an hour. */
const maintenance: JobFileSpec["maintenance"] = {
  interval: "1s",
  compaction: { min_input_files: 2, delete_ratio: 0.1 },
  snapshots: { retain_last: 2, max_age: "1s" },
  manifests: { max_count: 3 },
  orphans: { older_than: "1h" },
};

function job(kind: "upsert" | "append"): Job {
  const stream: StreamSection =
    kind === "upsert"
      ? { mode: "upsert", table: "accounts", dedup_keys: ["_kafka_key"] }
      : { mode: "append", table: "events" };
  return buildJob(
    {
      name: `maintrand_${kind}_${run}`,
      kafka: { topic_pattern: `^${topics[kind]}$` },
      iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
      streams: { [topics[kind]]: stream },
      maintenance,
    },
    join(stateDir, `${kind}.yaml`),
  );
}

/** Deterministic draws from the seed. */
function random(s: number): () => number {
  let state = s >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let readers: Readers;
before(async () => {
  readers = await startReaders();
  await Promise.all(Object.values(topics).map((t) => createTopic(t, 2)));
});
after(async () => {
  await readers?.close();
  for (const topic of Object.values(topics)) await deleteTopic(topic);
});

test(`randomized syncs, floe maintenance and Spark as another writer keep every reader on the model (seed ${seed})`, async () => {
  const draw = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(draw() * items.length)]!;
  const upsertJob = job("upsert");
  const appendJob = job("append");
  const accounts = restTable(upsertJob.namespace, "accounts");
  const events = restTable(appendJob.namespace, "events");
  const accountsName = `${upsertJob.namespace}.accounts`;
  const eventsName = `${appendJob.namespace}.events`;

  // The upsert table: id -> its rows' v (more than one after a foreign INSERT of the key).
  const live = new Map<number, string[]>();
  // The append table: every message's seq, once.
  const landed: number[] = [];
  let seq = 0;
  const log: string[] = [];
  const where = () => `seed ${seed}, after steps: ${log.join(" | ")}`;

  const produceUpserts = async (n: number) => {
    const messages = [];
    for (let i = 0; i < n; i++) {
      const id = Math.floor(draw() * KEYS);
      const tombstone = live.has(id) && draw() < 0.15;
      seq++;
      // A key's messages go to one partition, as a producer partitioning by key puts them.
      messages.push({
        key: String(id),
        partition: id % 2,
        value: tombstone ? null : JSON.stringify({ id, v: `m${seq}` }),
      });
      if (tombstone) live.delete(id);
      else live.set(id, [`m${seq}`]);
    }
    await produce(topics.upsert, messages);
  };
  const produceAppends = async (n: number) => {
    const messages = [];
    for (let i = 0; i < n; i++) {
      seq++;
      messages.push({ key: null, partition: seq % 2, value: JSON.stringify({ seq }) });
      landed.push(seq);
    }
    await produce(topics.append, messages);
  };
  /** `commits`: the upsert table gets messages, so the sync commits to it and retires the shadowed rows. */
  const syncBoth = async (commits = true) => {
    for (const j of [upsertJob, appendJob]) {
      const report = await syncJob(j, { stateDir });
      assert.equal(report.status, "complete", `${j.name}: sync ${report.status} ${report.readError ?? ""}; ${where()}`);
    }
    if (commits) for (const [id, vs] of live) if (vs.length > 1) live.set(id, [vs.at(-1)!]);
  };
  const check = async () => {
    const expected = [...live]
      .flatMap(([id, vs]) => vs.map((v) => ({ id: BigInt(id), v })))
      .sort((a, b) => (a.id === b.id ? (a.v < b.v ? -1 : 1) : a.id < b.id ? -1 : 1));
    for (const engine of readers.engines) {
      const rows = await readers.rows(engine, accounts, { columns: ["id", "v"], orderBy: ["id", "v"] });
      assert.deepEqual(rows, expected, `${engine} reads other rows of ${accountsName} than the model; ${where()}`);
      const seqs = await readers.rows(engine, events, { columns: ["seq"], orderBy: ["seq"] });
      assert.deepEqual(
        seqs.map((r) => Number(r.seq)),
        landed,
        `${engine} reads other messages of ${eventsName} than were produced, each once; ${where()}`,
      );
    }
  };
  const spark = (sql: string) => readers.spark(sql);
  // Spark's procedures may lose a race with a floe commit (Java's own validation refuses the
  // rewrite): then nothing of it landed, which the model already says.
  const sparkMay = async (sql: string) => {
    try {
      await spark(sql);
      return true;
    } catch (error) {
      if (!/ValidationException|CommitFailedException|conflict/i.test((error as Error).message)) throw error;
      log.push("(Spark lost the race)");
      return false;
    }
  };
  const someKey = () => pick([...live.keys()]);
  /** A copy of key `id`'s row as another engine writes it: every column but v kept, no _floe_id. */
  const foreignInsert = async (id: number, v: string) => {
    const table = await loadJobTable(upsertJob, "accounts");
    const columns = currentSchema(table.metadata).fields.map((f) =>
      f.name === "v" ? `'${v}' AS v` : f.name === "_floe_id" ? "CAST(NULL AS BINARY) AS _floe_id" : `\`${f.name}\``,
    );
    await spark(
      `INSERT INTO rest.${accountsName} SELECT ${columns.join(", ")} FROM rest.${accountsName} WHERE id = ${id} LIMIT 1`,
    );
  };
  const floeMaintain = async (j: Job) => {
    const pass = await recordMaintenance(j, { store: undefined, logger, trigger: "manual" });
    assert.notEqual(
      pass.record.outcome,
      "failed",
      `floe maintain ${j.name}: ${pass.record.error?.message}; ${where()}`,
    );
  };
  /**
   * Two files in the table's data folder that no snapshot references: one two hours old, which
   * orphan removal takes, and one just written, as a commit in flight leaves it, which it keeps.
   */
  const plantOrphans = async () => {
    const table = await loadJobTable(upsertJob, "accounts");
    const old = join(table.metadata.location, "data", `orphan-old-${seq}.parquet`);
    const young = join(table.metadata.location, "data", `orphan-young-${seq}.parquet`);
    writeFileSync(old, "not referenced by any snapshot");
    writeFileSync(young, "not referenced yet");
    const then = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(old, then, then);
    return { old, young };
  };

  // A first sync creates both tables.
  await produceUpserts(40);
  await produceAppends(30);
  await syncBoth();
  log.push("first sync");
  await check();

  const actions: Record<string, () => Promise<void>> = {
    sync: async () => {
      await produceUpserts(1 + Math.floor(draw() * 25));
      await produceAppends(1 + Math.floor(draw() * 20));
      await syncBoth();
    },
    "floe maintain": async () => {
      const orphans = await plantOrphans();
      await floeMaintain(upsertJob);
      await floeMaintain(appendJob);
      assert.ok(!existsSync(orphans.old), `an orphan two hours old is removed; ${where()}`);
      assert.ok(existsSync(orphans.young), `a file younger than the margin stays; ${where()}`);
      rmSync(orphans.young);
    },
    "floe maintain while a sync runs": async () => {
      await produceUpserts(10);
      await produceAppends(10);
      await Promise.all([syncBoth(), floeMaintain(upsertJob), floeMaintain(appendJob)]);
    },
    "Spark rewrite_data_files": async () => {
      for (const name of [accountsName, eventsName]) {
        await sparkMay(
          `CALL rest.system.rewrite_data_files(table => '${name}', options => map('min-input-files','2'))`,
        );
      }
    },
    "Spark rewrite_data_files while a sync runs": async () => {
      await produceUpserts(10);
      await produceAppends(10);
      await Promise.all([
        syncBoth(),
        sparkMay(
          `CALL rest.system.rewrite_data_files(table => '${accountsName}', options => map('min-input-files','2'))`,
        ),
      ]);
    },
    "Spark rewrite_manifests": async () => {
      for (const name of [accountsName, eventsName]) await sparkMay(`CALL rest.system.rewrite_manifests('${name}')`);
    },
    "Spark expire_snapshots(retain_last => 1)": async () => {
      const until = new Date(Date.now() + 86_400_000).toISOString().replace("T", " ").replace("Z", "");
      for (const name of [accountsName, eventsName]) {
        await sparkMay(
          `CALL rest.system.expire_snapshots(table => '${name}', older_than => TIMESTAMP '${until}', retain_last => 1)`,
        );
      }
    },
    "Spark INSERT of an existing key": async () => {
      if (live.size === 0) return;
      const id = someKey();
      seq++;
      await foreignInsert(id, `spark-insert${seq}`);
      live.get(id)!.push(`spark-insert${seq}`);
    },
    "Spark MERGE of an existing key": async () => {
      if (live.size === 0) return;
      const id = someKey();
      seq++;
      await spark(
        `MERGE INTO rest.${accountsName} t USING (SELECT ${id} AS id, 'spark-merge${seq}' AS v) s ON t.id = s.id ` +
          "WHEN MATCHED THEN UPDATE SET t.v = s.v",
      );
      live.set(
        id,
        live.get(id)!.map(() => `spark-merge${seq}`),
      );
    },
    "Spark DELETE": async () => {
      if (live.size === 0) return;
      const id = someKey();
      await spark(`DELETE FROM rest.${accountsName} WHERE id = ${id}`);
      live.delete(id);
    },
  };
  const names = Object.keys(actions);
  // Every action at least once, then random ones; syncs between them.
  const order = [...names, ...Array.from({ length: Math.max(0, steps - names.length) }, () => pick(names))];
  for (let i = order.length - 1; i > names.length; i--) {
    const j = names.length + Math.floor(draw() * (i - names.length + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  for (const name of order) {
    await actions[name]!();
    log.push(name);
    await check();
    if (name !== "sync") {
      await actions.sync!();
      log.push("sync");
      await check();
    }
  }

  // The group forgets both jobs: the tables' own position says where to go on.
  await withAdmin(plainBroker, (admin) =>
    admin.deleteGroups({ groups: [upsertJob.consumerGroup, appendJob.consumerGroup] }),
  );
  log.push("consumer groups deleted");
  await syncBoth(false);
  await check();
  await actions.sync!();
  log.push("sync");
  await check();
});
