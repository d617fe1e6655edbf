// One million orders-like messages on 4 partitions, synced in upsert mode into the REST catalog
// by two syncs of 500,000 messages, each committing every 125,000 (eight commits, a data file
// each with the default file size): one message in ten updates an id drawn from all earlier
// messages, so each commit deletes rows of every older data file, merging each file's DV with
// the one an earlier commit wrote. DuckDB, PyIceberg and Spark must each read exactly the model:
// one row per id, the one of its latest message.
//
// The sizes are what small tests cannot reach: a commit's DVs are kilobytes each, and those of
// the older files, merged more often, are the larger ones. DuckDB 1.5.5 read such DVs wrong
// when they shared a Puffin file. Run with `npm run test:scale`.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ProduceAcks, Producer } from "@platformatic/kafka";
import { bootstrapServers, TestTopics } from "../../dev/kafka.ts";
import { type Readers, type Row, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { buildJob, committingEvery } from "../helpers/job-file.ts";
import { syncJob } from "../helpers/sync-job.ts";

const MESSAGES = 1_000_000;
const FIRST_SYNC = 500_000;
const MESSAGES_PER_COMMIT = 125_000;
const PARTITIONS = 4;
const run = `scale${process.pid}_${Date.now()}`;
const topics = new TestTopics(run);
const stateDir = mkdtempSync(join(tmpdir(), "floe-scale-"));
const STATUSES = ["created", "paid", "shipped", "delivered", "cancelled"];
const EPOCH = Date.UTC(2026, 0, 1);

let readers: Readers;
let topic: string;
before(async () => {
  readers = await startReaders({ sparkDriverMemory: "2g" });
  topic = await topics.create("orders", PARTITIONS);
});
after(async () => {
  await readers?.close();
  await topics.deleteAll();
  rmSync(stateDir, { recursive: true, force: true });
});

/** Message n's order id: n itself, or for one message in ten the id of a message drawn from all earlier ones. */
function orderId(n: number): number {
  if (n % 10 !== 9) return n;
  const earlier = Math.imul(n, 0x9e3779b1) >>> 0;
  const m = earlier % n;
  return m % 10 === 9 ? m - 1 : m;
}

function order(n: number, id: number): Buffer {
  const document = {
    id,
    seq: n,
    customer_id: (n * 31) % 50_000,
    status: STATUSES[n % STATUSES.length],
    amount: Math.round(((n * 37) % 100_000) + 1) / 100,
    currency: "EUR",
    created_at: new Date(EPOCH + n * 1000).toISOString(),
    note: "x".repeat(n % 40),
  };
  return Buffer.from(JSON.stringify(document));
}

/** Produces messages [from, to) in order: one request at a time keeps each partition in production order. */
async function produce(from: number, to: number): Promise<void> {
  const producer = new Producer<Buffer, Buffer, Buffer, Buffer>({
    clientId: "floe-test-scale",
    bootstrapBrokers: [bootstrapServers],
    idempotent: true,
    timeout: 60_000,
  });
  try {
    for (let at = from; at < to; at += 5000) {
      const messages = [];
      for (let n = at; n < Math.min(to, at + 5000); n++) {
        const id = orderId(n);
        messages.push({ topic, partition: id % PARTITIONS, key: Buffer.from(String(id)), value: order(n, id) });
      }
      await producer.send({ acks: ProduceAcks.ALL, messages });
    }
  } finally {
    await producer.close();
  }
}

/** The model after messages [0, upTo): the latest message of each id, sorted by id. */
function expectedRows(upTo: number): { id: bigint; seq: bigint }[] {
  const latest = new Int32Array(upTo).fill(-1);
  for (let n = 0; n < upTo; n++) latest[orderId(n)] = n;
  const rows = [];
  for (let id = 0; id < upTo; id++) if (latest[id]! >= 0) rows.push({ id: BigInt(id), seq: BigInt(latest[id]!) });
  return rows;
}

test("1M messages, two syncs, eight commits, upserts over every older file: DuckDB, PyIceberg and Spark read the model", async (t) => {
  const job = buildJob(
    {
      name: run,
      kafka: { topic_pattern: `^${topic}$`, max_threads: PARTITIONS },
      iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
      streams: { [topic]: { mode: "upsert", dedup_keys: ["id"], table: "orders" } },
    },
    join(stateDir, "job.yaml"),
  );
  const ref = restTable(job.namespace, "orders");
  const timed = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await work();
    t.diagnostic(`${what}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return result;
  };

  await timed(`produce ${FIRST_SYNC} messages`, () => produce(0, FIRST_SYNC));
  const first = await timed("first sync", () => syncJob(committingEvery(job, MESSAGES_PER_COMMIT), { stateDir }));
  assert.equal(first.status, "complete");
  assert.equal(first.messagesRead, FIRST_SYNC, "the topic holds exactly the messages produced");
  // A cheap check between the syncs; the rows themselves are compared after the second.
  const model = expectedRows(FIRST_SYNC);
  const sumSeq = model.reduce((sum, r) => sum + r.seq, 0n);
  for (const engine of ["duckdb", "spark"] as const) {
    const [counts] = await timed(`${engine} counts after the first sync`, () =>
      readers.sql(
        engine,
        `SELECT count(*) AS n, count(DISTINCT id) AS ids, sum(seq) AS seqs FROM rest.${job.namespace}.orders`,
      ),
    );
    assert.deepEqual(
      { n: BigInt(counts!.n as bigint), ids: BigInt(counts!.ids as bigint), seqs: BigInt(counts!.seqs as bigint) },
      { n: BigInt(model.length), ids: BigInt(model.length), seqs: sumSeq },
      `${engine} after the first sync`,
    );
  }

  await timed(`produce ${MESSAGES - FIRST_SYNC} more`, () => produce(FIRST_SYNC, MESSAGES));
  const second = await timed("second sync", () => syncJob(committingEvery(job, MESSAGES_PER_COMMIT), { stateDir }));
  assert.equal(second.status, "complete");
  assert.equal(second.messagesRead, MESSAGES - FIRST_SYNC);

  const [table] = second.tables;
  const snapshots = await readers.sql("spark", `SELECT count(*) AS n FROM rest.${job.namespace}.orders.snapshots`);
  // A commit lands once a fetched batch brings the buffer to the interval, and one at the end
  // of each sync: fetched batches are far smaller than what is left for the last one.
  const commits =
    Math.ceil(FIRST_SYNC / MESSAGES_PER_COMMIT) + Math.ceil((MESSAGES - FIRST_SYNC) / MESSAGES_PER_COMMIT);
  assert.equal(Number(snapshots[0]!.n), commits, "snapshots: one per commit");
  const files = await readers.sql(
    "spark",
    `SELECT count(*) AS n, sum(CASE WHEN content = 1 THEN 1 ELSE 0 END) AS dvs FROM rest.${job.namespace}.orders.files`,
  );
  t.diagnostic(
    `${commits} commits; live: ${files[0]!.n} files of which ${files[0]!.dvs} DVs; ` +
      `second sync: ${table!.dataFilesAdded} data files, ${table!.deletionVectorsAdded} DVs, ${table!.positionsDeleted} positions deleted`,
  );
  assert.equal(Number(files[0]!.dvs), commits - 1, "every data file but the last one has a DV");

  const expected = expectedRows(MESSAGES);
  assert.equal(expected.length, 900_000);
  for (const engine of readers.engines) {
    const rows: Row[] = await timed(`${engine} reads ${expected.length} rows`, () =>
      readers.rows(engine, ref, { columns: ["id", "seq"], orderBy: ["id"] }),
    );
    assert.equal(rows.length, expected.length, `${engine} reads one row per id`);
    // deepStrictEqual over 900,000 rows would print all of them: name the first difference.
    const wrong = rows.findIndex((row, i) => row.id !== expected[i]!.id || row.seq !== expected[i]!.seq);
    assert.equal(
      wrong,
      -1,
      `${engine}: row ${wrong} is ${JSON.stringify(rows[wrong], (_k, v) => (typeof v === "bigint" ? String(v) : v))}, ` +
        `the model has id ${expected[wrong]?.id} with seq ${expected[wrong]?.seq}`,
    );
  }
});
