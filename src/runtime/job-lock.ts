// One sync of a job at a time on a machine: a lock in the job's state directory. It is an
// exclusive transaction held on a small SQLite file for as long as the sync runs, so the
// operating system releases it when the holder exits in any way (a SIGKILL included): there is
// no stale lock to clean up, and nothing to guess from a pid. Beside it, a JSON file names the
// holder (pid, host, command, start), for the message the next process prints.
//
// The lock spares a second process the work it would lose; it is not what keeps a table right.
// A copy of the job with another state directory, or on another machine, does not see it: the
// offset check on every commit (pipeline/offset-claim.ts) is what guarantees that.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { isBusy, openSqlite } from "../lib/sqlite.ts";
import { StateDirError } from "../state/state-dir-error.ts";

export interface LockHolder {
  pid: number;
  host: string;
  command: string;
  since: string;
}

/** Another process holds the job: waiting for it or running later can help. */
export class JobBusyError extends Error {
  override name = "JobBusyError";
  readonly retryable = true;
  readonly holder: LockHolder | undefined;

  constructor(job: string, holder: LockHolder | undefined, doing = "being synced") {
    super(
      holder
        ? `job ${job} is ${doing} by process ${holder.pid} on ${holder.host} since ${holder.since} (${holder.command}); wait for it to finish, or pass --wait`
        : `job ${job} is ${doing} by another process; wait for it to finish, or pass --wait`,
    );
    this.holder = holder;
  }
}

export interface JobLock {
  release(): void;
}

export interface LockOptions {
  /** How long to wait for the holder to finish, in ms; 0 (the default) fails at once. */
  waitMs?: number;
  signal?: AbortSignal;
  /** What the holder is doing, for the message of the next process. */
  command?: string;
  /**
   * Which lock: "sync" (the default) is held for one sync; "run" is held by `floe run` for as
   * long as it schedules the job, so that two schedulers of one job never run side by side.
   */
  lock?: "sync" | "run";
}

const POLL_MS = 200;

/** Takes the lock of `job` in `stateDir`, or throws JobBusyError naming the process that has it. */
export async function acquireJobLock(stateDir: string, job: string, options: LockOptions = {}): Promise<JobLock> {
  try {
    mkdirSync(stateDir, { recursive: true });
  } catch (error) {
    throw new StateDirError(
      `cannot create the state directory ${stateDir} (the job's lock and upsert key indexes live there): ${(error as Error).message}; make it writable or pass --state-dir`,
    );
  }
  const name = options.lock ?? "sync";
  const lockPath = join(stateDir, `${name}.lock`);
  const holderPath = join(stateDir, `${name}.lock.json`);
  const doing = name === "run" ? "scheduled" : "being synced";
  const deadline = Date.now() + (options.waitMs ?? 0);
  for (;;) {
    // No busy timeout: a held lock is polled here, for the deadline and the signal. No WAL: the
    // file holds no data, only the lock, and the rollback journal's locks are all it needs.
    const db = openSqlite(lockPath, { busyTimeoutMs: 0, wal: false });
    try {
      db.exec("BEGIN EXCLUSIVE");
    } catch (error) {
      db.close();
      if (!isBusy(error)) throw error;
      if (Date.now() >= deadline || options.signal?.aborted) throw new JobBusyError(job, readHolder(holderPath), doing);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      continue;
    }
    const holder: LockHolder = {
      pid: process.pid,
      host: hostname(),
      command: options.command ?? process.argv.slice(1).join(" "),
      since: new Date().toISOString(),
    };
    writeFileSync(holderPath, `${JSON.stringify(holder)}\n`);
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        rmSync(holderPath, { force: true });
        db.exec("ROLLBACK");
        db.close();
      },
    };
  }
}

function readHolder(path: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as LockHolder;
  } catch {
    return undefined;
  }
}
