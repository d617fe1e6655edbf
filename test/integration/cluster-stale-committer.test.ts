// The Kafka Connect Iceberg sink's zombie-coordinator failures, tried against floe's replicas,
// which commit per member (there is no coordinator to elect), with the real broker, the REST
// fixture and the three readers.
//
//   A stale committer whose offsets are old. A member pauses after its table commit and before
//   its group commit, and is SIGSTOPped past its session timeout. The other member takes its
//   partitions, resumes from the table's position, lands more and commits the group's offsets.
//   Then the stale member resumes and sends the offsets it held: the broker refuses them (the
//   member's generation ended), so the group's offsets never go back, and the member rejoins.
//   In the sink, a coordinator left running after it lost the election did rewind them.
//
//   A rewind that escaped fencing. With every member stopped, the group's offsets are set back
//   to 0: on two partitions below a log start that deleteRecords moved past everything landed, on
//   two within the log. Then more messages are produced. A sink that trusts the group and resets
//   to `latest` skips them on the first two, and lands the old messages again on the others.
//   floe resumes from the offsets its table's snapshots record, so it lands exactly the new ones.
//
// Each phase ends with the table's position at each partition's log end, and DuckDB, PyIceberg
// and Spark read every message exactly once.
import assert from "node:assert/strict";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { connectRestCatalog } from "#src/iceberg/catalog/rest-catalog.ts";
import { commitGroupOffsets, readGroupOffsets } from "#src/kafka/commit-offsets.ts";
import type { KafkaCluster } from "#src/kafka/connection.ts";
import { OFFSETS_SUMMARY_KEY, offsetsFromSummary } from "#src/pipeline/snapshot-offsets.ts";
import { connectCluster, createTopic, deleteTopic } from "../../dev/kafka.ts";
import { type Readers, startReaders } from "../../dev/readers.ts";
import { restCatalog } from "../../dev/services/iceberg-rest.ts";
import { alive, Landing, Members, stopMembers } from "../helpers/cluster-members.ts";
import { writeJobFile } from "../helpers/job-file.ts";
import { until } from "../helpers/service-process.ts";
import { syncWorkspace } from "../helpers/sync-model.ts";

const PARTITIONS = 4;
const BATCH = 4_000;
const SESSION_TIMEOUT_MS = 6000;
const ws = syncWorkspace("stale");
const catalog = await connectRestCatalog({ uri: restCatalog.uri });
const landing = new Landing(catalog, `${ws.name}`, PARTITIONS);
const group = `floe_${landing.job}`;
const members = new Members(ws.dir);
let cluster: KafkaCluster;
let readers: Readers | undefined;

before(async () => {
  await createTopic(landing.topic, PARTITIONS);
  cluster = await connectCluster();
});
after(async () => {
  members.close();
  await readers?.close();
  await cluster?.close();
  await deleteTopic(landing.topic).catch(() => {});
});

const within = (what: string, condition: () => boolean | Promise<boolean>, ms = 300_000) =>
  until(what, condition, ms, 200);

/** The group's committed offset per partition of the topic (absent where none). */
async function groupOffsets(): Promise<Map<number, bigint>> {
  const offsets = await readGroupOffsets(cluster, group, [{ topic: landing.topic, partitions: PARTITIONS }]);
  return offsets.get(landing.topic) ?? new Map();
}

/** The offsets the table's current snapshot records for the topic. */
async function tablePosition(): Promise<Map<number, bigint>> {
  const snapshots = await landing.snapshots();
  const last = snapshots.at(-1);
  if (!last) return new Map();
  return offsetsFromSummary(last.summary[OFFSETS_SUMMARY_KEY]!, "test").get(landing.topic) ?? new Map();
}

async function assertAtLogEnd(what: string): Promise<void> {
  const position = await tablePosition();
  for (let p = 0; p < PARTITIONS; p++) {
    assert.equal(position.get(p), landing.counter.end(p), `${what}: partition ${p} ends at its log end`);
  }
  readers ??= await startReaders();
  await landing.assertReaders(readers);
}

test("a member whose generation ended cannot rewind the group's offsets, and a rewind past retention loses nothing", async () => {
  const file = writeJobFile(join(ws.dir, "job.yaml"), {
    name: landing.job,
    kafka: { topic_pattern: `^${landing.topic}$`, max_threads: 2 },
    iceberg: { catalog: { type: "rest", uri: restCatalog.uri } },
    streams: { [landing.topic]: { mode: "append", table: "t" } },
    schedule: "continuous",
    commit: { interval: "1s" },
    cluster: { session_timeout: `${SESSION_TIMEOUT_MS}ms`, heartbeat_interval: "1s", rebalance_timeout: "20s" },
  });

  // The stale member z lands the first batch alone and stops between its table commit and its
  // group commit, where SIGSTOP freezes it past its session.
  await landing.produce(BATCH);
  const pauseFile = join(ws.dir, "z-paused");
  const z = members.run(file, landing.topic, "z", {
    FLOE_FAULT_AT: "before-group-commit:1",
    FLOE_FAULT: "pause",
    FLOE_FAULT_FILE: pauseFile,
  });
  await within("z stops before its first group commit", () => existsSync(pauseFile));
  z.child.kill("SIGSTOP");
  assert.equal(await landing.landed(), BATCH, "z committed the first batch to the table before it stopped");
  assert.equal((await groupOffsets()).size, 0, "and no offset to the group");

  // a takes every partition once z's session ends, resumes from the table, and lands the second batch.
  const a = members.run(file, landing.topic, "a");
  await within("a owns every partition", () => a.assigned()?.length === PARTITIONS);
  await landing.produce(BATCH);
  await within("the second batch lands", async () => (await landing.landed()) === 2 * BATCH);
  await within("a commits the group's offsets at the log end", async () => {
    const offsets = await groupOffsets();
    return Array.from({ length: PARTITIONS }, (_, p) => offsets.get(p) === landing.counter.end(p)).every(Boolean);
  });
  const committedByA = await groupOffsets();

  // z resumes and sends the first batch's offsets as a member of its ended generation.
  rmSync(pauseFile);
  z.child.kill("SIGCONT");
  let lowest = committedByA;
  await within("z rejoins, and the group splits the partitions", async () => {
    const now = await groupOffsets();
    for (const [p, offset] of now) if (offset < (lowest.get(p) ?? 0n)) lowest = now;
    return z.assigned()?.length === PARTITIONS / 2 && a.assigned()?.length === PARTITIONS / 2;
  });
  for (let p = 0; p < PARTITIONS; p++) {
    assert.equal(lowest.get(p), committedByA.get(p), `the group's offset of partition ${p} never went back`);
  }
  assert.match(
    z.output(),
    /"msg":"run complete: 4000 messages[^"]*; consumer group not updated: [^"]*generation 1/,
    "z's run says that its group commit, as generation 1's member, was refused",
  );
  assert.ok(alive(z) && alive(a), "both members run on");
  assert.deepEqual(await groupOffsets(), committedByA, "the group holds a's offsets");
  assert.equal(await landing.landed(), 2 * BATCH, "nothing landed twice");
  await assertAtLogEnd("after the stale commit");

  // Every member stops; the group's offsets are rewound to 0: below the log start of partitions 0
  // and 1, which deleteRecords moved past everything landed, and within the log of 2 and 3.
  await stopMembers([a, z]);
  await cluster.admin.deleteRecords({
    topics: [
      {
        name: landing.topic,
        partitions: [0, 1].map((p) => ({ partition: p, offset: landing.counter.end(p) })),
      },
    ],
  });
  const zero = new Map([[landing.topic, new Map(Array.from({ length: PARTITIONS }, (_, p) => [p, 0n] as const))]]);
  await commitGroupOffsets(cluster, group, zero);
  await landing.produce(BATCH);

  const [b, c] = [members.run(file, landing.topic, "b"), members.run(file, landing.topic, "c")];
  await within("the third batch lands", async () => (await landing.landed()) >= 3 * BATCH);
  await within(
    "the group is past the rewind",
    async () => {
      const offsets = await groupOffsets();
      return Array.from({ length: PARTITIONS }, (_, p) => offsets.get(p) === landing.counter.end(p)).every(Boolean);
    },
    120_000,
  );
  await stopMembers([b, c]);
  assert.equal(await landing.landed(), 3 * BATCH, "exactly the third batch was added");
  await assertAtLogEnd("after the rewind");
});
