// The consumer group as offset storage. floe never joins the group: it reads with explicit offsets
// and commits as an admin would (OffsetCommit with generation -1 and no member id). Tools that show
// lag per group (kafka-consumer-groups.sh, Burrow, UIs) then see floe's progress.
//
// The broker accepts such a commit only while the group has no member. A member would be another
// process consuming with the same group id, whose commits would fight ours, so floe refuses that
// with an error naming the group and its members, rather than committing around it. Describing
// the group (without joining it) also gives each member's assignment and the last rebalance a floe
// leader noted in it (rebalance-note.ts), for floe status and the UI.
import { ConnectionPool, decodeConsumerProtocolAssignment, describeGroupsV5 } from "@platformatic/kafka";
import type { KafkaCluster } from "./connection.ts";
import { listTopics } from "./discover.ts";
import { describeCause, hasProtocolError, KafkaError, protocolErrorId } from "./errors.ts";
import { findGroupCoordinator, poolOptions } from "./group-member.ts";
import { decodeRebalanceNote, type RebalanceNote } from "./rebalance-note.ts";

/** Offsets per topic and partition; for committed offsets, the next offset to read. */
export type TopicPartitionOffsets = Map<string, Map<number, bigint>>;

export interface TopicPartitions {
  topic: string;
  partitions: number;
}

export interface GroupMember {
  memberId: string;
  clientId: string;
  host: string;
  /** The partitions the group assigned the member, by topic (consumer protocol members; empty while a rebalance assigns none). */
  assignment: Map<string, number[]>;
  /** The last rebalance as the group's leader noted it in the assignment (a floe member's; rebalance-note.ts). */
  rebalance?: RebalanceNote;
}

export interface GroupActivity {
  group: string;
  /** False when the broker knows no group of that name (nothing committed yet). */
  exists: boolean;
  /** Broker's group state: Empty, Stable, PreparingRebalance, Assigning, Reconciling, ... */
  state: string;
  /** "classic" or "consumer" (KIP-848 protocol); undefined when the group does not exist. */
  type: string | undefined;
  /** Members of a classic group; a "consumer" group's members are not listed (no admin API here), only its state. */
  members: GroupMember[];
}

/** The group has active members: another process consumes with this group id. */
export class ConsumerGroupActiveError extends KafkaError {
  override name = "ConsumerGroupActiveError";
  readonly group: string;
  readonly state: string;
  readonly members: readonly GroupMember[];

  constructor(activity: GroupActivity, options?: ErrorOptions) {
    const who = activity.members.length
      ? `: ${activity.members.map((m) => `${m.clientId} on ${m.host} (${m.memberId})`).join(", ")}`
      : "";
    super(
      `consumer group ${activity.group} has active members (state ${activity.state})${who}. ` +
        "floe uses the group only to store its offsets and cannot commit while another consumer is in it: " +
        "stop that consumer or give this job its own consumer_group",
      options,
    );
    this.group = activity.group;
    this.state = activity.state;
    this.members = activity.members;
  }
}

/**
 * Topics deleted between the read and the group commit: the broker refuses offsets for a
 * partition it no longer hosts. The other topics' offsets were committed; the deleted ones' have
 * nowhere to go, and nothing is lost by that (a topic created again under the name starts anew).
 */
export class GroupCommitTopicsGoneError extends KafkaError {
  override name = "GroupCommitTopicsGoneError";
  readonly group: string;
  readonly topics: readonly string[];

  constructor(group: string, topics: readonly string[], options?: ErrorOptions) {
    super(
      `committing the offsets of consumer group ${group}: ${topics.length === 1 ? "topic" : "topics"} ` +
        `${topics.join(", ")} no longer ${topics.length === 1 ? "exists" : "exist"} (deleted since the read?); ` +
        "the offsets of the other topics were committed",
      options,
    );
    this.group = group;
    this.topics = topics;
  }
}

// Answers of OffsetCommit that mean "the group has members and you are not one of them".
const memberErrors = [
  "UNKNOWN_MEMBER_ID",
  "ILLEGAL_GENERATION",
  "REBALANCE_IN_PROGRESS",
  "STALE_MEMBER_EPOCH",
  "FENCED_MEMBER_EPOCH",
];

const idleStates = new Set(["Empty", "Dead", "EMPTY", "DEAD"]);

/** The group's state and members, without joining it. */
export async function describeGroup(cluster: KafkaCluster, group: string): Promise<GroupActivity> {
  const groups = await cluster.run(
    "listing consumer groups",
    (admin) => admin.listGroups({ types: ["classic", "consumer"] }),
    { group },
  );
  const listed = groups.get(group);
  if (!listed) return { group, exists: false, state: "Dead", type: undefined, members: [] };
  const activity: GroupActivity = { group, exists: true, state: listed.state, type: listed.groupType, members: [] };
  // DescribeGroups only knows classic groups; for a KIP-848 group it answers "Dead". Asked of the
  // coordinator directly, not through the admin client, which drops the assignment's user data
  // (where the leader notes the last rebalance).
  if (listed.groupType !== "consumer" && !idleStates.has(listed.state)) {
    const described = await cluster.run(
      `describing consumer group ${group}`,
      async () => {
        const pool = new ConnectionPool(cluster.config.clientId ?? "floe", poolOptions(cluster));
        try {
          const coordinator = await findGroupCoordinator(cluster, pool, group);
          return await describeGroupsV5.api.async(await pool.get(coordinator), [group], false);
        } finally {
          await pool.close().catch(() => {});
        }
      },
      { group },
    );
    for (const member of described.groups.find((g) => g.groupId === group)?.members ?? []) {
      const assignment = new Map<string, number[]>();
      let rebalance: RebalanceNote | undefined;
      // A group of another protocol type (Connect workers, ...) has assignments of another layout.
      const decoded =
        member.memberAssignment.length > 0 && described.groups[0]?.protocolType === "consumer"
          ? (() => {
              try {
                return decodeConsumerProtocolAssignment(member.memberAssignment);
              } catch {
                return undefined;
              }
            })()
          : undefined;
      if (decoded) {
        for (const { topic, partitions } of decoded.assignedPartitions) {
          assignment.set(
            topic,
            [...partitions].sort((a, b) => a - b),
          );
        }
        rebalance = decodeRebalanceNote(decoded.userData);
      }
      activity.members.push({
        memberId: member.memberId,
        clientId: member.clientId,
        // The broker says the address as Java prints an InetAddress: "/127.0.0.1".
        host: member.clientHost.replace(/^\//, ""),
        assignment,
        ...(rebalance ? { rebalance } : {}),
      });
    }
  }
  return activity;
}

/**
 * Commits the offsets (next offset to read, per partition) for the group, without joining it.
 * Partitions not in `offsets` keep their committed offset. Throws ConsumerGroupActiveError when
 * the group has members.
 */
export async function commitGroupOffsets(
  cluster: KafkaCluster,
  group: string,
  offsets: TopicPartitionOffsets,
): Promise<void> {
  const topics = [...offsets]
    .filter(([, partitions]) => partitions.size > 0)
    .map(([name, partitions]) => ({
      name,
      partitionOffsets: [...partitions].map(([partition, offset]) => ({ partition, offset })),
    }));
  if (topics.length === 0) return;
  const what = `committing the offsets of consumer group ${group}`;
  try {
    await cluster.bounded(what, () => cluster.admin.alterConsumerGroupOffsets({ groupId: group, topics }));
  } catch (error) {
    if (error instanceof KafkaError) throw error;
    if (hasProtocolError(error, "UNKNOWN_TOPIC_OR_PARTITION", "UNKNOWN_TOPIC_ID")) {
      // The answer is per partition, but the library fails the whole request on any of them:
      // commit again without the topics that are gone, so the others surely land.
      const existing = new Set(await listTopics(cluster));
      const gone = topics.filter((t) => !existing.has(t.name)).map((t) => t.name);
      if (gone.length > 0) {
        const kept = new Map([...offsets].filter(([name]) => existing.has(name)));
        await commitGroupOffsets(cluster, group, kept);
        throw new GroupCommitTopicsGoneError(group, gone, { cause: error });
      }
    }
    if (hasProtocolError(error, ...memberErrors)) {
      const activity = await describeGroup(cluster, group).catch(
        (): GroupActivity => ({
          group,
          exists: true,
          state: protocolErrorId(error) ?? "unknown",
          type: undefined,
          members: [],
        }),
      );
      throw new ConsumerGroupActiveError(activity, { cause: error });
    }
    const refused = cluster.authorizationError(what, error, { group, topics: topics.map((t) => t.name) });
    if (refused) throw refused;
    throw (
      cluster.connectionError(error) ??
      new KafkaError(
        `committing the offsets of consumer group ${group} failed: ${cluster.scrub(describeCause(error))}`,
        {
          cause: error,
        },
      )
    );
  }
}

/**
 * The group's committed offsets (next offset to read), read without joining the group: for the
 * partitions of `topics`, or for every topic the group has offsets for when `topics` is omitted.
 * Partitions without a committed offset are absent.
 */
export async function readGroupOffsets(
  cluster: KafkaCluster,
  group: string,
  topics?: readonly TopicPartitions[],
): Promise<TopicPartitionOffsets> {
  const request = topics
    ? {
        groupId: group,
        topics: topics.map(({ topic, partitions }) => ({
          name: topic,
          partitionIndexes: Array.from({ length: partitions }, (_, i) => i),
        })),
      }
    : group;
  const groups = await cluster.run(
    `reading the committed offsets of consumer group ${group}`,
    (admin) => admin.listConsumerGroupOffsets({ groups: [request] }),
    { group, topics: topics?.map((t) => t.topic) ?? [] },
  );
  const offsets: TopicPartitionOffsets = new Map();
  for (const { topics: listed } of groups) {
    for (const { name, partitions } of listed) {
      for (const { partitionIndex, committedOffset } of partitions) {
        // -1 is the broker's "no committed offset".
        if (committedOffset < 0n) continue;
        let byPartition = offsets.get(name);
        if (!byPartition) {
          byPartition = new Map();
          offsets.set(name, byPartition);
        }
        byPartition.set(partitionIndex, committedOffset);
      }
    }
  }
  return offsets;
}
