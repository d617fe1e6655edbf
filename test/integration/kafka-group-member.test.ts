// Membership of a job's consumer group against the real broker: members share the partitions
// (each once, shares within one of each other), a joining member aborts the others' leases and
// they rejoin once their work returned, a member commits the group's offsets in its generation
// (and an older generation's commit is refused), a member that stops leaves at once, tools see
// the members, and a join the broker refuses for its settings fails at once, saying why.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { describeGroup, readGroupOffsets } from "#src/kafka/commit-offsets.ts";
import type { KafkaCluster } from "#src/kafka/connection.ts";
import { hasProtocolError } from "#src/kafka/errors.ts";
import {
  GroupMember,
  GroupMembershipError,
  type GroupMember as Member,
  type MemberLease,
} from "#src/kafka/group-member.ts";
import { connectCluster, createTopic, deleteTopic } from "../../dev/kafka.ts";
import { until } from "../helpers/service-process.ts";

const run = `floe-it-member-${randomUUID().slice(0, 8)}`;
const topic = `${run}-t`;
let cluster: KafkaCluster;
const started: Member[] = [];

before(async () => {
  cluster = await connectCluster();
  await createTopic(topic, 6);
});

after(async () => {
  for (const m of started) await m.stop();
  await cluster?.close();
  await deleteTopic(topic);
});

function member(group: string, name: string, sessionTimeoutMs = 6000): Member {
  const m = new GroupMember(cluster, {
    group,
    topics: async () => [topic],
    sessionTimeoutMs,
    heartbeatIntervalMs: 500,
    rebalanceTimeoutMs: 20_000,
    clientId: `${run}-${name}`,
  });
  started.push(m);
  return m;
}

const owned = (m: Member) => m.partitions.get(topic) ?? [];

/** Holds a lease until its signal says the generation ended; resolves to the lease. */
function holdUntilRebalance(m: Member): { lease: Promise<MemberLease>; ended: Promise<void> } {
  let leased!: (lease: MemberLease) => void;
  const lease = new Promise<MemberLease>((resolve) => {
    leased = resolve;
  });
  const ended = m.lease(async (l) => {
    leased(l);
    await new Promise<void>((resolve) => l.signal.addEventListener("abort", () => resolve(), { once: true }));
  });
  return { lease, ended };
}

test("members share the partitions, rebalance around a lease, commit in their generation and leave", {
  timeout: 120_000,
}, async () => {
  const group = `${run}-g`;
  const a = member(group, "a");
  const first = holdUntilRebalance(a);
  const leaseA = await first.lease;
  assert.deepEqual(leaseA.partitions.get(topic), [0, 1, 2, 3, 4, 5], "alone, a member owns every partition");
  await leaseA.commitOffsets(new Map([[topic, new Map([[0, 7n]])]]));
  assert.equal((await readGroupOffsets(cluster, group)).get(topic)?.get(0), 7n);

  // A second member joins: a's lease is aborted, and the group completes once a returned and rejoined.
  const b = member(group, "b");
  const joined = b.lease(async (l) => l.partitions);
  await first.ended;
  const bPartitions = await joined;
  assert.ok(a.generationId > leaseA.generationId, "a rejoined in a new generation");
  assert.deepEqual([...owned(a), ...(bPartitions.get(topic) ?? [])].sort(), [0, 1, 2, 3, 4, 5]);
  assert.equal(owned(a).length, 3);
  const activity = await describeGroup(cluster, group);
  assert.deepEqual(activity.members.map((m) => m.clientId).sort(), [`${run}-a`, `${run}-b`]);

  // The broker fences the older generation's commit.
  await assert.rejects(
    leaseA.commitOffsets(new Map([[topic, new Map([[0, 9n]])]])),
    (error: unknown) => error instanceof GroupMembershipError && hasProtocolError(error, "ILLEGAL_GENERATION"),
  );
  assert.equal((await readGroupOffsets(cluster, group)).get(topic)?.get(0), 7n);
  await a.lease((l) => l.commitOffsets(new Map([[topic, new Map([[owned(a)[0]!, 11n]])]])));

  // a stops: it leaves, and b owns everything after its next rebalance, without a session timeout.
  const before = Date.now();
  await a.stop();
  await until(
    "b owns every partition",
    async () => (await b.lease(async (l) => l.partitions.get(topic)?.length)) === 6,
    30_000,
  );
  assert.ok(Date.now() - before < 6000, "no wait for the session timeout");
});

test("a session timeout the broker refuses fails the join at once, naming the setting", {
  timeout: 60_000,
}, async () => {
  const m = member(`${run}-bad`, "bad", 1000);
  await assert.rejects(
    m.lease(async () => {}),
    (error: unknown) =>
      error instanceof GroupMembershipError && !error.retryable && /cluster\.session_timeout/.test(error.message),
  );
});
