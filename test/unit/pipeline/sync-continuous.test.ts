// A continuous sync (schedule: continuous): after its planned read it reads on as messages come,
// commits a round once the commit: interval has passed since the round's first message, never
// commits nothing, acknowledges the group after each commit, and stops at its time or at its
// signal (SIGTERM in floe run) with what it read committed. Each commit reports the freshness of
// its messages.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Job } from "#src/job/job.ts";
import type { SyncEvent, TableCommitted } from "#src/pipeline/events.ts";
import { OFFSETS_SUMMARY_KEY } from "#src/pipeline/snapshot-offsets.ts";
import { type SyncFixture, syncFixture } from "./fixture.ts";
import { tableSnapshots } from "./table-rows.ts";

let f: SyncFixture;

before(async () => {
  f = await syncFixture({
    streams: { live: { mode: "append" }, quiet: { mode: "append" }, held: { mode: "append" } },
  });
  f.source.createTopic("live", 2).createTopic("quiet").createTopic("held");
});

after(() => f.close());

const withInterval = (intervalMs: number): Job => ({ ...f.job, commit: { ...f.job.commit, intervalMs } });

const rounds = (events: SyncEvent[], topic: string) =>
  events.filter((e): e is TableCommitted => e.type === "table-committed" && e.report.topic === topic);

/** Resolves once `done()` holds; fails after 20 s (a commit that never comes). */
function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  return new Promise((resolve, reject) => {
    const poll = () => {
      if (done()) resolve();
      else if (Date.now() > deadline) reject(new Error(`still waiting for ${done}`));
      else setTimeout(poll, 5);
    };
    poll();
  });
}

const absorbed = async (table: string) =>
  (await tableSnapshots(f.catalog, "unit_topics", table)).map(
    (s) => JSON.parse(s.summary[OFFSETS_SUMMARY_KEY]!)[table],
  );

test("reads what comes after its plan: a commit per interval, each with its offsets, the group acknowledged after each", async () => {
  const job = withInterval(300);
  const hourAgo = BigInt(Date.now() - 3_600_000);
  f.source.produce(
    "live",
    Array.from({ length: 10 }, (_, i) => ({ value: { i }, partition: i % 2, timestamp: hourAgo })),
  );
  const events: SyncEvent[] = [];
  const groupAtRound: (bigint | undefined)[] = [];
  const stop = new AbortController();
  const running = f.sync(
    {
      continuous: { until: Date.now() + 60_000 },
      signal: stop.signal,
      onEvent: (event) => {
        events.push(event);
        if (event.type === "table-committed" && event.report.topic === "live") {
          groupAtRound.push(f.source.groups.get(job.consumerGroup)?.get("live")?.get(0));
        }
      },
    },
    job,
  );
  // The planned read's round commits once its interval is up, though nothing more comes.
  await until(() => rounds(events, "live").length === 1);
  f.source.produce(
    "live",
    Array.from({ length: 6 }, (_, i) => ({ value: { i: 10 + i }, partition: i % 2, timestamp: BigInt(Date.now()) })),
  );
  await until(() => rounds(events, "live").length === 2);
  f.source.produce("live", [{ value: { i: 16 }, partition: 0, timestamp: BigInt(Date.now()) }]);
  await until(() => rounds(events, "live").length === 3);
  await new Promise((resolve) => setTimeout(resolve, 800));
  assert.equal(rounds(events, "live").length, 3, "no commit of nothing while no message comes");
  stop.abort();
  const { report } = await running;

  assert.equal(report.status, "complete");
  assert.equal(report.messagesRead, 17);
  assert.deepEqual(
    rounds(events, "live").map((e) => e.report.messagesRead),
    [10, 6, 1],
  );
  assert.deepEqual(await absorbed("live"), [
    { 0: "5", 1: "5" },
    { 0: "8", 1: "8" },
    { 0: "9", 1: "8" },
  ]);
  assert.equal((await f.rows("live")).length, 17);
  // A round's commit acknowledges the group before the next round is read.
  assert.deepEqual(groupAtRound, [undefined, 5n, 8n]);
  assert.equal(f.source.groups.get(job.consumerGroup)?.get("live")?.get(0), 9n);
  assert.deepEqual(rounds(events, "quiet"), [], "a topic with nothing to read commits nothing");

  const [old, fresh] = rounds(events, "live").map((e) => e.report.freshness!);
  assert.ok(old!.p50Ms >= 3_600_000, `an hour-old message is an hour stale: ${old!.p50Ms}`);
  assert.ok(fresh!.maxMs < 3_600_000, `a later round is measured from its own messages: ${fresh!.maxMs}`);
});

test("ends at its time with nothing read: no snapshot, no table", async () => {
  const started = Date.now();
  const { report } = await f.sync({ continuous: { until: started + 400 } }, withInterval(300));
  assert.equal(report.status, "complete");
  assert.equal(report.messagesRead, 0);
  assert.ok(Date.now() - started >= 400, "it read on until its time");
  assert.equal(await f.catalog.loadTable({ namespace: ["unit_topics"], name: "quiet" }).catch(() => null), null);
});

test("stopped while its round waits for the interval: what it read is committed at once", async () => {
  const events: SyncEvent[] = [];
  const stop = new AbortController();
  const running = f.sync(
    { continuous: { until: Date.now() + 60_000 }, signal: stop.signal, onEvent: (e) => events.push(e) },
    withInterval(60_000),
  );
  await until(() => events.some((e) => e.type === "planned"));
  f.source.produce(
    "held",
    Array.from({ length: 5 }, (_, i) => ({ value: { i } })),
  );
  await until(() => events.some((e) => e.type === "partition-progress" && e.topic === "held"));
  assert.equal(rounds(events, "held").length, 0, "the interval is a minute: nothing committed yet");
  stop.abort();
  const { report } = await running;
  assert.equal(report.status, "complete");
  assert.deepEqual(await absorbed("held"), [{ 0: "5" }]);
  assert.equal(f.source.groups.get(f.job.consumerGroup)?.get("held")?.get(0), 5n);
});
