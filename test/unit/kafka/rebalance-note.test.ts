// The leader's note of a rebalance in each member's assignment: what each member gained and gave
// up, encoded and decoded as written; and user data that is not floe's (another client's bytes,
// a truncated or forged note) decodes to no note rather than to a wrong one.
import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeRebalanceNote, encodeRebalanceNote, rebalanceNotes } from "#src/kafka/rebalance-note.ts";

const map = (o: Record<string, number[]>) => new Map(Object.entries(o));

test("each member's note says what it gained and gave up against what it owned", () => {
  const notes = rebalanceNotes(
    [
      { memberId: "a", owned: map({ t: [0, 1, 2, 3], u: [0] }) },
      { memberId: "b", owned: map({}) },
    ],
    new Map([
      ["a", map({ t: [0, 1], u: [0] })],
      ["b", map({ t: [3, 2] })],
    ]),
    7,
    1_700_000_000_000,
  );
  assert.deepEqual(notes.get("a"), {
    generationId: 7,
    assignedAt: 1_700_000_000_000,
    gained: new Map(),
    gaveUp: map({ t: [2, 3] }),
  });
  assert.deepEqual(notes.get("b")?.gained, map({ t: [2, 3] }));
  assert.deepEqual(notes.get("b")?.gaveUp, new Map());
});

test("a member the assignment leaves out gave up everything it owned", () => {
  const notes = rebalanceNotes([{ memberId: "a", owned: map({ t: [1] }) }], new Map(), 2, 5);
  assert.deepEqual(notes.get("a")?.gaveUp, map({ t: [1] }));
});

test("a note decodes as it was encoded", () => {
  const note = {
    generationId: 12,
    assignedAt: 1_764_000_000_123,
    gained: map({ "a.b": [4, 5] }),
    gaveUp: map({ c: [0] }),
  };
  assert.deepEqual(decodeRebalanceNote(encodeRebalanceNote(note)), note);
});

test("user data that is not floe's note is no note", () => {
  const bytes = (s: string) => Buffer.from(s);
  const valid = JSON.parse(
    encodeRebalanceNote({ generationId: 1, assignedAt: 2, gained: new Map(), gaveUp: new Map() }).toString(),
  );
  for (const [what, data] of [
    ["none", undefined],
    ["empty", Buffer.alloc(0)],
    ["another client's bytes", Buffer.from([0, 0, 0, 4, 1, 2, 3, 4])],
    [
      "truncated",
      encodeRebalanceNote({ generationId: 1, assignedAt: 2, gained: new Map(), gaveUp: new Map() }).subarray(0, 10),
    ],
    ["JSON without the mark", bytes(JSON.stringify({ ...valid, "floe.rebalance": undefined }))],
    ["another version", bytes(JSON.stringify({ ...valid, "floe.rebalance": 2 }))],
    ["a generation that is not an integer", bytes(JSON.stringify({ ...valid, generation: "7" }))],
    ["a time that is not an integer", bytes(JSON.stringify({ ...valid, assignedAt: 1.5 }))],
    ["partitions that are not a list", bytes(JSON.stringify({ ...valid, gained: { t: "0,1" } }))],
    ["a negative partition", bytes(JSON.stringify({ ...valid, gaveUp: { t: [-1] } }))],
    ["partitions as a list of topics", bytes(JSON.stringify({ ...valid, gained: [["t", [0]]] }))],
    ["a string", bytes(JSON.stringify("floe.rebalance"))],
    ["too large", Buffer.alloc((1 << 20) + 1, 32)],
  ] as const) {
    assert.equal(decodeRebalanceNote(data), undefined, what);
  }
});
