// The one renderer of aligned columns that every command's terminal output goes through.
import assert from "node:assert/strict";
import { test } from "node:test";
import { reportToText } from "#src/cli/report.ts";
import { runsToText } from "#src/cli/run-format.ts";
import { textTable } from "#src/cli/text-table.ts";
import type { RunRecord } from "#src/state/run-store.ts";

test("a header, a rule as wide as each column, rows; numbers right-aligned, no trailing blanks, an indent on every line", () => {
  assert.deepEqual(
    textTable(
      ["topic", "lag"],
      [
        ["orders", "7"],
        ["customers", "1200"],
      ],
      { right: [1], indent: "  " },
    ),
    ["  topic       lag", "  ---------  ----", "  orders        7", "  customers  1200"],
  );
  // A missing cell is blank, and the last column is not padded out.
  assert.deepEqual(textTable(["a", "b"], [["x"]]), ["a  b", "-  -", "x"]);
});

test("floe history's runs: the run table with each run's commits and error under its row", () => {
  const run = {
    runId: "01a23197-030c-7099-b649-04fdeb2ef4de",
    job: "shop",
    trigger: "schedule",
    startedAt: Date.UTC(2026, 11, 1, 12, 31, 50),
    durationMs: 200,
    outcome: "failed",
    messages: 20,
    bytes: 410,
    deadLetters: 0,
    tables: [],
    error: { kind: "connection", retryable: true, name: "KafkaConnectionError", message: "refused" },
  } as unknown as RunRecord;
  const lines = runsToText([run]).split("\n");
  assert.equal(lines.length, 4);
  assert.match(
    lines[0]!,
    /^run id {32}started {14}duration {2}outcome {2}trigger {3}messages {2}bytes {2}dead letters$/,
  );
  assert.equal(lines[1]!.split("  ").length, 8);
  assert.match(
    lines[2]!,
    /^01a23197-030c-7099-b649-04fdeb2ef4de {2}\d{4}-\d\d-\d\d \d\d:\d\d:50 {5}0\.2 s {2}failed {3}schedule {8}20 {4}410 {13}0$/,
  );
  assert.equal(lines[3], "    error (connection, retryable): refused");
});

test("floe sync's report: table and mode left-aligned, the figures right-aligned under their headers", () => {
  const text = reportToText({
    tables: [
      {
        table: "shop_topics.orders",
        topic: "orders",
        mode: "append",
        messagesRead: 20,
        bytesRead: 810,
        dataFilesAdded: 1,
        deletionVectorsAdded: 0,
        recordsAdded: 20,
        positionsDeleted: 0,
        deadLetters: 0,
        durationMs: 50.4,
        created: false,
        columnsAdded: [],
        tombstonesIgnored: 0,
        skipped: 0,
      },
    ],
    skippedTopics: [],
    recreatedTopics: [],
    lostMessages: [],
    messagesRead: 20,
    durationMs: 120,
    status: "complete",
  } as never);
  const [header, rule, row] = text.split("\n");
  assert.equal(
    header,
    "table               mode    messages  bytes  data files  DVs  records  deleted  dead letters  ms",
  );
  assert.equal(
    rule,
    "------------------  ------  --------  -----  ----------  ---  -------  -------  ------------  --",
  );
  assert.equal(row, "shop_topics.orders  append        20    810           1    0       20        0             0  50");
});
