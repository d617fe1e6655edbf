// When `floe run` starts a job's next run. Normally at the schedule's next tick. After a
// failure the error model calls retryable (a connection, a commit conflict, another sync of the
// job), it retries sooner, after a backoff that doubles with each failure in a row (base,
// 2*base, 4*base, ... at most max), whenever that comes before the next tick. A failure that is
// not retryable (a bad job file, a bad message with on_error: fail) waits for the next tick:
// running it again unchanged would fail again. A continuous job has no tick to wait for: its next
// run starts at once after one that landed, and after any failure with the backoff, so that a
// failure that repeats never turns into a loop of runs.
import type { Schedule } from "../job/schedule.ts";
import type { RunTrigger } from "../state/run-store.ts";

export interface Backoff {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { baseMs: 5_000, maxMs: 300_000 };

export interface LastRun {
  /** Failures in a row so far, this one included; 0 after a run that landed. */
  failures: number;
  retryable: boolean;
}

export function backoffDelay(failures: number, backoff: Backoff): number {
  return Math.min(backoff.baseMs * 2 ** Math.max(0, failures - 1), backoff.maxMs);
}

export function nextAttempt(
  schedule: Schedule,
  now: number,
  last: LastRun,
  backoff: Backoff = DEFAULT_BACKOFF,
): { at: number; trigger: RunTrigger } {
  if (schedule.continuous) {
    return last.failures === 0
      ? { at: now, trigger: "schedule" }
      : { at: now + backoffDelay(last.failures, backoff), trigger: "retry" };
  }
  const tick = schedule.next(now);
  if (last.failures === 0 || !last.retryable) return { at: tick, trigger: "schedule" };
  const retryAt = now + backoffDelay(last.failures, backoff);
  return retryAt < tick ? { at: retryAt, trigger: "retry" } : { at: tick, trigger: "schedule" };
}
