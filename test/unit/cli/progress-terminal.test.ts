// The terminal display: the first frame at the plan, each later frame drawn over the last (cursor
// up by the lines drawn), lines cut to the width, a frame taller than the screen summarised, the
// last frame kept; and no display off a terminal or on TERM=dumb.
import assert from "node:assert/strict";
import { test } from "node:test";
import { progressDisplay, wantsProgress } from "#src/cli/progress-terminal.ts";
import type { SyncEvent } from "#src/pipeline/events.ts";

const at = 1_800_000_000_000;
/** Carriage return, then ANSI "erase the line". */
const CLEAR = "\r\u001b[2K";

function planned(topics: string[]): SyncEvent {
  return {
    type: "planned",
    runId: "r",
    at,
    tables: topics.map((topic) => ({ topic, table: `ns.${topic}`, mode: "append", exists: false })),
    partitions: topics.map((topic) => ({
      topic,
      partition: 0,
      logStartOffset: 0n,
      highWatermark: 10n,
      lastStableOffset: 10n,
      groupOffset: null,
      tableOffset: null,
      startFrom: "log-start",
      startOffset: 0n,
      stopOffset: 10n,
    })),
    messagesToRead: BigInt(10 * topics.length),
    skippedTopics: [],
    lostMessages: [],
    recreatedTopics: [],
  };
}

test("frames are drawn in place: cursor up by the last frame's lines, each line cleared", () => {
  const out: string[] = [];
  const display = progressDisplay({ write: (t) => out.push(t), columns: 100, rows: 30 }, () => at);
  display.update({ type: "started", runId: "r", at, job: "j" });
  assert.equal(out.length, 0, "nothing before the plan");
  display.update(planned(["a", "b"]));
  assert.equal(out.length, 1);
  const [a, b, rest] = out[0]!.split("\n");
  assert.ok(a!.startsWith(`${CLEAR}a `) && a!.includes("  0%  0 / 10  "), a);
  assert.ok(b!.startsWith(`${CLEAR}b `), b);
  assert.equal(rest, "");
  display.update({
    type: "partition-progress",
    runId: "r",
    at,
    topic: "a",
    partition: 0,
    nextOffset: 10n,
    stopOffset: 10n,
    messages: 10,
    messagesRead: 10,
  });
  display.done();
  const last = out.at(-1)!;
  assert.ok(last.startsWith(`\u001b[2A${CLEAR}a `), JSON.stringify(last));
  assert.match(last, /a .*100% {2}10 \/ 10 {2}read, committing/);
  const frames = out.length;
  display.done();
  display.update(planned(["a"]));
  assert.equal(out.length, frames, "nothing after done");
});

test("narrow and short terminals: lines cut to the width, extra topics summarised", () => {
  const out: string[] = [];
  const display = progressDisplay({ write: (t) => out.push(t), columns: 41, rows: 6 }, () => at);
  display.update(planned(["t1", "t2", "t3", "t4", "t5", "t6", "t7"]));
  display.done();
  const lines = out[0]!
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => l.replace(CLEAR, ""));
  assert.equal(lines.length, 4);
  assert.equal(lines.at(-1), "… and 4 more topic(s)");
  for (const l of lines) assert.ok([...l].length <= 40, l);
});

test("only on a terminal, and not TERM=dumb", () => {
  assert.equal(wantsProgress({ isTTY: true }, {}), true);
  assert.equal(wantsProgress({ isTTY: true }, { TERM: "dumb" }), false);
  assert.equal(wantsProgress({ isTTY: false }, {}), false);
  assert.equal(wantsProgress({}, {}), false);
});
