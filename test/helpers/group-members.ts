// Members of a job's consumer group for a test, as `floe run` replicas join it (kafka/group-member.ts):
// one joins alone and owns every partition, holding its lease until the group rebalances (as a
// sync stops at a rebalance); a second joins; both end in one generation, sharing the partitions.
import assert from "node:assert/strict";
import type { KafkaCluster } from "#src/kafka/connection.ts";
import { GroupMember, type MemberLease } from "#src/kafka/group-member.ts";

export interface RebalancedPair {
  first: GroupMember;
  second: GroupMember;
  /** The first member's partitions of `topic` while it was alone. */
  aloneOwned: number[];
  /** Date.now() just before the second member joined. */
  beforeRebalance: number;
  /** The members' partitions of `topic` in the generation they share. */
  owned(m: GroupMember): number[];
  stop(): Promise<void>;
}

export async function twoMembersRebalanced(
  cluster: KafkaCluster,
  group: string,
  topic: string,
  clientIds: [string, string],
): Promise<RebalancedPair> {
  const started: GroupMember[] = [];
  const member = (clientId: string) => {
    const m = new GroupMember(cluster, {
      group,
      topics: async () => [topic],
      sessionTimeoutMs: 10_000,
      heartbeatIntervalMs: 500,
      rebalanceTimeoutMs: 30_000,
      clientId,
    });
    started.push(m);
    return m;
  };
  const stop = async () => {
    for (const m of started) await m.stop();
  };
  try {
    const first = member(clientIds[0]);
    let leased!: (lease: MemberLease) => void;
    const lease = new Promise<MemberLease>((resolve) => {
      leased = resolve;
    });
    const held = first.lease(async (l) => {
      leased(l);
      await new Promise<void>((resolve) => l.signal.addEventListener("abort", () => resolve(), { once: true }));
    });
    const alone = await lease;
    const aloneOwned = [...(alone.partitions.get(topic) ?? [])];
    const beforeRebalance = Date.now();
    const second = member(clientIds[1]);
    await second.lease(async () => {});
    await held;
    await first.lease(async () => {});
    assert.equal(first.generationId, second.generationId, "both members are in one generation");
    assert.ok(second.generationId > alone.generationId, "the second member's join rebalanced the group");
    const owned = (m: GroupMember) => [...(m.partitions.get(topic) ?? [])];
    return { first, second, aloneOwned, beforeRebalance, owned, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
