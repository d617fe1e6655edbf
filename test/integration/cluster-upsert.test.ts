// Replicas of one upsert job (its `cluster:` setting) against the real broker, the REST fixture
// catalog and the three readers. The topic's keys are in every partition (each message's
// partition is drawn at random), their Kafka timestamps go back and forth across partitions, and
// the job orders a key's messages by `order_by: _kafka_timestamp`: the table must hold, per key,
// its message of the greatest (timestamp, partition, offset), whichever member read it when.
//
//   1. three `floe run` members (continuous, 12 partitions) join and land the first quarter
//   2. one is SIGKILLed mid-commit (between writing a round's data files and committing them):
//      its partitions move to the others, which resume from the table's position
//   3. a zombie: a new member stopped between writing its round's data files and committing
//      them, SIGSTOPped past its session timeout; the others land the third quarter; SIGCONTed,
//      its commit is refused by the offset claim and it rejoins
//   4. a fourth member joins mid-run; the rest lands; SIGTERM, each exits 0
//
// Members commit rounds that retire rows of one data file at once (a key's previous row is in a
// file another member wrote): the table's current snapshot has at most one live deletion vector
// per data file, one generation's partition is advanced by one member only, and DuckDB, PyIceberg
// and Spark read exactly the model's rows. Then one member of another job lands the same topic
// into its own table: the readers read the same rows there (the table is the same with one
// replica and with several).
//
// FLOE_CLUSTER_UPSERT_MESSAGES sets the message count (default 240,000 over 40,000 keys: about
// 2 min on a 2-core machine shared with other tests; the 2,000,000 passes in about 4 min).
import assert from "node:assert/strict";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { readManifestEntries, readManifestList } from "#src/iceberg/scan/read-manifests.ts";
import { EntryStatus, FileContent } from "#src/iceberg/spec/manifest.ts";
import { currentSnapshot } from "#src/iceberg/spec/table-metadata.ts";
import { Table } from "#src/iceberg/table.ts";
import { MEMBER_SUMMARY_KEY } from "#src/pipeline/offset-claim.ts";
import { OFFSETS_SUMMARY_KEY, offsetsFromSummary } from "#src/pipeline/snapshot-offsets.ts";
import { createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, restTable, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { assertOneMemberPerPartition, type Member, Members, stopMembers } from "../helpers/cluster-members.ts";
import { writeJobFile } from "../helpers/job-file.ts";
import { until } from "../helpers/service-process.ts";
import { OffsetCounter, produceExactly, Random, syncWorkspace } from "../helpers/sync-model.ts";

const MESSAGES = Number(process.env.FLOE_CLUSTER_UPSERT_MESSAGES ?? 240_000);
/** About six messages a key, spread over the partitions. */
const KEYS = Math.max(100, Math.floor(MESSAGES / 6));
const PARTITIONS = 12;
const SESSION_TIMEOUT_MS = 8000;
const ws = syncWorkspace("cluster_upsert");
const topic = `${ws.name}_u`;
const members = new Members(ws.dir);
const catalog = await connectRestCatalog({ uri: restCatalog.uri });
const counter = new OffsetCounter();
const random = new Random(20);
/** Near now: the broker keeps messages by their timestamps, and these must outlive the test. */
const BASE_TIME = BigInt(Date.now());

interface Produced {
  partition: number;
  offset: bigint;
  timestamp: bigint;
  id: number;
  n: number;
}
const produced: Produced[] = [];

let readers: Readers | undefined;
before(async () => {
  await createTopic(topic, PARTITIONS);
});
after(async () => {
  members.close();
  await readers?.close();
  await deleteTopic(topic).catch(() => {});
});

/**
 * `count` more messages: key n % KEYS, a random partition, and a timestamp that follows the
 * produce order only roughly (up to 400 ms either way, and a few messages share each millisecond).
 */
async function produce(count: number): Promise<void> {
  const start = produced.length;
  const messages = counter.assign(
    Array.from({ length: count }, (_, i) => {
      const n = start + i;
      const id = n % KEYS;
      const timestamp = BASE_TIME + BigInt(Math.floor(n / 4) + random.int(800) - 400);
      return { partition: random.int(PARTITIONS), key: `k${id}`, value: { id, n, pad: "x".repeat(40) }, timestamp };
    }),
  );
  await produceExactly(topic, messages, counter);
  for (const m of messages) {
    const { id, n } = m.value as { id: number; n: number };
    produced.push({ partition: m.partition, offset: m.offset, timestamp: m.timestamp!, id, n });
  }
}

/** The model: per key, its message of the greatest (timestamp, partition, offset). */
function modelRows() {
  const best = new Map<number, Produced>();
  for (const m of produced) {
    const held = best.get(m.id);
    const later =
      !held ||
      m.timestamp > held.timestamp ||
      (m.timestamp === held.timestamp &&
        (m.partition > held.partition || (m.partition === held.partition && m.offset > held.offset)));
    if (later) best.set(m.id, m);
  }
  return [...best.values()]
    .sort((a, b) => a.id - b.id)
    .map((m) => ({ id: BigInt(m.id), n: BigInt(m.n), _kafka_partition: m.partition, _kafka_offset: m.offset }));
}

/** How many messages the table's current snapshot has absorbed: its offsets, summed. */
async function absorbed(namespace: string): Promise<bigint> {
  try {
    const { metadata } = await Table.load(catalog, { namespace: [namespace], name: "t" });
    const current = currentSnapshot(metadata);
    const offsets = current?.summary[OFFSETS_SUMMARY_KEY];
    if (!offsets) return 0n;
    let sum = 0n;
    for (const o of offsetsFromSummary(offsets, "test").get(topic)?.values() ?? []) sum += o;
    return sum;
  } catch {
    return 0n;
  }
}

/** Live DV entries of the current snapshot, by the data file each deletes from. */
async function liveDVsPerDataFile(namespace: string): Promise<Map<string, number>> {
  const table = await Table.load(catalog, { namespace: [namespace], name: "t" });
  const counts = new Map<string, number>();
  for (const manifest of await readManifestList(table, currentSnapshot(table.metadata)!)) {
    for (const entry of await readManifestEntries(table, manifest)) {
      const file = entry.file;
      if (entry.status === EntryStatus.DELETED || file.content !== FileContent.POSITION_DELETES) continue;
      if (file.referencedDataFile === undefined) continue;
      counts.set(file.referencedDataFile, (counts.get(file.referencedDataFile) ?? 0) + 1);
    }
  }
  return counts;
}

async function assertReaders(namespace: string): Promise<void> {
  readers ??= await startReaders();
  await readers.assertRows(restTable(namespace, "t"), modelRows(), {
    columns: ["id", "n", "_kafka_partition", "_kafka_offset"],
    orderBy: ["id"],
  });
}

const within = (what: string, condition: () => boolean | Promise<boolean>, ms = 900_000) =>
  until(what, condition, ms, 500);

function jobFile(job: string): string {
  return writeJobFile(join(ws.dir, `${job}.yaml`), {
    name: job,
    kafka: { topic_pattern: `^${topic}$`, max_threads: 4 },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    streams: { [topic]: { mode: "upsert", dedup_keys: ["id"], order_by: "_kafka_timestamp", table: "t" } },
    schedule: "continuous",
    commit: { interval: "2s" },
    cluster: { session_timeout: `${SESSION_TIMEOUT_MS}ms`, heartbeat_interval: "1s", rebalance_timeout: "30s" },
  });
}

const members3 = `${ws.name}_m3`;

test("upsert: three replicas share 12 partitions, keys in every partition; a SIGKILL, a zombie, a fourth member; the model's rows", async () => {
  const file = jobFile(members3);
  const namespace = `${members3}_topics`;
  const landed = () => absorbed(namespace);
  const quarter = Math.floor(MESSAGES / 4);

  // 1. Three members; a SIGKILLs itself between writing its second round's data files and committing them.
  const first = [
    members.run(file, topic, "a", { FLOE_FAULT_AT: "after-data-files:2", FLOE_FAULT: "crash" }),
    members.run(file, topic, "b"),
    members.run(file, topic, "c"),
  ];
  await within("three members with four partitions each", () =>
    first.every((m) => m.assigned()?.length === PARTITIONS / 3),
  );
  await produce(quarter);
  await within("the first quarter lands", async () => (await landed()) === counter.total);

  // 2. SIGKILLed mid-commit (by the first quarter, or the second at the latest).
  const producing = produce(quarter);
  const [killed, b, c] = first as [Member, Member, Member];
  assert.equal((await killed.exited).signal, "SIGKILL", killed.output().slice(-3000));
  await producing;
  await within("the two others own every partition", () =>
    [b, c].every((m) => m.assigned()?.length === PARTITIONS / 2),
  );
  await within("the second quarter lands", async () => (await landed()) === counter.total);

  // 3. The zombie.
  const pauseFile = join(ws.dir, "zombie-paused");
  const zombie = members.run(file, topic, "z", {
    FLOE_FAULT_AT: "after-data-files:1",
    FLOE_FAULT: "pause",
    FLOE_FAULT_FILE: pauseFile,
  });
  await within("the zombie joins with its share", () => zombie.assigned()?.length === PARTITIONS / 3);
  const zombieProducing = produce(quarter);
  await until("the zombie wrote its first round's data files", () => existsSync(pauseFile), 900_000, 50);
  zombie.child.kill("SIGSTOP");
  await within("the two others own every partition", () =>
    [b, c].every((m) => m.assigned()?.length === PARTITIONS / 2),
  );
  await zombieProducing;
  await within("the third quarter lands", async () => (await landed()) === counter.total);
  rmSync(pauseFile);
  zombie.child.kill("SIGCONT");
  await within("the zombie's commit is refused", () => /another writer committed these messages/.test(zombie.output()));
  await within("the zombie rejoins with its share", () =>
    [b, c, zombie].every((m) => m.assigned()?.length === PARTITIONS / 3),
  );

  // 4. A fourth member joins mid-run.
  const fourth = members.run(file, topic, "d");
  const lastProducing = produce(MESSAGES - 3 * quarter);
  await within("four members with three partitions each", () =>
    [b, c, zombie, fourth].every((m) => m.assigned()?.length === PARTITIONS / 4),
  );
  await lastProducing;
  await within("every message lands", async () => (await landed()) === counter.total);

  await stopMembers([b, c, zombie, fourth]);

  // One member per partition and generation; offsets only ever move forward.
  const { metadata } = await Table.load(catalog, { namespace: [namespace], name: "t" });
  const snapshots = [...metadata.snapshots].sort((x, y) => Number(x.sequenceNumber - y.sequenceNumber));
  assertOneMemberPerPartition(
    snapshots.filter((s) => s.summary[MEMBER_SUMMARY_KEY] !== undefined),
    topic,
    PARTITIONS,
    (p) => counter.end(p),
  );
  const deletingMembers = new Set(
    snapshots.filter((s) => Number(s.summary["added-dvs"] ?? 0) > 0).map((s) => s.summary[MEMBER_SUMMARY_KEY]),
  );
  assert.ok(deletingMembers.size >= 2, `members retired rows: ${[...deletingMembers]}`);
  const replans = [...first, zombie, fourth]
    .flatMap((m) => m.output().split("\n"))
    .filter((l) => l.includes('"replans":'))
    .reduce((sum, l) => sum + (JSON.parse(l) as { replans: number }).replans, 0);
  const memberCommits = snapshots.filter((s) => s.summary[MEMBER_SUMMARY_KEY] !== undefined);
  console.log(
    `${MESSAGES} messages, ${KEYS} keys: ${memberCommits.length} member commits, ` +
      `${memberCommits.filter((s) => Number(s.summary["removed-dvs"] ?? 0) > 0).length} replaced a DV, ${replans} rounds planned again`,
  );
  for (const [path, count] of await liveDVsPerDataFile(namespace)) {
    assert.equal(count, 1, `${path} has ${count} live deletion vectors`);
  }

  await assertReaders(namespace);
});

test("upsert: one replica of another job lands the same topic into the same rows", async () => {
  const job = `${ws.name}_m1`;
  const namespace = `${job}_topics`;
  const only = members.run(jobFile(job), topic, "only");
  await within("the one member owns every partition", () => only.assigned()?.length === PARTITIONS);
  await within("every message lands", async () => (await absorbed(namespace)) === counter.total);
  only.child.kill("SIGTERM");
  assert.equal((await only.exited).code, 0, only.output().slice(-3000));
  for (const [path, count] of await liveDVsPerDataFile(namespace)) assert.equal(count, 1, path);
  await assertReaders(namespace);
});
