// The UI's pure logic (ui/src/logic.ts): issue paths as field labels, run badges, the plots'
// time range and ticks, and the job editor's stream keys (an unchanged stream saves unchanged).
import assert from "node:assert/strict";
import { test } from "node:test";
import { BINDING_DEFAULTS } from "#src/job/job.ts";
import {
  countLabel,
  fmtSeconds,
  humanPath,
  newStream,
  overallProgress,
  runStatus,
  streamBody,
  streamOf as streamOfStored,
  timeLabel,
  timeRange,
} from "../../../ui/src/logic.ts";

test("an issue's path reads as a label, with no JSON path left", () => {
  assert.equal(humanPath("kafka.bootstrap_servers.0"), "Bootstrap servers (entry 1)");
  assert.equal(humanPath("name"), "Name");
  assert.equal(humanPath("streams.orders.dedup_keys"), "Stream orders: Dedup keys");
  assert.equal(humanPath("streams.orders"), "Stream orders");
  assert.equal(humanPath("iceberg.catalog.uri"), "URI");
  assert.equal(humanPath("kafka.schema_registry.url"), "URL");
  assert.equal(humanPath(""), "");
});

test("a run's badge: dead letters are a warning, a cancelled run is cancelled", () => {
  assert.deepEqual(runStatus({ status: "complete", cancelled: false, deadLetters: 0 }), {
    label: "complete",
    tone: "complete",
  });
  const dlq = runStatus({ status: "complete", cancelled: false, deadLetters: 3 });
  assert.equal(dlq.label, "complete, 3 dead letters");
  assert.equal(dlq.tone, "warn");
  assert.equal(runStatus({ status: "complete", cancelled: true, deadLetters: 0 }).label, "cancelled");
  assert.equal(runStatus({ status: "partial", cancelled: true, deadLetters: 0 }).label, "cancelled");
  assert.equal(runStatus({ status: "running", cancelled: true, deadLetters: 0 }).label, "running");
  assert.equal(runStatus({ status: "failed", cancelled: false, deadLetters: 0 }).tone, "failed");
});

test("the plots' x range is about an hour around one point or a few seconds of points, and wider points keep theirs", () => {
  const [a, b] = timeRange([1_800_000_000]);
  assert.equal(b - a, 3600);
  const [c, d] = timeRange([1_800_000_000, 1_800_000_002]);
  assert.ok(d - c >= 3600 && d - c < 3700);
  const [e, f] = timeRange([1_800_000_000, 1_800_086_400]);
  assert.ok(e < 1_800_000_000 && f > 1_800_086_400 && f - e < 86_400 * 1.2);
  assert.equal(timeLabel(1_800_000_000, 3600), "08:00");
  assert.equal(timeLabel(1_800_000_000, 86_400 * 3), "01-15 08:00");
  assert.deepEqual([0, 5, 1234, 12_345, 2_500_000].map(countLabel), ["0", "5", "1234", "12.3k", "2.5M"]);
});

test("a stored stream saves with only its own keys, and what changed", () => {
  // The defaults the server serves the editor (GET /api/choices): the job file's own.
  const streamOf = (v: Record<string, unknown>) => streamOfStored(v, BINDING_DEFAULTS);
  const NEW_STREAM = newStream(BINDING_DEFAULTS);
  const stored = { mode: "upsert", dedup_keys: ["id"], table: "people" };
  assert.deepEqual(streamBody(streamOf(stored)), stored, "unchanged: the same keys, no default added");
  assert.deepEqual(streamBody({ ...streamOf(stored), dedup: ["id", "name"], onError: "skip" }), {
    mode: "upsert",
    dedup_keys: ["id", "name"],
    table: "people",
    on_error: "skip",
  });
  const withDefaults = { mode: "append", on_error: "dlq", format: "json" };
  assert.deepEqual(streamBody(streamOf(withDefaults)), withDefaults, "a default the user wrote stays written");
  assert.deepEqual(streamBody({ ...NEW_STREAM, ticked: true }), { mode: "append", on_error: "dlq" });
  assert.deepEqual(streamBody({ ...NEW_STREAM, ticked: true, format: "avro", keyFormat: "avro" }), {
    mode: "append",
    on_error: "dlq",
    format: "avro",
    key_format: "avro",
  });
});

test("a running run's overall progress: read of planned over every partition, the rate and the time left", () => {
  const progress = [
    { nextOffset: "150", stopOffset: "300", messages: 50 }, // started at 100: 50 of 200
    { nextOffset: "40", stopOffset: "40", messages: 40 }, // started at 0: done
  ];
  const o = overallProgress(progress, 0, 10_000);
  assert.deepEqual([o.read, o.planned, o.percent, o.perSecond, o.etaSeconds], [90, 240, 37.5, 9, 150 / 9]);
  assert.equal(overallProgress([{ nextOffset: "5", stopOffset: "5", messages: 0 }], 0, 0).etaSeconds, 0);
  assert.equal(overallProgress([{ nextOffset: "0", stopOffset: "5", messages: 0 }], 0, 1000).etaSeconds, undefined);
  assert.deepEqual([42, 200, 7500].map(fmtSeconds), ["42 s", "3 min 20 s", "2 h 5 min"]);
});
