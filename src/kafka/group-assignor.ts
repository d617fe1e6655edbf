// The partition assignment the leader of a job's consumer group computes for its members (the
// classic protocol's client-side assignment, "consumer" protocol type). Balanced: each member
// gets floor(P/N) or floor(P/N)+1 of the P partitions of the group's topics. Sticky: a member
// keeps the partitions it owned before the rebalance (its subscription's owned partitions) up to
// its share, so that a rebalance moves only the partitions it must, and a partition that moves
// has, as far as the leader knows, no other owner. Deterministic for the same members and
// topics, so that every test and every leader computes the same answer. Pure.

export interface AssignorMember {
  memberId: string;
  /** What the member owned in the generation before (ConsumerProtocol ownedPartitions). */
  owned: ReadonlyMap<string, readonly number[]>;
}

export interface AssignorTopic {
  topic: string;
  partitions: number;
}

/** memberId -> topic -> partitions (ascending); every member is present, with an empty map when it gets nothing. */
export type GroupAssignment = Map<string, Map<string, number[]>>;

export function assignPartitions(
  members: readonly AssignorMember[],
  topics: readonly AssignorTopic[],
): GroupAssignment {
  const result: GroupAssignment = new Map();
  if (members.length === 0) return result;
  const all: [string, number][] = [];
  for (const { topic, partitions } of [...topics].sort((a, b) => compare(a.topic, b.topic))) {
    for (let p = 0; p < partitions; p++) all.push([topic, p]);
  }
  const exists = new Set(all.map(([t, p]) => key(t, p)));
  const ownedCount = (m: AssignorMember) =>
    [...m.owned].reduce((n, [t, ps]) => n + ps.filter((p) => exists.has(key(t, p))).length, 0);
  // The members that owned most get the +1 shares, so that fewer partitions move.
  const order = [...members].sort((a, b) => ownedCount(b) - ownedCount(a) || compare(a.memberId, b.memberId));
  const base = Math.floor(all.length / members.length);
  const extra = all.length % members.length;
  const capacity = new Map(order.map((m, i) => [m.memberId, base + (i < extra ? 1 : 0)]));
  const taken = new Set<string>();
  const counts = new Map(order.map((m) => [m.memberId, 0]));
  const give = (memberId: string, topic: string, partition: number) => {
    const byTopic = result.get(memberId)!;
    const list = byTopic.get(topic) ?? [];
    list.push(partition);
    byTopic.set(topic, list);
    taken.add(key(topic, partition));
    counts.set(memberId, counts.get(memberId)! + 1);
  };
  for (const m of [...members].sort((a, b) => compare(a.memberId, b.memberId))) result.set(m.memberId, new Map());
  for (const m of order) {
    const owned = [...m.owned].flatMap(([t, ps]) => ps.map((p): [string, number] => [t, p]));
    owned.sort(([ta, pa], [tb, pb]) => compare(ta, tb) || pa - pb);
    for (const [topic, partition] of owned) {
      const k = key(topic, partition);
      if (!exists.has(k) || taken.has(k)) continue;
      if (counts.get(m.memberId)! >= capacity.get(m.memberId)!) break;
      give(m.memberId, topic, partition);
    }
  }
  let next = 0;
  for (const [topic, partition] of all) {
    if (taken.has(key(topic, partition))) continue;
    // Round robin over the members with room left, in the capacity order.
    for (let tries = 0; tries < order.length; tries++) {
      const m = order[next % order.length]!;
      next++;
      if (counts.get(m.memberId)! < capacity.get(m.memberId)!) {
        give(m.memberId, topic, partition);
        break;
      }
    }
  }
  for (const byTopic of result.values()) for (const list of byTopic.values()) list.sort((a, b) => a - b);
  return result;
}

function key(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
