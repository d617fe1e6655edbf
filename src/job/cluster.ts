// A job file's `cluster:` setting: several `floe run` processes of the same job
// share its partitions as members of the job's consumer group. Without it a process lands every
// partition and never joins the group (it only stores offsets there), as before.
//   session_timeout      how long the group waits for a member's heartbeat before it gives the
//                        member's partitions to the others (default 30s; the broker bounds it by
//                        group.min/max.session.timeout.ms, 6s and 30m by default)
//   heartbeat_interval   how often a member tells the group it is alive (default 3s; at most a
//                        third of the session timeout)
//   rebalance_timeout    how long a rebalance waits for a member to commit what it read of the
//                        partitions it gives up and rejoin (default 60s)
import { z } from "zod";
import { duration } from "./schema-parts.ts";

export interface ClusterSettings {
  readonly sessionTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly rebalanceTimeoutMs: number;
}

export const clusterSchema = z
  .strictObject({
    session_timeout: duration(
      "30s",
      "How long the group waits for a member's heartbeat before it moves the member's partitions to the others.",
    ),
    heartbeat_interval: duration(
      "3s",
      "How often a member tells the group it is alive; at most a third of session_timeout.",
    ),
    rebalance_timeout: duration(
      "60s",
      "How long a rebalance waits for a member to commit what it read of the partitions it gives up, and rejoin.",
    ),
  })
  .superRefine((c, ctx) => {
    if (c.heartbeat_interval * 3 > c.session_timeout) {
      ctx.addIssue({
        code: "custom",
        path: ["heartbeat_interval"],
        message: `must be at most a third of session_timeout (${c.session_timeout}ms), got ${c.heartbeat_interval}ms`,
      });
    }
  })
  .transform(
    (c): ClusterSettings => ({
      sessionTimeoutMs: c.session_timeout,
      heartbeatIntervalMs: c.heartbeat_interval,
      rebalanceTimeoutMs: c.rebalance_timeout,
    }),
  )
  .describe(
    "Run this job on several hosts: each `floe run` of it joins the job's consumer group and lands only the partitions the group assigns it (`cluster: {}` for the defaults).",
  );
