// What the tests of `floe run` as a process share: waiting for a condition with a deadline, the
// runs the run store holds of a job, and a free port on 127.0.0.1 for its metrics.
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { type RunRecord, RunStore } from "#src/state/run-store.ts";

/** Polls `condition` every `pollMs` until it holds; fails naming `what` after `timeoutMs`. */
export async function until(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 180_000,
  pollMs = 200,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** The runs of `job` in the run store at `storePath`, oldest first; none while it does not exist. */
export function runsOf(storePath: string, job: string): RunRecord[] {
  if (!existsSync(storePath)) return [];
  const store = RunStore.open(storePath);
  try {
    return store.runs(job).reverse();
  } finally {
    store.close();
  }
}

/** A port nothing listens on now, on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
