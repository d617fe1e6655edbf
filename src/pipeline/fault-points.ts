// Named points of a sync where a test can stop it deterministically, whatever the speed of the
// machine: the moments between two durable steps, where a crash must lose and repeat nothing.
//
//   FLOE_FAULT_AT=<point>[:<n>]   the n-th time (default 1) the sync reaches <point>
//   FLOE_FAULT=crash              the process SIGKILLs itself there, as a power cut would
//   FLOE_FAULT=pause              it creates the file FLOE_FAULT_FILE and waits until that file
//                                 is removed, so the test can act (commit as another writer,
//                                 say) while the sync stands between two steps
//
// Read from the environment once; when unset, reaching a point costs a comparison.
import { existsSync, writeFileSync } from "node:fs";

export const FAULT_POINTS = [
  /** The dead-letter table committed, the topic's own table not yet. */
  "after-dead-letter-commit",
  /** A column added or widened, the data that needed it not yet committed. */
  "after-schema-change",
  /** Data files written (and an upsert's deletes planned), their commit not yet made. */
  "after-data-files",
  /** A table committed, its key index not yet saved. */
  "after-table-commit",
  /** Every table committed, the consumer group not yet. */
  "before-group-commit",
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

interface Fault {
  point: FaultPoint;
  occurrence: number;
  action: "crash" | "pause";
  file: string | undefined;
}

const fault = parseFault(process.env);
let reached = 0;

export async function faultPoint(point: FaultPoint): Promise<void> {
  if (fault === undefined || fault.point !== point || ++reached !== fault.occurrence) return;
  if (fault.action === "crash") process.kill(process.pid, "SIGKILL");
  const file = fault.file!;
  writeFileSync(file, `${process.pid} ${point}\n`);
  while (existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 50));
}

function parseFault(env: NodeJS.ProcessEnv): Fault | undefined {
  const at = env.FLOE_FAULT_AT;
  if (!at) return undefined;
  const [point, n] = at.split(":");
  if (!FAULT_POINTS.includes(point as FaultPoint)) {
    throw new Error(`FLOE_FAULT_AT: unknown point ${point}; known: ${FAULT_POINTS.join(", ")}`);
  }
  const action = env.FLOE_FAULT ?? "crash";
  if (action !== "crash" && action !== "pause") throw new Error(`FLOE_FAULT: expected crash or pause, not ${action}`);
  if (action === "pause" && !env.FLOE_FAULT_FILE) throw new Error("FLOE_FAULT=pause needs FLOE_FAULT_FILE");
  const occurrence = n === undefined ? 1 : Number(n);
  if (!Number.isSafeInteger(occurrence) || occurrence < 1) throw new Error(`FLOE_FAULT_AT: bad occurrence ${n}`);
  return { point: point as FaultPoint, occurrence, action, file: env.FLOE_FAULT_FILE };
}
