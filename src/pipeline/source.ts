// What a sync needs from the cluster it reads, and nothing more: kafka/kafka-source.ts is the
// real one, over a KafkaCluster; tests run whole syncs over one in memory. The caller opens the
// source and closes it, so that a long-running process can keep one for many syncs.
import type { TopicPartitionOffsets, TopicPartitions } from "../kafka/commit-offsets.ts";
import type { DiscoveredTopic } from "../kafka/discover.ts";
import type { TopicPartitionWatermarks } from "../kafka/plan.ts";
import type { BatchHandler, PartitionRange, ReadResult } from "../kafka/read.ts";

export interface SyncSource {
  /** The cluster as a user may see it (servers, protocol, user; never a password). */
  readonly description: string;
  /**
   * The principal the cluster knows this source as (User:floe), when it authenticates: a cluster
   * with ACLs lists it only the topics it may Describe.
   */
  readonly principal?: string | undefined;
  /** Every topic of the cluster, internal ones included. */
  listTopics(): Promise<string[]>;
  /** The partition count and id of each topic, in the order given; fails for a topic that does not exist. */
  describeTopics(topics: readonly string[]): Promise<DiscoveredTopic[]>;
  /** Where each partition's log starts and ends now (high watermark, last stable offset). */
  listWatermarks(topics: readonly TopicPartitions[]): Promise<TopicPartitionWatermarks>;
  /** The group's committed offsets of those partitions (absent: none), read without joining the group. */
  readGroupOffsets(group: string, topics: readonly TopicPartitions[]): Promise<TopicPartitionOffsets>;
  /**
   * Reads each range from its start offset to its stop offset, one batch at a time to `onBatch`
   * (never two at once; a batch counts as read once its promise resolved). A read that cannot go
   * on stops and says so in the result (status "failed", or "aborted" by the signal or a declined
   * batch); an error `onBatch` throws is rethrown once the read stopped.
   */
  readPartitions(
    ranges: readonly PartitionRange[],
    onBatch: BatchHandler,
    options: { maxThreads: number; signal?: AbortSignal },
  ): Promise<ReadResult>;
  /** Commits the next offset to read per partition for the group, without joining it. */
  commitGroupOffsets(group: string, offsets: TopicPartitionOffsets): Promise<void>;
}
