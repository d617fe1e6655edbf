// Two or three `floe sync` processes of one job at the same time, as an overlapping cron job or
// a sync started by hand beside a scheduled one makes them. Each process has its own state
// directory, as copies of the job on two machines would: the per-job lock does not see them,
// so what keeps the table right is the offset check of every commit attempt. Every round
// produces new messages, starts the processes together or staggered by random delays, with
// small commit batches so that their commits interleave, then lets one sync drain what is
// left. Each process must either finish or stop with exit 5 naming the other writer's
// snapshot, and after every round the table must equal the model exactly: append, every
// (partition, offset) once; upsert, one row per key with its latest message. Append and
// upsert, embedded SQLite catalog, the test REST catalog, and the REST fixture whose warehouse
// is on MinIO behind the credential-vending proxy (floe writing with the keys it vends), and
// SeaweedFS's own catalog, written independently of Iceberg's, whose commit requirements must
// turn the loser of each race away just the same. The lock itself is tested at the end: a
// second process of the same state directory exits at once naming the holder, or waits.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { acquireJobLock } from "#src/runtime/job-lock.ts";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import {
  type CatalogRef,
  type Readers,
  startReaders,
  testRestCatalog,
  testRestS3Catalog,
  testSeaweedfsCatalog,
} from "../../dev/readers.ts";
import { startVendingProxy, type VendingProxy } from "../../dev/services/credential-vending-proxy.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { restS3Catalog } from "../../dev/services/iceberg-rest-s3.ts";
import { minio } from "../../dev/services/minio.ts";
import { seaweedfs } from "../../dev/services/seaweedfs.ts";
import { type IcebergSection, writeJobFile } from "../helpers/job-file.ts";
import {
  AppendModel,
  modelColumns,
  OffsetCounter,
  produceExactly,
  Random,
  syncWorkspace,
  UpsertModel,
  type Value,
} from "../helpers/sync-model.ts";

const repo = join(import.meta.dirname, "..", "..");
const seed = Number(process.env.FLOE_SEED ?? Date.now() % 1_000_000);
const ROUNDS = Number(process.env.FLOE_CONCURRENT_ROUNDS ?? 4);
const PARTITIONS = 4;
const MESSAGES_PER_ROUND = 8_000;
const EXIT_BUSY = 5;

type CatalogKind = "sql" | "rest" | "rest-s3" | "seaweedfs";

process.env.AWS_EC2_METADATA_DISABLED = "true";
let readers: Readers;
let proxy: VendingProxy;
const topics: string[] = [];
before(async () => {
  proxy = await startVendingProxy({ upstream: restS3Catalog.uri, vendEndpoint: false });
  readers = await startReaders({ s3: true });
});
after(async () => {
  await readers?.close();
  await proxy?.close();
  for (const topic of topics) await deleteTopic(topic);
});

interface ChildRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function floeSync(args: string[], delayMs = 0, env: Record<string, string> = {}): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    setTimeout(() => {
      const child = spawn(process.execPath, ["src/cli/main.ts", "sync", ...args], {
        cwd: repo,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, ...env },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => {
        stdout += d;
      });
      child.stderr.on("data", (d) => {
        stderr += d;
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    }, delayMs);
  });
}

/** A sync that stops after writing its data files, before it commits them, until release() is called. */
async function pausedSync(args: string[], dir: string) {
  const file = join(dir, `paused-${Date.now()}`);
  const run = floeSync(args, 0, { FLOE_FAULT_AT: "after-data-files", FLOE_FAULT: "pause", FLOE_FAULT_FILE: file });
  const deadline = Date.now() + 120_000;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error("the paused sync never reached its data files");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    release(): Promise<ChildRun> {
      rmSync(file);
      return run;
    },
  };
}

function workspace(kind: string, catalog: CatalogKind) {
  const ws = syncWorkspace(kind);
  const topic = `${ws.name}_t`;
  topics.push(topic);
  const destinations: Record<typeof catalog, Partial<IcebergSection>> = {
    sql: { catalog: { type: "sql", warehouse: ws.warehouse } },
    rest: { catalog: { type: "rest", uri: restCatalog.uri } },
    seaweedfs: {
      catalog: {
        type: "rest",
        uri: seaweedfs.catalogUri,
        warehouse: `s3://${seaweedfs.tableBucket}`,
        client_id: seaweedfs.accessKeyId,
        client_secret: seaweedfs.secretAccessKey,
      },
      storage: { s3: { endpoint: seaweedfs.s3Endpoint, region: seaweedfs.region } },
    },
    "rest-s3": {
      catalog: { type: "rest", uri: proxy.uri },
      storage: { s3: { endpoint: minio.endpoint, region: minio.region } },
    },
  };
  const destination = destinations[catalog];
  const catalogRef: CatalogRef = {
    sql: ws.catalogRef,
    rest: testRestCatalog,
    "rest-s3": testRestS3Catalog,
    seaweedfs: testSeaweedfsCatalog,
  }[catalog];
  return { ...ws, topic, destination, catalogRef, jobPath: join(ws.dir, "job.yaml") };
}

for (const catalog of ["sql", "rest", "rest-s3", "seaweedfs"] as const) {
  for (const mode of ["append", "upsert"] as const) {
    test(`${mode}, ${catalog} catalog: syncs of one job at the same time land every message once`, async () => {
      const random = new Random(
        seed + { sql: 0, rest: 100, "rest-s3": 200, seaweedfs: 300 }[catalog] + (mode === "upsert" ? 10 : 0),
      );
      const ws = workspace(`conc_${mode}_${catalog.replace("-", "")}`, catalog);
      await createTopic(ws.topic, PARTITIONS);
      writeJobFile(ws.jobPath, {
        name: ws.name,
        kafka: { topic_pattern: `^${ws.topic}$`, max_threads: PARTITIONS },
        iceberg: { ...ws.destination, target_engines: ["duckdb", "spark"] },
        streams: { [ws.topic]: { mode, table: "t", ...(mode === "upsert" && { dedup_keys: ["id"] }) } },
        commit: { max_messages: 1000 },
      });
      const counter = new OffsetCounter();
      const appendModel = new AppendModel();
      const upsertModel = new UpsertModel((m) => String((m.value as { id: number }).id), false);
      const columns = mode === "append" ? ["seq"] : ["id", "name"];
      const table = { catalog: ws.catalogRef, namespace: ws.namespace, table: "t" };
      let conflicts = 0;

      for (let round = 0; round < ROUNDS; round++) {
        const batch = counter.assign(
          Array.from(
            { length: MESSAGES_PER_ROUND },
            (_, i): { partition: number; key: string | null; value: Value } => {
              if (mode === "append") {
                return { partition: random.int(PARTITIONS), key: null, value: { seq: round * 100_000 + i } };
              }
              const id = random.int(3_000);
              return { partition: id % PARTITIONS, key: `k${id}`, value: { id, name: `n${id}_${round}_${i}` } };
            },
          ),
        );
        await produceExactly(ws.topic, batch, counter);
        if (mode === "append") appendModel.apply(batch);
        else upsertModel.apply(batch);

        // Round 0 starts them together; later rounds stagger them by up to 0.3 s.
        const processes = round % 2 === 0 ? 2 : 3;
        const runs = await Promise.all(
          Array.from({ length: processes }, (_, i) =>
            floeSync(
              ["--config", ws.jobPath, "--state-dir", join(ws.dir, `state${i}`)],
              round === 0 ? 0 : random.int(300),
            ),
          ),
        );
        for (const [i, run] of runs.entries()) {
          const where = `round ${round} (seed ${seed}), process ${i}`;
          if (run.code === EXIT_BUSY) {
            conflicts++;
            assert.match(run.stderr, /another writer (committed|created)/, `${where}:\n${run.stderr}`);
            assert.match(
              run.stderr,
              /snapshot \d+|created the table/,
              `${where} names the other writer:\n${run.stderr}`,
            );
          } else {
            assert.equal(run.code, 0, `${where} exited ${run.code}:\n${run.stdout}\n${run.stderr}`);
          }
        }
        const last = await floeSync(["--config", ws.jobPath, "--state-dir", join(ws.dir, "state0")]);
        assert.equal(last.code, 0, `round ${round}: the draining sync exited ${last.code}:\n${last.stderr}`);

        const expected = mode === "append" ? appendModel.rows(columns) : upsertModel.rows(columns);
        const rows = await readers.rows("duckdb", table, {
          columns: modelColumns(columns),
          orderBy: ["_kafka_partition", "_kafka_offset"],
        });
        assert.equal(rows.length, expected.length, `round ${round} (seed ${seed}): rows in DuckDB`);
        assert.deepEqual(rows, expected, `round ${round} (seed ${seed}): DuckDB reads the model`);
      }
      const expected = mode === "append" ? appendModel.rows(columns) : upsertModel.rows(columns);
      await readers.assertRows(table, expected, {
        columns: modelColumns(columns),
        orderBy: ["_kafka_partition", "_kafka_offset"],
      });
      // The race must have happened, or the test proved nothing.
      assert.ok(conflicts > 0, `no sync ever met another one's commit in ${ROUNDS} rounds (seed ${seed})`);
    });
  }
}

test("a second sync of a job that is running exits at once naming the process, or waits with --wait", async () => {
  const ws = workspace("conc_lock", "sql");
  await createTopic(ws.topic, 1);
  writeJobFile(ws.jobPath, {
    name: ws.name,
    kafka: { topic_pattern: `^${ws.topic}$` },
    iceberg: ws.destination,
    streams: { [ws.topic]: { mode: "append", table: "t" } },
  });
  const counter = new OffsetCounter();
  const model = new AppendModel();
  const batch = counter.assign(Array.from({ length: 50 }, (_, i) => ({ partition: 0, key: null, value: { seq: i } })));
  await produceExactly(ws.topic, batch, counter);
  model.apply(batch);

  // This process holds the job, as a running sync would.
  // floe sync --state-dir ROOT locks ROOT/<job>.
  const lock = await acquireJobLock(join(ws.stateDir, ws.name), ws.name, { command: "the lock test" });
  try {
    const busy = await floeSync(["--config", ws.jobPath, "--state-dir", ws.stateDir]);
    assert.equal(busy.code, EXIT_BUSY, busy.stderr);
    assert.match(busy.stderr, new RegExp(`process ${process.pid} on .* \\(the lock test\\)`));
    const busyJson = await floeSync(["--config", ws.jobPath, "--state-dir", ws.stateDir, "--json"]);
    assert.equal(busyJson.code, EXIT_BUSY);
    assert.match(JSON.parse(busyJson.stdout).error, /being synced by process/);
  } finally {
    lock.release();
  }
  const second = await acquireJobLock(join(ws.stateDir, ws.name), ws.name, { command: "the lock test" });
  const waiting = floeSync(["--config", ws.jobPath, "--state-dir", ws.stateDir, "--wait", "120"]);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  second.release();
  const waited = await waiting;
  assert.equal(waited.code, 0, waited.stderr);
  await readers.assertRows({ catalog: ws.catalogRef, namespace: ws.namespace, table: "t" }, model.rows(["seq"]), {
    columns: modelColumns(["seq"]),
    orderBy: ["_kafka_partition", "_kafka_offset"],
  });
  // Nothing was locked out for good: the holder's exit (here, its release) frees the job.
  const again = await floeSync(["--config", ws.jobPath, "--state-dir", ws.stateDir]);
  assert.equal(again.code, 0, again.stderr);
});

/** A job of one upsert stream on `id` over two partitions, in the REST catalog. */
async function upsertJob(kind: string) {
  const ws = workspace(kind, "rest");
  await createTopic(ws.topic, 2);
  writeJobFile(ws.jobPath, {
    name: ws.name,
    kafka: { topic_pattern: `^${ws.topic}$` },
    iceberg: { ...ws.destination, target_engines: ["duckdb", "spark"] },
    streams: { [ws.topic]: { mode: "upsert", table: "t", dedup_keys: ["id"] } },
  });
  const counter = new OffsetCounter();
  const model = new UpsertModel((m) => String((m.value as { id: number }).id), false);
  const random = new Random(seed);
  const produce = async (count: number, tag: string) => {
    const batch = counter.assign(
      Array.from({ length: count }, (_, i) => {
        const id = i < 200 && tag === "first" ? i : random.int(200);
        return { partition: id % 2, key: `k${id}`, value: { id, name: `${tag}_${id}_${i}` } };
      }),
    );
    await produceExactly(ws.topic, batch, counter);
    model.apply(batch);
  };
  const table = { catalog: ws.catalogRef, namespace: ws.namespace, table: "t" };
  const expectModel = () =>
    readers.assertRows(table, model.rows(["id", "name"]), {
      columns: modelColumns(["id", "name"]),
      orderBy: ["_kafka_partition", "_kafka_offset"],
    });
  return { ws, produce, expectModel };
}

test("a sync whose messages another sync committed while it stood before its commit exits 5 and lands nothing twice", async () => {
  const { ws, produce, expectModel } = await upsertJob("conc_paused");
  await produce(400, "first");
  const args = (i: number) => ["--config", ws.jobPath, "--state-dir", join(ws.dir, `state${i}`)];
  assert.equal((await floeSync(args(0))).code, 0);
  await produce(300, "second");
  const paused = await pausedSync(args(0), ws.dir);
  const other = await floeSync(args(1));
  assert.equal(other.code, 0, other.stderr);
  const stopped = await paused.release();
  assert.equal(stopped.code, EXIT_BUSY, stopped.stderr);
  assert.match(stopped.stderr, /another writer committed these messages while this sync ran \(snapshot \d+ of job /);
  assert.match(stopped.stderr, /partition \d at \d+, this sync started from \d+/);
  assert.equal((await floeSync(args(0))).code, 0);
  await expectModel();
});

test("upsert: a compaction that lands while a sync commits: the retry finds the keys in the rewritten files", async () => {
  const { ws, produce, expectModel } = await upsertJob("conc_compact");
  await produce(400, "first");
  const args = ["--config", ws.jobPath, "--state-dir", ws.stateDir];
  assert.equal((await floeSync(args)).code, 0);
  await produce(300, "second");
  // The sync has planned its deletes on the files it saw; Spark then rewrites all of them.
  const paused = await pausedSync(args, ws.dir);
  try {
    const [compaction] = await readers.spark(
      `CALL rest.system.rewrite_data_files(table => '${ws.namespace}.t', options => map('rewrite-all', 'true'))`,
    );
    assert.ok(
      Number(compaction?.rewritten_data_files_count) >= 1,
      `rewrite_data_files: ${String(compaction?.rewritten_data_files_count)} files`,
    );
  } catch (error) {
    await paused.release();
    throw error;
  }
  const resumed = await paused.release();
  assert.equal(resumed.code, 0, resumed.stderr);
  await expectModel();
});
