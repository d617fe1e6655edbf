// The scheduler's own behaviour, without a broker: a job whose cluster refuses connections (a
// closed port on loopback). A "run now" starts a run at once, recorded with trigger manual and
// the failure's kind; the job's state shows the retry it scheduled; a second floe run of the
// same state root is refused naming this one; stop() ends the loop.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { after, test } from "node:test";
import { parseJob } from "#src/job/load-job.ts";
import { JobBusyError } from "#src/runtime/job-lock.ts";
import { createLogger, RunLogSink } from "#src/runtime/logger.ts";
import { type ScheduledJob, Scheduler } from "#src/runtime/scheduler.ts";
import { RunStore } from "#src/state/run-store.ts";

const dir = mkdtempSync(join(tmpdir(), "floe-scheduler-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("run now, the job's state, the run lock, and stop", async () => {
  const job = parseJob(
    `name: nowhere
source: {kafka: {bootstrap_servers: ["127.0.0.1:1"], topic_pattern: ^t$, connect_timeout: 1s}}
schedule: every 1d
`,
    join(dir, "job.yaml"),
  );
  const store = RunStore.open(join(dir, "floe.db"));
  const sink = new RunLogSink();
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const logger = await createLogger({ level: "info", format: "json", destination: quiet, sink });
  const scheduled: ScheduledJob = { job: { ...job, schedule: job.schedule! }, file: "job.yaml", root: dir, store };
  // A minute of backoff: "every 1d" ticks at midnight UTC, so with an hour of it a run that fails
  // after 23:00 is retried at that tick, not before it.
  const service = new Scheduler([scheduled], { logger, sink, backoff: { baseMs: 60_000, maxMs: 60_000 } });
  await service.start();
  try {
    const other = new Scheduler([scheduled], { logger, sink });
    await assert.rejects(
      other.start(),
      (error: Error) => error instanceof JobBusyError && /is scheduled by process/.test(error.message),
    );
    assert.equal(service.runNow("other-job"), false);
    const [before] = service.jobs();
    assert.ok(before!.nextRun! > Date.now() + 60_000, "the first tick is the schedule's");
    assert.equal(service.runNow("nowhere"), true);
    const deadline = Date.now() + 120_000;
    while (store.runs("nowhere").length === 0 || store.runs("nowhere")[0]!.outcome === "running") {
      assert.ok(Date.now() < deadline, "the run now never ended");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const [run] = store.runs("nowhere");
    assert.equal(run!.trigger, "manual");
    assert.equal(run!.outcome, "failed");
    assert.equal(run!.error?.kind, "connection");
    assert.ok(store.logs(run!.runId).some((l) => l.level === 50 && /run failed \(connection\)/.test(l.msg)));
    while (service.jobs()[0]!.failures === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const [state] = service.jobs();
    assert.equal(state!.runningRunId, null);
    assert.equal(state!.failures, 1);
    assert.equal(state!.nextTrigger, "retry", "a retryable failure is retried before the next day's tick");
  } finally {
    service.stop();
    await service.done();
    store.close();
  }
});
