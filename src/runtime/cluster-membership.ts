// A job run as one of several replicas (its `cluster:` setting): the process joins the job's
// consumer group for as long as it schedules the job, and each run of the job is a lease of the
// member's current generation (kafka/group-member.ts): it lands only the partitions assigned to
// this member, commits the group's offsets as the member, and stops reading (committing what it
// read) when the group rebalances. The member subscribes to the topics the job selects on the
// cluster now, and names itself by host and pid. Partitions that move are logged, and the
// member id, generation and partition count are metrics.
import { hostname } from "node:os";
import type { Job } from "../job/job.ts";
import { selectTopics } from "../job/topics.ts";
import { KafkaCluster } from "../kafka/connection.ts";
import { listTopics } from "../kafka/discover.ts";
import { describePartitions, GroupMember, type MembershipEvent } from "../kafka/group-member.ts";
import { kafkaConnectionOptions } from "../pipeline/connect.ts";
import type { Logger } from "./logger.ts";
import type { ServiceMetrics } from "./metrics.ts";

export interface JobMembership {
  readonly member: GroupMember;
  /** Leaves the group and closes the member's connections. */
  close(): Promise<void>;
}

/** Connects to the job's cluster and prepares its member; it joins at its first lease. */
export async function openMembership(
  job: Job & { cluster: NonNullable<Job["cluster"]> },
  log: Logger,
  stopping: AbortSignal,
  metrics?: ServiceMetrics,
): Promise<JobMembership> {
  const cluster = await KafkaCluster.connect(kafkaConnectionOptions(job.source));
  const member = new GroupMember(cluster, {
    group: job.consumerGroup,
    topics: async () => selectTopics(job, await listTopics(cluster)).selected.map((b) => b.topic),
    ...job.cluster,
    clientId: `floe-${hostname()}-${process.pid}`,
    onEvent: (event) => {
      logMembership(log, job.consumerGroup, event);
      if (event.type === "assigned") {
        const count = [...event.partitions.values()].reduce((n, ps) => n + ps.length, 0);
        metrics?.setMembership(job.name, event.memberId, event.generationId, count);
      }
    },
    stopping,
  });
  return {
    member,
    async close() {
      try {
        await member.stop();
      } finally {
        await cluster.close().catch(() => {});
      }
    },
  };
}

function logMembership(log: Logger, group: string, event: MembershipEvent): void {
  switch (event.type) {
    case "assigned": {
      const moved = [
        event.added.size > 0 ? `gained ${describePartitions(event.added)}` : "",
        event.revoked.size > 0 ? `gave up ${describePartitions(event.revoked)}` : "",
      ].filter(Boolean);
      log.info(
        {
          memberId: event.memberId,
          generation: event.generationId,
          leader: event.leader,
          ...(event.leader ? { members: event.members } : {}),
          partitions: describePartitions(event.partitions),
        },
        `cluster: member of ${group} (generation ${event.generationId}${event.leader ? `, leader of ${event.members} members` : ""}): ` +
          `assigned ${describePartitions(event.partitions)}${moved.length > 0 ? `; ${moved.join(", ")}` : ""}`,
      );
      return;
    }
    case "rebalancing":
      log.info(
        { memberId: event.memberId, generation: event.generationId },
        `cluster: ${event.reason}: committing what was read, then rejoining ${group}`,
      );
      return;
    case "left":
      log.info({ memberId: event.memberId }, `cluster: left consumer group ${group}`);
      return;
  }
}
