// What the routes that reach Kafka or a catalog share: the job's hosts checked against the
// outbound policy first, and the inspection calls loaded when first used, so that `floe serve`
// starts without the engine's modules.
import type { Job } from "../../job/job.ts";
import type { OutboundPolicy } from "../../pipeline/outbound-policy.ts";

/** The job a connection is made for, its hosts checked against the outbound policy first. */
export async function checked(policy: OutboundPolicy, job: Job): Promise<Job> {
  await policy.checkJob(job);
  return job;
}

export const inspect = () => import("../sync-calls.ts");
