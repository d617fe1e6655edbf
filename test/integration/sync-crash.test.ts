// Crash test of floe sync (a sync killed at any moment and run again ends with exactly the rows
// of a sync that never failed, in append mode too): `node src/cli/main.ts sync` runs as a child
// process over an append stream and two upsert streams (one keyed on _kafka_key, where
// tombstones delete, one on a payload field), 3 partitions each, the append stream with bad
// messages that go to its dead-letter table (committed before the stream's own table: each
// bad message must land there exactly once too), into the embedded SQLite
// catalog in a temporary directory (fast, and the layout floe writes by default; or the test
// REST catalog with FLOE_CRASH_CATALOG=rest; or with FLOE_CRASH_CATALOG=rest-s3 the REST
// fixture whose warehouse is on MinIO, behind the credential-vending proxy, so that floe
// writes with the short-lived keys it vends: sync-crash-s3.test.ts runs that). A sync commits its tables in topic order (acct,
// then app's dead letters and app, then kv), then the consumer group.
//
// It is killed two ways. At every named crash point, on every run whatever the machine's speed:
// the points of src/pipeline/fault-points.ts (FLOE_FAULT_AT, where the process SIGKILLs itself), and
// points inside a table commit that test/helpers/kill-on-write.ts adds by wrapping the local
// FileIO (a deletion vector, a manifest half or wholly written, a manifest list, the SQL
// catalog's metadata file). Each named kill must leave what its point says, told from what it
// left behind: which tables got their snapshot or schema, which files it wrote without
// committing them, whether the consumer group got the offsets. Then SIGKILLs at random moments
// spread over the whole duration of a sync (measured first), FLOE_CRASH_KILLS of them (30 by
// default). Before every killed run new messages are produced; after every kill the sync is run
// again to completion and DuckDB must read exactly the model's rows: append, each (partition,
// offset) exactly once; upsert, one row per live key carrying its latest message, with the
// _op_type of an uninterrupted run. After the named points in steady state, new fields appear (a
// column added, then the data committed: the named kills land between the two). At the end
// DuckDB, PyIceberg and Spark read the model too. FLOE_SEED replays the messages and kill times.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { type Dirent, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { loadCatalog } from "#src/iceberg/catalog/load-catalog.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import { readGroupOffsets } from "#src/kafka/commit-offsets.ts";
import { KafkaCluster } from "#src/kafka/connection.ts";
import { FAULT_POINTS } from "#src/pipeline/fault-points.ts";
import { committedOffsets } from "#src/pipeline/snapshot-offsets.ts";
import { bootstrapServers, createTopic, deleteTopic } from "../../dev/kafka.ts";
import {
  type CatalogRef,
  type Readers,
  type Row,
  startReaders,
  type TableRef,
  testRestCatalog,
  testRestS3Catalog,
} from "../../dev/readers.ts";
import { startVendingProxy, type VendingProxy } from "../../dev/services/credential-vending-proxy.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { restS3Catalog } from "../../dev/services/iceberg-rest-s3.ts";
import { minio } from "../../dev/services/minio.ts";
import { type IcebergSection, writeJobFile } from "../helpers/job-file.ts";
import { WRITE_KINDS } from "../helpers/kill-on-write.ts";
import { objectKeys } from "../helpers/s3.ts";
import {
  AppendModel,
  deadLetterColumns,
  modelColumns,
  OffsetCounter,
  produceExactly,
  Random,
  UpsertModel,
  type Value,
} from "../helpers/sync-model.ts";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const seed = Number(process.env.FLOE_SEED ?? Date.now() % 1_000_000);
const random = new Random(seed);
const KILLS = Number(process.env.FLOE_CRASH_KILLS ?? 30);
const PARTITIONS = 3;
/** Kills land between this fraction of a sync's duration and its end (FLOE_CRASH_FROM=0.6 hammers the commits). */
const KILL_FROM = Number(process.env.FLOE_CRASH_FROM ?? 0);
/** Random kills of the very first sync, in a row, before it is let complete. */
const FIRST_SYNC_KILLS = 4;

const run = `${process.pid}_${Date.now()}`;
const prefix = `crash${run}_`;
const name = `crash_${run}`;
const namespace = `${name}_topics`;
const group = `floe_${name}`;
const dir = mkdtempSync(join(tmpdir(), "floe-crash-"));
const warehouse = join(dir, "warehouse");
const stateDir = join(dir, "state");
const jobPath = join(dir, "job.yaml");
/**
 * FLOE_CRASH_CATALOG=rest runs against the test REST catalog instead of SQLite in a temporary
 * directory; rest-s3 against the S3 REST fixture, through the vending proxy.
 */
const catalogKind = process.env.FLOE_CRASH_CATALOG ?? "sql";
if (!["sql", "rest", "rest-s3"].includes(catalogKind)) {
  throw new Error(`FLOE_CRASH_CATALOG=${catalogKind}: expected sql, rest or rest-s3`);
}
const useRest = catalogKind !== "sql";
const onS3 = catalogKind === "rest-s3";
process.env.AWS_EC2_METADATA_DISABLED = "true";
const catalogRef: CatalogRef = onS3
  ? testRestS3Catalog
  : useRest
    ? testRestCatalog
    : { type: "sql", uri: join(warehouse, "catalog.db"), warehouse, name: "floe" };
/** The catalog the test itself reads the tables' state from (the fixture, not the proxy). */
const observedCatalogUri = onS3 ? restS3Catalog.uri : restCatalog.uri;
/** Where the tables' files are: <warehouse>/<namespace>/<table>/ in every catalog (a key prefix on S3). */
const filesRoot = onS3 ? `warehouse/${namespace}/` : useRest ? join(restCatalog.warehouse, namespace) : warehouse;

const topics = { app: `${prefix}app`, kv: `${prefix}kv`, acct: `${prefix}acct` } as const;
type TableName = keyof typeof topics;
const tableNames = Object.keys(topics) as TableName[];
/** The append stream's bad messages land in its dead-letter table, committed before it. */
const DEAD_LETTERS = "app__dlq";
/** Every table a sync commits. */
const observed = [DEAD_LETTERS, ...tableNames];

/** A kill at a named point: a fault point of the sync (`<point>:<n>`) or a file write (kill-on-write.ts). */
type CrashAt = { fault: string } | { write: string };
interface NamedCrash {
  at: CrashAt;
  /** What the kill must leave behind, as phaseOf tells it. */
  leaves: string | RegExp;
}
const crashName = (at: CrashAt) => ("fault" in at ? `FLOE_FAULT_AT=${at.fault}` : `write ${at.write}`);

/** The first sync, from nothing: killed once the first table is created and committed, then once the dead letters are. */
const FIRST_SYNC_CRASHES: NamedCrash[] = [
  { at: { fault: "after-table-commit:1" }, leaves: "between table commits (acct committed)" },
  // acct holds its messages now: the next run's first commit is app's dead letters.
  { at: { fault: "after-dead-letter-commit:1" }, leaves: "between table commits (app__dlq committed)" },
];
/** One batch each, from a sync that completed: acct's commit step by step, then each later commit. */
const CRASHES: NamedCrash[] = [
  { at: { fault: "after-data-files:1" }, leaves: "write acct: data/DV files" },
  // RowDelta writes the data manifest while it writes the deletion vectors: either may come first.
  { at: { write: "deletion-vector:1:after" }, leaves: /^(write acct: data\/DV files|commit acct: manifests)$/ },
  { at: { write: "manifest:1:during" }, leaves: "commit acct: manifests" },
  { at: { write: "manifest:1:after" }, leaves: "commit acct: manifests" },
  { at: { write: "manifest-list:1:after" }, leaves: "commit acct: manifests" },
  // The REST catalog writes its metadata files itself.
  ...(useRest
    ? []
    : [{ at: { write: "metadata:1:after" }, leaves: "commit acct: metadata written, catalog not swapped" }]),
  { at: { fault: "after-table-commit:1" }, leaves: "between table commits (acct committed)" },
  { at: { fault: "after-dead-letter-commit:1" }, leaves: "between table commits (app__dlq, acct committed)" },
  { at: { fault: "after-data-files:2" }, leaves: "write app: data/DV files" },
  { at: { fault: "after-table-commit:2" }, leaves: "between table commits (app__dlq, app, acct committed)" },
  { at: { fault: "after-data-files:3" }, leaves: "write kv: data/DV files" },
  { at: { fault: "after-table-commit:3" }, leaves: "after table commits, before group commit" },
  { at: { fault: "before-group-commit:1" }, leaves: "after table commits, before group commit" },
];
/** The batch that brings the new fields: app's column added, then (its data committed) kv's. */
const SCHEMA_CRASHES: NamedCrash[] = [
  { at: { fault: "after-schema-change:1" }, leaves: "commit app: schema updated, data not" },
  { at: { fault: "after-schema-change:1" }, leaves: "commit kv: schema updated, data not" },
];
const namedCrashes = [...FIRST_SYNC_CRASHES, ...CRASHES, ...SCHEMA_CRASHES];
for (const point of FAULT_POINTS) {
  if (!namedCrashes.some(({ at }) => "fault" in at && at.fault.startsWith(`${point}:`))) {
    throw new Error(`the crash test kills no sync at fault point ${point}: add it to its named crashes`);
  }
}

/** The job file: for rest-s3 the catalog is the vending proxy, started by before(). */
function writeJob(proxy?: VendingProxy): void {
  const destination: Partial<IcebergSection> = proxy
    ? { catalog: { type: "rest", uri: proxy.uri }, storage: { s3: { endpoint: minio.endpoint, region: minio.region } } }
    : useRest
      ? { catalog: { type: "rest", uri: restCatalog.uri } }
      : { catalog: { type: "sql", warehouse } };
  writeJobFile(jobPath, {
    name,
    kafka: {
      consumer_group: group,
      topic_pattern: `^${prefix}(app|kv|acct)$`,
      security: { protocol: "PLAINTEXT" },
      max_threads: 3,
    },
    iceberg: { ...destination, target_engines: ["duckdb", "spark"] },
    streams: {
      [topics.app]: { mode: "append", table: "app" },
      [topics.kv]: { mode: "upsert", dedup_keys: ["_kafka_key"], table: "kv" },
      [topics.acct]: { mode: "upsert", dedup_keys: ["id"], table: "acct" },
    },
  });
}

const counters = { app: new OffsetCounter(), kv: new OffsetCounter(), acct: new OffsetCounter() };
const models = {
  app: new AppendModel(),
  kv: new UpsertModel((m) => m.key, true),
  acct: new UpsertModel((m) => (m.value === null || typeof m.value === "string" ? null : String(m.value.id)), false),
};
const baseColumns: Record<TableName, string[]> = { app: ["seq", "kind"], kv: ["name", "n"], acct: ["id", "name", "n"] };
/** Round 0 is the first sync, 1-3 measure a sync, then one round per named crash in steady state. */
const FIRST_CRASH_ROUND = 4;
/** From this round on, app and kv values carry a new field: a sync adds a column, then commits. */
const EVOLVE_ROUND = FIRST_CRASH_ROUND + CRASHES.length;
const newColumns: Record<TableName, string[]> = { app: ["extra"], kv: ["tag"], acct: [] };
let evolved = false;
const columns = (t: TableName) => (evolved ? [...baseColumns[t], ...newColumns[t]] : baseColumns[t]);

let readers: Readers;
let cluster: KafkaCluster;
let proxy: VendingProxy | undefined;
before(async () => {
  // Keys in both places, and no endpoint: the job's endpoint and region merge with them.
  if (onS3) proxy = await startVendingProxy({ upstream: restS3Catalog.uri, vendEndpoint: false });
  writeJob(proxy);
  readers = await startReaders({ s3: onS3 });
  cluster = await KafkaCluster.connect({ bootstrapServers: [bootstrapServers], security: { protocol: "PLAINTEXT" } });
  for (const topic of Object.values(topics)) await createTopic(topic, PARTITIONS);
});
after(async () => {
  await cluster?.close();
  await readers?.close();
  await proxy?.close();
  for (const topic of Object.values(topics)) await deleteTopic(topic);
});

/** From EVOLVE_ROUND on, half the values get the new field. */
function evolve(value: Value, field: string, v: string | number): Value {
  return evolved && random.chance(0.5) ? { ...value, [field]: v } : value;
}

/** Produces one batch on every topic and applies it to the models (one batch = one sync's worth). */
async function produceBatch(round: number): Promise<void> {
  if (round >= EVOLVE_ROUND) evolved = true;
  const app = Array.from({ length: 400 }, (_, i) => ({
    partition: random.int(PARTITIONS),
    key: random.chance(0.2) ? null : `e${random.int(50)}`,
    // At least one bad message a batch, so that every sync commits the dead-letter table first.
    value:
      i === 0 || random.chance(0.02)
        ? `not json ${round}/${i}`
        : random.chance(0.05)
          ? null
          : evolve({ seq: round * 10_000 + i, kind: random.chance(0.5) ? "a" : "b" }, "extra", random.int(100)),
  }));
  const kv = Array.from({ length: 300 }, () => {
    const k = random.int(120);
    return {
      partition: k % PARTITIONS,
      key: `k${k}`,
      value: random.chance(0.15)
        ? null
        : evolve({ name: `kv${k}_${round}_${random.int(1000)}`, n: random.int(1e6) }, "tag", `t${random.int(9)}`),
    };
  });
  const acct = Array.from({ length: 300 }, () => {
    const id = random.int(150);
    return {
      partition: id % PARTITIONS,
      key: `a${id}`,
      value: random.chance(0.1) ? null : { id, name: `acct${id}_${round}`, n: random.int(1e6) },
    };
  });
  const batch = { app: counters.app.assign(app), kv: counters.kv.assign(kv), acct: counters.acct.assign(acct) };
  await Promise.all(tableNames.map((t) => produceExactly(topics[t], batch[t], counters[t])));
  models.app.apply(batch.app);
  models.kv.apply(batch.kv);
  models.acct.apply(batch.acct);
}

interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  stdout: string;
  stderr: string;
}

const killOnWrite = join(repo, "test", "helpers", "kill-on-write.ts");

/** One `floe sync`: SIGKILLed after `killAfterMs` if it is still running then, or by itself at `crashAt`. */
function floeSync(killAfterMs?: number, crashAt?: CrashAt): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const env = { ...process.env };
    for (const name of ["FLOE_FAULT_AT", "FLOE_FAULT", "FLOE_FAULT_FILE", "FLOE_TEST_KILL_AT_WRITE"]) delete env[name];
    const preload: string[] = [];
    if (crashAt && "fault" in crashAt) Object.assign(env, { FLOE_FAULT_AT: crashAt.fault, FLOE_FAULT: "crash" });
    if (crashAt && "write" in crashAt) {
      env.FLOE_TEST_KILL_AT_WRITE = crashAt.write;
      preload.push("--import", killOnWrite);
    }
    const child = spawn(
      process.execPath,
      [...preload, "src/cli/main.ts", "sync", "--config", jobPath, "--json", "--state-dir", stateDir],
      { cwd: repo, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ms: performance.now() - started, stdout, stderr });
    });
  });
}

async function syncToCompletion(where: string): Promise<ChildRun> {
  const result = await floeSync();
  assert.equal(result.code, 0, `${where}: floe sync exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  const report = JSON.parse(result.stdout) as { status: string };
  assert.equal(report.status, "complete", where);
  return result;
}

/** A sync that must kill itself at the named point and leave what the point says. */
async function crashAt(crash: NamedCrash, where: string): Promise<string> {
  const before = await observe();
  const killed = await floeSync(undefined, crash.at);
  const name = crashName(crash.at);
  assert.equal(
    killed.signal,
    "SIGKILL",
    `${where}: the sync never reached ${name} (exit ${killed.code})\n${killed.stdout}\n${killed.stderr}`,
  );
  const after = await observe();
  const phase = phaseOf(before, after);
  if (typeof crash.leaves === "string")
    assert.equal(phase, crash.leaves, `${where}: killed at ${name}, the sync left "${phase}"`);
  else assert.match(phase, crash.leaves, `${where}: killed at ${name}, the sync left "${phase}"`);
  if ("write" in crash.at) {
    // The kill came at the write it names: a file of that kind is among those the sync left.
    const kind = crash.at.write.split(":")[0]!;
    const left = [...after.files].filter((f) => !before.files.has(f));
    assert.ok(
      left.some((f) => WRITE_KINDS[kind]!.test(f)),
      `${where}: killed at ${name}, no such file left: ${left.join(", ")}`,
    );
  }
  console.log(`${where}: killed at ${name}: ${phase}`);
  return phase;
}

/** What a kill can have left: per table its current snapshot id and offsets; the group's offsets; every file. */
async function observe() {
  const catalog = await loadCatalog(
    useRest ? { type: "rest", uri: observedCatalogUri } : { type: "sql", name: "floe", warehouse },
  );
  const tables = new Map<string, { snapshot: bigint | undefined; schema?: number; offsets: string }>();
  try {
    for (const t of observed) {
      try {
        const table = await Table.load(catalog, { namespace: [namespace], name: t });
        const topic = t === DEAD_LETTERS ? topics.app : topics[t as TableName];
        const offsets = committedOffsets(table.metadata, t).get(topic) ?? new Map();
        tables.set(t, {
          snapshot: currentSnapshot(table.metadata)?.snapshotId,
          schema: table.metadata.currentSchemaId,
          offsets: offsetsText(offsets),
        });
      } catch {
        tables.set(t, { snapshot: undefined, offsets: "" });
      }
    }
  } finally {
    await catalog.close();
  }
  const groupOffsets = await readGroupOffsets(
    cluster,
    group,
    tableNames.map((t) => ({ topic: topics[t], partitions: PARTITIONS })),
  );
  const groupText = new Map(tableNames.map((t) => [t, offsetsText(groupOffsets.get(topics[t]) ?? new Map())]));
  const files = onS3
    ? new Set((await objectKeys(filesRoot)).map((key) => key.slice(filesRoot.length)))
    : listFiles(filesRoot);
  return { tables, groupText, files };
}

function offsetsText(offsets: Map<number, bigint>): string {
  return [...offsets]
    .sort(([a], [b]) => a - b)
    .map(([p, o]) => `${p}:${o}`)
    .join(",");
}

function listFiles(root: string): Set<string> {
  const files = new Set<string>();
  const walk = (d: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(d, e.name);
      if (e.isDirectory()) walk(path);
      else files.add(relative(root, path));
    }
  };
  walk(root);
  return files;
}

/** Which table a warehouse file belongs to: the directory of that name on its path. */
function tableOf(file: string): string | undefined {
  const parts = file.split(/[\\/]/);
  return observed.find((t) => parts.includes(t));
}

type Observation = Awaited<ReturnType<typeof observe>>;

/** Where the kill landed, from the difference between before and after. */
function phaseOf(before: Observation, after: Observation): string {
  const committed = observed.filter((t) => before.tables.get(t)!.snapshot !== after.tables.get(t)!.snapshot);
  const newFiles = [...after.files].filter((f) => !before.files.has(f) && !f.startsWith("catalog.db"));
  // Tables that got files but no snapshot: the kill hit their write or their commit.
  for (const t of observed) {
    if (committed.includes(t)) continue;
    if (before.tables.get(t)!.schema !== after.tables.get(t)!.schema) return `commit ${t}: schema updated, data not`;
    const mine = newFiles.filter((f) => tableOf(f) === t);
    if (mine.some((f) => f.endsWith(".metadata.json"))) return `commit ${t}: metadata written, catalog not swapped`;
    if (mine.some((f) => f.endsWith(".avro"))) return `commit ${t}: manifests`;
    if (mine.length > 0) return `write ${t}: data/DV files`;
  }
  if (committed.length === 0) return "start, plan or read";
  if (committed.length < observed.length) {
    return `between table commits (${committed.join(", ")} committed)`;
  }
  const acked = tableNames.every((t) => after.groupText.get(t) === after.tables.get(t)!.offsets);
  return acked ? "after group commit (exit)" : "after table commits, before group commit";
}

const orderBy = ["_kafka_partition", "_kafka_offset"];

function tableRef(t: TableName): TableRef {
  return { catalog: catalogRef, namespace, table: t };
}

/** Each table equals its model, read by `engines` (Spark through a fresh session: see iceberg-randomized). */
async function assertModel(where: string, engines: readonly ("duckdb" | "pyiceberg" | "spark")[], generation: number) {
  for (const t of tableNames) {
    const expected = models[t].rows(columns(t));
    // The engines read at the same time, each on its own thread of the reader process.
    const reads = await Promise.all(
      engines.map((engine) => {
        const ref = tableRef(t);
        const read =
          engine === "spark" && !useRest && "catalog" in ref
            ? ({ ...ref, catalog: { ...ref.catalog, generation } } as unknown as TableRef)
            : ref;
        return readers.rows(engine, read, { columns: modelColumns(columns(t)), orderBy });
      }),
    );
    for (const [i, engine] of engines.entries()) {
      const rows: Row[] = reads[i]!;
      if (t === "app") {
        const positions = new Set(rows.map((r) => `${r._kafka_partition}/${r._kafka_offset}`));
        assert.equal(positions.size, rows.length, `${where}: ${engine} reads a duplicate message in app`);
      }
      assert.deepStrictEqual(rows, expected, `${where}: ${engine} read other rows than the model from ${t}`);
    }
  }
  const deadLetters = await Promise.all(
    engines.map((engine) =>
      readers.rows(
        engine,
        { catalog: catalogRef, namespace, table: DEAD_LETTERS },
        { columns: deadLetterColumns, orderBy },
      ),
    ),
  );
  for (const [i, engine] of engines.entries()) {
    assert.deepStrictEqual(
      deadLetters[i],
      models.app.deadLetterRows(),
      `${where}: ${engine} read other dead letters than the model`,
    );
  }
}

test(`floe sync killed at every named crash point and at ${KILLS} random moments ends with exactly the model's rows (FLOE_SEED=${seed})`, async () => {
  // The first sync creates the tables: killed at named points and at random moments in a row
  // before it may complete, it can leave some tables created without a snapshot, or some
  // committed and others not.
  await produceBatch(0);
  for (const crash of FIRST_SYNC_CRASHES) await crashAt(crash, "first sync");
  for (let k = 0; k < FIRST_SYNC_KILLS; k++) {
    const delay = Math.round(random.next() * 3000);
    const killed = await floeSync(delay);
    console.log(
      `first sync, killed after ${delay} ms: ${killed.signal === "SIGKILL" ? "killed" : `ended (${killed.code})`}`,
    );
    if (killed.signal !== "SIGKILL") assert.equal(killed.code, 0, `first sync: ${killed.stdout}\n${killed.stderr}`);
  }
  await syncToCompletion("first sync");
  await assertModel("after the first sync", ["duckdb"], 0);
  // Measure: how long a sync of one batch lasts, once the tables exist.
  const durations: number[] = [];
  for (let round = 1; round < FIRST_CRASH_ROUND; round++) {
    await produceBatch(round);
    durations.push((await syncToCompletion(`measuring sync ${round}`)).ms);
  }
  await assertModel("after the measuring syncs", ["duckdb"], 0);
  // The median: on a loaded machine one sync can take twice as long as the others.
  const duration = [...durations].sort((a, b) => a - b)[1]!;
  console.log(`an uninterrupted sync of one batch: ${durations.map((d) => Math.round(d)).join(", ")} ms`);

  const phases = new Map<string, number>();
  const rerunMs: number[] = [];
  let round = FIRST_CRASH_ROUND;
  const rerun = async (where: string) => {
    rerunMs.push((await syncToCompletion(`${where}: rerun`)).ms);
    await assertModel(where, ["duckdb"], round);
    round++;
  };
  // Every named point, each on a batch of its own after a sync that completed.
  for (const crash of CRASHES) {
    await produceBatch(round);
    const where = `round ${round} (FLOE_SEED=${seed})`;
    await crashAt(crash, where);
    await rerun(where);
  }
  // The new fields: app's column lands and the sync dies; the next run finds it there, commits
  // app's data, adds kv's column and dies there.
  assert.equal(round, EVOLVE_ROUND);
  await produceBatch(round);
  for (const crash of SCHEMA_CRASHES) await crashAt(crash, `round ${round} (FLOE_SEED=${seed})`);
  await rerun(`round ${round} (FLOE_SEED=${seed})`);

  // Random kills: a moment anywhere in a sync, as a power cut chooses it.
  let kills = 0;
  let outran = 0;
  for (let attempts = 0; kills < KILLS; attempts++) {
    assert.ok(attempts < KILLS * 4, `after ${attempts} syncs only ${kills} were killed (FLOE_SEED=${seed})`);
    await produceBatch(round);
    const delay = Math.round((KILL_FROM + random.next() * (1.05 - KILL_FROM)) * duration);
    const before = await observe();
    const killed = await floeSync(delay);
    const where = `round ${round}, killed after ${delay} ms (FLOE_SEED=${seed})`;
    if (killed.signal === "SIGKILL") {
      kills++;
      const phase = phaseOf(before, await observe());
      console.log(`kill ${kills}: round ${round}, after ${delay} ms: ${phase}`);
      phases.set(phase, (phases.get(phase) ?? 0) + 1);
    } else {
      // The sync ended before the kill: it must have ended well.
      assert.equal(killed.code, 0, `${where}: floe sync exited ${killed.code}\n${killed.stdout}\n${killed.stderr}`);
      outran++;
    }
    await rerun(where);
  }

  console.log(`random kills by phase (${kills} kills, ${outran} syncs ended before their kill):`);
  for (const [phase, n] of [...phases].sort(([, a], [, b]) => b - a))
    console.log(`  ${String(n).padStart(3)}  ${phase}`);
  console.log(`reruns after a kill: ${Math.round(Math.min(...rerunMs))}-${Math.round(Math.max(...rerunMs))} ms`);
  console.log(
    `model: app ${models.app.messages.length} rows, kv ${models.kv.live.size} live keys, acct ${models.acct.live.size}`,
  );
  await assertModel("at the end", readers.engines, round);
  // A complete sync leaves the consumer group where the tables are, whatever the kills left.
  const end = await observe();
  for (const t of tableNames) {
    assert.equal(end.groupText.get(t), end.tables.get(t)!.offsets, `${t}: the group's offsets are the table's`);
  }
});
