// The retention warning (time since the last successful run against the shortest retention.ms)
// and the alerts a run gives, as the Slack-compatible JSON posted.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { Secret } from "#src/job/secret.ts";
import { postAlert, runAlerts, slackPayload } from "#src/runtime/alerts.ts";
import { retentionWarning, shortestRetention } from "#src/runtime/retention.ts";
import type { RunRecord } from "#src/state/run-store.ts";

const HOUR = 3_600_000;
const topics = [
  { topic: "a", retentionMs: 10 * HOUR },
  { topic: "b", retentionMs: null },
  { topic: "c", retentionMs: 2 * HOUR },
];

test("the shortest limited retention; none when all are unlimited", () => {
  assert.deepEqual(shortestRetention(topics), { topic: "c", retentionMs: 2 * HOUR });
  assert.equal(shortestRetention([{ topic: "b", retentionMs: null }]), undefined);
});

test("a warning once the last success is older than 80% of the shortest retention", () => {
  const now = 100 * HOUR;
  assert.equal(retentionWarning(now - 1.5 * HOUR, undefined, topics, now), undefined);
  assert.match(
    retentionWarning(now - 1.7 * HOUR, undefined, topics, now)!,
    /^the last successful run started 1.7h ago, near the retention of topic c \(retention\.ms 7200000, 2h\)/,
  );
  assert.match(
    retentionWarning(now - 3 * HOUR, undefined, topics, now)!,
    /past the retention .* may have expired unread/,
  );
  assert.match(retentionWarning(undefined, now - 5 * HOUR, topics, now)!, /^no run has succeeded since the first one/);
  assert.equal(retentionWarning(undefined, undefined, topics, now), undefined);
  assert.equal(retentionWarning(0, undefined, [{ topic: "b", retentionMs: null }], now), undefined);
});

const record = (over: Partial<RunRecord>): RunRecord => ({
  runId: "r1",
  job: "j",
  trigger: "schedule",
  startedAt: 0,
  endedAt: 1,
  durationMs: 1,
  outcome: "complete",
  messages: 1,
  bytes: 1,
  deadLetters: 0,
  tables: [],
  error: null,
  pid: 1,
  host: "h",
  ...over,
});

test("alerts: a failed run with its kind; dead letters per table; none for a clean run", () => {
  assert.deepEqual(runAlerts(record({})), []);
  const [failed] = runAlerts(
    record({ outcome: "failed", error: { kind: "auth", retryable: false, name: "E", message: "refused" } }),
  );
  assert.deepEqual(slackPayload(failed!), {
    text: "floe: run r1 of job j failed (auth): refused",
    floe: { kind: "run-failed", job: "j", runId: "r1" },
  });
  const table = { table: "ns.orders", deadLetters: 3 } as RunRecord["tables"][number];
  const [dead] = runAlerts(record({ deadLetters: 3, tables: [table] }));
  assert.equal(dead!.kind, "dead-letters");
  assert.equal(dead!.text, "floe: run r1 of job j wrote 3 dead letters: 3 into ns.orders__dlq");
});

test("an alert is not posted again where the webhook's redirect points", async () => {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? "");
    if (req.url === "/hook") res.writeHead(307, { location: "/elsewhere" }).end();
    else res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    await assert.rejects(postAlert(new Secret(url), { kind: "run-failed", job: "j", text: "t" }), /answered 307/);
    assert.deepEqual(paths, ["/hook"]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
