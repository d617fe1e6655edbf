// Membership of a job's consumer group (Kafka's classic group protocol, protocol type
// "consumer", eager rebalancing): JoinGroup, SyncGroup (the leader computes the assignment,
// group-assignor.ts, and notes the rebalance in each member's, rebalance-note.ts), Heartbeat
// every heartbeat interval, OffsetCommit as a member (with the generation, so that the broker
// refuses a member of an older generation), LeaveGroup.
//
// Why not the library's Consumer: its group membership rejoins on its own as soon as a heartbeat
// says the group rebalances (and, with the KIP-848 protocol, acknowledges a revocation in the next
// heartbeat), so partitions move while floe still holds messages of them that are read but not in
// Iceberg. Here a rebalance only aborts the current lease's signal: the holder of the lease (a
// sync) stops reading, commits the round it read to its tables and the group, and returns; only
// then does the member send JoinGroup. The broker waits for that (up to the rebalance timeout)
// before it hands the partitions to another member, so the next owner plans from a table
// position that already holds what this member read. A member that dies leaves nothing behind
// but files no snapshot references: the broker notices it after the session timeout and its
// partitions resume at the next owner from the table's position.
//
// What keeps a zombie (a member paused past its session that still thinks it owns partitions)
// harmless is not this file: every table commit claims its offsets against the parent
// (pipeline/offset-claim.ts). The generation here only fences the group's offsets.
//
// The requests are the library's own encoders (apis/), sent over its ConnectionPool, in versions
// every broker since Kafka 3.0 answers (FindCoordinator v4 is the newest of them) and Kafka 4
// still does (KIP-896 removed only far older ones).
import {
  ConnectionPool,
  decodeConsumerProtocolAssignment,
  decodeConsumerProtocolSubscription,
  encodeConsumerProtocolAssignment,
  encodeConsumerProtocolSubscription,
  findCoordinatorV4,
  heartbeatV4,
  joinGroupV7,
  leaveGroupV4,
  offsetCommitV8,
  syncGroupV5,
} from "@platformatic/kafka";
import type { TopicPartitionOffsets } from "./commit-offsets.ts";
import { clientOptions, type KafkaCluster } from "./connection.ts";
import { listTopicPartitions } from "./discover.ts";
import { describeCause, hasProtocolError, KafkaError, walk } from "./errors.ts";
import { type AssignorMember, assignPartitions } from "./group-assignor.ts";
import { difference, encodeRebalanceNote, rebalanceNotes } from "./rebalance-note.ts";

/** Topic -> the partitions this member owns in its generation (ascending). */
export type AssignedPartitions = ReadonlyMap<string, readonly number[]>;

export interface GroupMemberOptions {
  group: string;
  /** The topics the member subscribes to, asked at every join (a topic pattern may select new ones). */
  topics: () => Promise<readonly string[]>;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** How the member names itself to the group (client id): host and process. */
  clientId: string;
  onEvent?: (event: MembershipEvent) => void;
  /** Aborted when the process is stopping: the member no longer rejoins (stop() leaves the group). */
  stopping?: AbortSignal;
}

export type MembershipEvent =
  | {
      type: "assigned";
      memberId: string;
      generationId: number;
      leader: boolean;
      /** The group's member count; known to the leader only (0 for the others). */
      members: number;
      partitions: AssignedPartitions;
      added: AssignedPartitions;
      revoked: AssignedPartitions;
    }
  | { type: "rebalancing"; memberId: string; generationId: number; reason: string }
  | { type: "left"; memberId: string };

/** What a lease holder may do in one generation. */
export interface MemberLease {
  readonly memberId: string;
  readonly generationId: number;
  /** The group's leader in this generation: one member of a generation, chosen by the coordinator. */
  readonly leader: boolean;
  readonly partitions: AssignedPartitions;
  /** Aborted when the group rebalances or the member lost its membership: stop, commit what was read, return. */
  readonly signal: AbortSignal;
  /** Commits the group's offsets as this member, in this generation. */
  commitOffsets(offsets: TopicPartitionOffsets): Promise<void>;
}

/** The group refused a request of this member (joining, syncing, committing), or could not be reached. */
export class GroupMembershipError extends KafkaError {
  override name = "GroupMembershipError";
  /** False when the same settings would be refused again (a bad session timeout, a missing ACL). */
  readonly retryable: boolean;

  constructor(message: string, options?: ErrorOptions & { retryable?: boolean }) {
    super(message, options);
    this.retryable = options?.retryable ?? true;
  }
}

/** Answers to JoinGroup that no retry with the same settings changes, and what to do about each. */
const refusals: Record<string, (group: string) => string> = {
  INVALID_SESSION_TIMEOUT: () =>
    "cluster.session_timeout is outside the broker's group.min.session.timeout.ms and group.max.session.timeout.ms (6s and 30m by default)",
  INCONSISTENT_GROUP_PROTOCOL: (group) =>
    `consumer group ${group} has members of another kind (a consumer that is not floe, or another group protocol); give the job its own source.kafka.consumer_group`,
  GROUP_AUTHORIZATION_FAILED: (group) =>
    `the principal may not join consumer group ${group}: a cluster admin allows it with kafka-acls.sh --add --allow-principal <principal> --operation Read --group ${group}`,
  GROUP_MAX_SIZE_REACHED: (group) =>
    `consumer group ${group} has as many members as the broker's group.max.size allows: run fewer replicas`,
};

const PROTOCOL_TYPE = "consumer";
/** The assignment strategy all of a job's members share; a member with another one cannot join. */
const PROTOCOL_NAME = "floe-sticky";
const SUBSCRIPTION_VERSION = 1;
const COORDINATOR_KEY_GROUP = 0;

export class GroupMember {
  readonly #cluster: KafkaCluster;
  readonly #options: GroupMemberOptions;
  /** Heartbeats, offset commits, LeaveGroup. */
  readonly #pool: ConnectionPool;
  /**
   * JoinGroup and SyncGroup only: a broker answers a connection's requests in order, and a
   * JoinGroup waits for the whole rebalance; a LeaveGroup behind it would wait as long.
   */
  readonly #joinPool: ConnectionPool;
  #memberId = "";
  #generationId = -1;
  #partitions: AssignedPartitions = new Map();
  #leader = false;
  /** Aborted when the current generation ends for this member. */
  #generation = new AbortController();
  /** The member must JoinGroup before its next lease. */
  #mustJoin = true;
  #leased = false;
  #heartbeat: ReturnType<typeof setTimeout> | undefined;
  #joining: Promise<void> | undefined;
  #stopped = false;
  #coordinator: { host: string; port: number } | undefined;

  constructor(cluster: KafkaCluster, options: GroupMemberOptions) {
    this.#cluster = cluster;
    this.#options = options;
    const connection = poolOptions(cluster);
    this.#pool = new ConnectionPool(options.clientId, connection);
    // A JoinGroup is answered only once the rebalance completes, up to the rebalance timeout.
    this.#joinPool = new ConnectionPool(options.clientId, {
      ...connection,
      requestTimeout: Math.max(connection.requestTimeout, options.rebalanceTimeoutMs + 5_000),
    });
  }

  get memberId(): string {
    return this.#memberId;
  }

  get generationId(): number {
    return this.#generationId;
  }

  get partitions(): AssignedPartitions {
    return this.#partitions;
  }

  /**
   * Runs `work` for the current generation, joining first when needed. The lease's signal is
   * aborted when the generation ends; the member rejoins once `work` returned.
   */
  async lease<T>(work: (lease: MemberLease) => Promise<T>): Promise<T> {
    if (this.#stopped) throw new GroupMembershipError(`left consumer group ${this.#options.group}`);
    if (this.#mustJoin) await this.#join();
    this.#leased = true;
    const generationId = this.#generationId;
    const memberId = this.#memberId;
    try {
      return await work({
        memberId,
        generationId,
        leader: this.#leader,
        partitions: this.#partitions,
        signal: this.#generation.signal,
        commitOffsets: (offsets) => this.#commit(memberId, generationId, offsets),
      });
    } finally {
      this.#leased = false;
      // Rejoin now, so that the rest of the group does not wait for this member's next lease.
      if (this.#mustJoin && !this.#stopped && !this.#options.stopping?.aborted) await this.#join().catch(() => {});
    }
  }

  /** Leaves the group (its partitions go to the other members at once) and closes the connections. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#heartbeat);
    this.#generation.abort();
    // A JoinGroup under way may wait for the whole rebalance: leave instead of waiting for it.
    if (this.#memberId !== "") {
      try {
        const connection = await this.#connection();
        await leaveGroupV4.api.async(connection, this.#options.group, [
          { memberId: this.#memberId, reason: "stopped" },
        ]);
        this.#options.onEvent?.({ type: "left", memberId: this.#memberId });
      } catch {
        // Not left: the broker notices after the session timeout; nothing is lost either way.
      }
    }
    await Promise.all([this.#pool.close().catch(() => {}), this.#joinPool.close().catch(() => {})]);
  }

  #join(): Promise<void> {
    this.#joining ??= this.#joinLoop().finally(() => {
      this.#joining = undefined;
    });
    return this.#joining;
  }

  async #joinLoop(): Promise<void> {
    clearTimeout(this.#heartbeat);
    const deadline = Date.now() + this.#options.rebalanceTimeoutMs + this.#options.sessionTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#joinOnce();
        return;
      } catch (error) {
        if (this.#stopped) throw error;
        const refused = Object.keys(refusals).find((id) => hasProtocolError(error, id));
        if (refused) {
          throw new GroupMembershipError(
            `joining consumer group ${this.#options.group} was refused (${refused}): ${refusals[refused]!(this.#options.group)}`,
            { cause: error, retryable: false },
          );
        }
        if (hasProtocolError(error, "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID")) this.#memberId = "";
        // The coordinator moved (or a connection to it failed): find it again at the next attempt.
        this.#coordinator = undefined;
        if (Date.now() > deadline) {
          throw new GroupMembershipError(
            `joining consumer group ${this.#options.group} failed: ${this.#cluster.scrub(describeCause(error))}`,
            { cause: error },
          );
        }
        if (!hasProtocolError(error, "MEMBER_ID_REQUIRED")) await sleep(Math.min(1000, 100 * 2 ** attempt));
      }
    }
  }

  async #joinOnce(): Promise<void> {
    const { group, sessionTimeoutMs, rebalanceTimeoutMs } = this.#options;
    const topics = [...(await this.#options.topics())].sort();
    const subscription = encodeConsumerProtocolSubscription({
      version: SUBSCRIPTION_VERSION,
      topics,
      ownedPartitions: [...this.#partitions].map(([topic, partitions]) => ({ topic, partitions: [...partitions] })),
    });
    const connection = await this.#connection(this.#joinPool);
    let joined: Awaited<ReturnType<typeof joinGroupV7.api.async>>;
    try {
      joined = await joinGroupV7.api.async(
        connection,
        group,
        sessionTimeoutMs,
        rebalanceTimeoutMs,
        this.#memberId,
        null,
        PROTOCOL_TYPE,
        [{ name: PROTOCOL_NAME, metadata: subscription }],
        null,
      );
    } catch (error) {
      // The first join of a member: the broker hands out the member id and wants it back.
      const memberId = responseOf<{ memberId?: string }>(error)?.memberId;
      if (memberId) this.#memberId = memberId;
      throw error;
    }
    this.#memberId = joined.memberId;
    const leader = joined.leader === joined.memberId;
    let assignments: { memberId: string; assignment: Buffer }[] = [];
    if (leader) {
      const members: AssignorMember[] = [];
      const subscribed = new Set<string>();
      for (const m of joined.members) {
        const s = decodeConsumerProtocolSubscription(m.metadata);
        for (const t of s.topics) subscribed.add(t);
        members.push({ memberId: m.memberId, owned: new Map(s.ownedPartitions.map((o) => [o.topic, o.partitions])) });
      }
      const described = await listTopicPartitions(this.#cluster, [...subscribed]);
      const computed = assignPartitions(
        members,
        described.map((t) => ({ topic: t.topic, partitions: t.partitions })),
      );
      // The group keeps the last rebalance in each assignment's user data (rebalance-note.ts).
      const notes = rebalanceNotes(members, computed, joined.generationId, Date.now());
      assignments = [...computed].map(([memberId, byTopic]) => ({
        memberId,
        assignment: encodeConsumerProtocolAssignment({
          version: SUBSCRIPTION_VERSION,
          assignedPartitions: [...byTopic].map(([topic, partitions]) => ({ topic, partitions })),
          userData: encodeRebalanceNote(notes.get(memberId)!),
        }),
      }));
    }
    const synced = await syncGroupV5.api.async(
      connection,
      group,
      joined.generationId,
      joined.memberId,
      null,
      PROTOCOL_TYPE,
      joined.protocolName,
      assignments,
    );
    const assigned = new Map<string, number[]>();
    if (synced.assignment.length > 0) {
      for (const { topic, partitions } of decodeConsumerProtocolAssignment(synced.assignment).assignedPartitions) {
        if (partitions.length > 0)
          assigned.set(
            topic,
            [...partitions].sort((a, b) => a - b),
          );
      }
    }
    const previous = this.#partitions;
    this.#generationId = joined.generationId;
    this.#partitions = assigned;
    this.#leader = leader;
    this.#generation = new AbortController();
    this.#mustJoin = false;
    this.#options.onEvent?.({
      type: "assigned",
      memberId: this.#memberId,
      generationId: this.#generationId,
      leader,
      members: joined.members.length,
      partitions: assigned,
      added: difference(assigned, previous),
      revoked: difference(previous, assigned),
    });
    this.#scheduleHeartbeat();
  }

  #scheduleHeartbeat(): void {
    clearTimeout(this.#heartbeat);
    if (this.#stopped) return;
    this.#heartbeat = setTimeout(() => void this.#beat(), this.#options.heartbeatIntervalMs);
  }

  async #beat(): Promise<void> {
    if (this.#stopped || this.#joining) return;
    try {
      const connection = await this.#connection();
      await heartbeatV4.api.async(connection, this.#options.group, this.#generationId, this.#memberId, null);
    } catch (error) {
      if (this.#stopped) return;
      if (hasProtocolError(error, "REBALANCE_IN_PROGRESS")) {
        this.#endGeneration("the group is rebalancing");
      } else if (hasProtocolError(error, "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "FENCED_INSTANCE_ID")) {
        // Past the session timeout (a pause, a partition of the network): the partitions are
        // someone else's now. What this member still commits is refused by the offset claim.
        if (hasProtocolError(error, "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID")) this.#memberId = "";
        this.#partitions = new Map();
        this.#endGeneration(`the member lost its membership (${describeCause(error)})`);
      } else if (hasProtocolError(error, "NOT_COORDINATOR", "COORDINATOR_NOT_AVAILABLE")) {
        this.#coordinator = undefined;
      }
      // Any other failure (the coordinator unreachable for a moment): beat again; the session
      // timeout decides whether the membership survives.
    }
    if (this.#mustJoin && !this.#leased && !this.#options.stopping?.aborted) {
      await this.#join().catch(() => {
        // Retried by the next lease, which fails the run if the group cannot be joined.
      });
      return;
    }
    this.#scheduleHeartbeat();
  }

  #endGeneration(reason: string): void {
    if (!this.#mustJoin) {
      this.#options.onEvent?.({
        type: "rebalancing",
        memberId: this.#memberId,
        generationId: this.#generationId,
        reason,
      });
    }
    this.#mustJoin = true;
    this.#generation.abort(new GroupMembershipError(`consumer group ${this.#options.group}: ${reason}`));
  }

  async #commit(memberId: string, generationId: number, offsets: TopicPartitionOffsets): Promise<void> {
    const topics = [...offsets]
      .filter(([, partitions]) => partitions.size > 0)
      .map(([name, partitions]) => ({
        name,
        partitions: [...partitions].map(([partitionIndex, committedOffset]) => ({
          partitionIndex,
          committedOffset,
          committedLeaderEpoch: -1,
          committedMetadata: null,
        })),
      }));
    if (topics.length === 0) return;
    try {
      const connection = await this.#connection();
      await offsetCommitV8.api.async(connection, this.#options.group, generationId, memberId, null, topics);
    } catch (error) {
      throw new GroupMembershipError(
        `committing the offsets of consumer group ${this.#options.group} as member ${memberId} ` +
          `(generation ${generationId}) failed: ${this.#cluster.scrub(describeCause(error))}`,
        { cause: error },
      );
    }
  }

  async #connection(pool = this.#pool) {
    this.#coordinator ??= await findGroupCoordinator(this.#cluster, this.#pool, this.#options.group);
    return pool.get(this.#coordinator);
  }
}

/** The settings of a ConnectionPool of the library that reaches the cluster as its admin does. */
export function poolOptions(cluster: KafkaCluster) {
  const base = clientOptions(cluster.config);
  return {
    ...(base.tls ? { tls: base.tls } : {}),
    ...(base.tlsServerName === undefined ? {} : { tlsServerName: base.tlsServerName }),
    ...(base.sasl ? { sasl: base.sasl } : {}),
    connectTimeout: base.connectTimeout ?? 30_000,
    requestTimeout: base.requestTimeout ?? 30_000,
  };
}

/** The broker that coordinates `group` (FindCoordinator, asked of the first bootstrap server). */
export async function findGroupCoordinator(
  cluster: KafkaCluster,
  pool: ConnectionPool,
  group: string,
): Promise<{ host: string; port: number }> {
  const [bootstrap] = cluster.config.bootstrapServers;
  const at = bootstrap!.lastIndexOf(":");
  const connection = await pool.get({ host: bootstrap!.slice(0, at), port: Number(bootstrap!.slice(at + 1)) });
  const found = await findCoordinatorV4.api.async(connection, COORDINATOR_KEY_GROUP, [group]);
  const coordinator = found.coordinators.find((c) => c.errorCode === 0);
  if (!coordinator) {
    throw new GroupMembershipError(
      `no coordinator for consumer group ${group} (error code ${found.coordinators[0]?.errorCode}): is the cluster up?`,
    );
  }
  return { host: coordinator.host, port: coordinator.port };
}

function responseOf<T>(error: unknown): T | undefined {
  for (const e of walk(error)) {
    const response = (e as { response?: unknown }).response;
    if (response && typeof response === "object") return response as T;
  }
  return undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** "t[0,1,2] u[3]": partitions as a log line says them. */
export function describePartitions(partitions: AssignedPartitions): string {
  if (partitions.size === 0) return "none";
  return [...partitions].map(([topic, ps]) => `${topic}[${ps.join(",")}]`).join(" ");
}
