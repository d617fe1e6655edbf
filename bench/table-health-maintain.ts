// The maintenance the table-health bench runs after each sync, by policy: `none` runs nothing;
// `default` runs what `floe run` runs after a sync that did not fail: a pass of the job's
// `maintenance:` policy (the defaults, as the bench's job file sets none) when it is due by the
// run store's last pass, recorded in that store.
import { join } from "node:path";
import pino from "pino";
import type { Job } from "../src/job/job.ts";
import { maintenanceDue, recordMaintenance } from "../src/runtime/recorded-maintenance.ts";
import { RunStore } from "../src/state/run-store.ts";

export type MaintenancePolicyName = "none" | "default";

const stores = new Map<string, RunStore>();
const logger = pino({ level: "silent" });

/** Runs a pass if one is due; resolves to whether it ran. */
export async function maintainAfterSync(policy: MaintenancePolicyName, job: Job, stateDir: string): Promise<boolean> {
  if (policy === "none") return false;
  let store = stores.get(stateDir);
  if (!store) {
    store = RunStore.open(join(stateDir, "floe.db"));
    stores.set(stateDir, store);
  }
  if (!maintenanceDue(job, store, Date.now())) return false;
  const pass = await recordMaintenance(job, { store, logger, trigger: "schedule" });
  if (pass.record.outcome !== "complete") {
    throw new Error(`maintenance pass ${pass.record.outcome}: ${pass.record.error?.message ?? ""}`);
  }
  return true;
}
