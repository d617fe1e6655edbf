// Where a job's state lives. A state root holds the run store of all its jobs (floe.db) and one
// folder per job (`<root>/<job>`: the job's lock and its upsert key indexes). The root is
// `--state-dir` when given, else `.floe` next to the job file, so one job file's state is
// `.floe/<job>` beside it and `floe serve --state-dir DIR` keeps many jobs under one DIR.
import { dirname, join, resolve } from "node:path";
import { RUN_STORE_FILE } from "../state/run-store.ts";

/** The state root of a job file (or of the current folder when none is given), `--state-dir` winning. */
export function stateRoot(stateDirFlag: string | undefined, jobFile?: string): string {
  if (stateDirFlag !== undefined) return resolve(stateDirFlag);
  return resolve(jobFile === undefined ? "." : dirname(jobFile), ".floe");
}

export function jobStateDir(root: string, job: string): string {
  return join(root, job);
}

export function runStorePath(root: string): string {
  return join(root, RUN_STORE_FILE);
}
