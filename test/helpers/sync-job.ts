// One sync of a job as `floe sync` runs it: its cluster and catalog opened for the sync and
// closed after it, for the integration tests that drive runSync against the real services.
import type { Job } from "#src/job/job.ts";
import { withConnections } from "#src/pipeline/connect.ts";
import { runSync, type SyncOptions, type SyncReport } from "#src/pipeline/sync.ts";

export function syncJob(job: Job, options: SyncOptions): Promise<SyncReport> {
  return withConnections(job, (connections) => runSync(job, connections, options));
}
