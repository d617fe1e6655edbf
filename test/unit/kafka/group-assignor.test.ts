// The assignment a job's group leader computes: every partition to exactly one member, shares
// that differ by at most one, and a rebalance that moves only what it must.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type AssignorMember, assignPartitions, type GroupAssignment } from "#src/kafka/group-assignor.ts";

const member = (memberId: string, owned: Record<string, number[]> = {}): AssignorMember => ({
  memberId,
  owned: new Map(Object.entries(owned)),
});

function flat(assignment: GroupAssignment): string[] {
  return [...assignment].flatMap(([m, byTopic]) => [...byTopic].flatMap(([t, ps]) => ps.map((p) => `${t}/${p}@${m}`)));
}

function owners(assignment: GroupAssignment): Map<string, string> {
  const result = new Map<string, string>();
  for (const entry of flat(assignment)) {
    const [tp, m] = entry.split("@") as [string, string];
    assert.equal(result.has(tp), false, `${tp} assigned twice`);
    result.set(tp, m);
  }
  return result;
}

const counts = (a: GroupAssignment) =>
  [...a.values()].map((byTopic) => [...byTopic.values()].reduce((n, ps) => n + ps.length, 0));

test("12 partitions over 3 new members: 4 each, every partition once", () => {
  const a = assignPartitions([member("c"), member("a"), member("b")], [{ topic: "t", partitions: 12 }]);
  assert.deepEqual(counts(a), [4, 4, 4]);
  assert.equal(owners(a).size, 12);
  assert.deepEqual([...a.keys()], ["a", "b", "c"], "every member is in the answer, in id order");
});

test("shares differ by at most one over several topics, and a member beyond the partitions gets none", () => {
  const a = assignPartitions(
    [member("a"), member("b"), member("c")],
    [
      { topic: "u", partitions: 3 },
      { topic: "t", partitions: 4 },
    ],
  );
  assert.deepEqual(counts(a).sort(), [2, 2, 3]);
  assert.equal(owners(a).size, 7);
  const many = assignPartitions([member("a"), member("b"), member("c")], [{ topic: "t", partitions: 2 }]);
  assert.deepEqual(counts(many).sort(), [0, 1, 1]);
});

test("a member that leaves: the others keep theirs and share its partitions", () => {
  const before = assignPartitions([member("a"), member("b"), member("c")], [{ topic: "t", partitions: 12 }]);
  const owned = (m: string) => Object.fromEntries(before.get(m)!);
  const after = assignPartitions([member("a", owned("a")), member("c", owned("c"))], [{ topic: "t", partitions: 12 }]);
  assert.deepEqual(counts(after), [6, 6]);
  const was = owners(before);
  for (const [tp, m] of owners(after)) {
    if (was.get(tp) !== "b") assert.equal(m, was.get(tp), `${tp} stays with ${was.get(tp)}`);
  }
});

test("a member that joins takes its share from the others, who keep the rest", () => {
  const before = assignPartitions([member("a"), member("b")], [{ topic: "t", partitions: 12 }]);
  const owned = (m: string) => Object.fromEntries(before.get(m)!);
  const after = assignPartitions(
    [member("a", owned("a")), member("b", owned("b")), member("d")],
    [{ topic: "t", partitions: 12 }],
  );
  assert.deepEqual(counts(after), [4, 4, 4]);
  const was = owners(before);
  const moved = [...owners(after)].filter(([tp, m]) => was.get(tp) !== m);
  assert.equal(moved.length, 4, "only the new member's share moves");
  assert.ok(moved.every(([, m]) => m === "d"));
});

test("two members claiming one partition (a zombie's stale claim): it goes to one of them only", () => {
  const a = assignPartitions(
    [member("a", { t: [0, 1, 2] }), member("b", { t: [2, 3] })],
    [{ topic: "t", partitions: 4 }],
  );
  assert.equal(owners(a).size, 4);
  assert.deepEqual(counts(a), [2, 2]);
});

test("owned partitions of a topic that is gone, or beyond its count, are ignored", () => {
  const a = assignPartitions([member("a", { gone: [0], t: [5] })], [{ topic: "t", partitions: 2 }]);
  assert.deepEqual(flat(a), ["t/0@a", "t/1@a"]);
  assert.deepEqual(assignPartitions([], [{ topic: "t", partitions: 2 }]).size, 0);
});
