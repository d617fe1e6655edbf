// A Kafka cluster as the source of a sync: the operations a sync makes (list the topics, their
// partitions and ids, the watermarks and the group's offsets; read partitions; commit the group's
// offsets) over one KafkaCluster handle, which the caller opens, may share, and closes.

import { principalOf } from "./authorization.ts";
import {
  commitGroupOffsets,
  describeGroup,
  type GroupActivity,
  readGroupOffsets,
  type TopicPartitionOffsets,
  type TopicPartitions,
} from "./commit-offsets.ts";
import type { KafkaCluster } from "./connection.ts";
import { type DiscoveredTopic, listTopicPartitions, listTopics } from "./discover.ts";
import { listWatermarks, type TopicPartitionWatermarks } from "./plan.ts";
import type { BatchHandler, PartitionRange, ReadOptions, ReadResult } from "./read.ts";
import { readPartitions } from "./read.ts";
import { topicRetentionMs } from "./topic-config.ts";

export class KafkaSource {
  readonly cluster: KafkaCluster;

  constructor(cluster: KafkaCluster) {
    this.cluster = cluster;
  }

  get description(): string {
    return this.cluster.description;
  }

  /** User:<name> when the connection authenticates (SASL, or a client certificate); undefined otherwise. */
  get principal(): string | undefined {
    const security = this.cluster.config.security;
    const authenticates =
      "sasl" in security || (security.protocol === "SSL" && security.tls?.clientCertificate !== undefined);
    return authenticates ? principalOf(security).principal : undefined;
  }

  listTopics(): Promise<string[]> {
    return listTopics(this.cluster);
  }

  describeTopics(topics: readonly string[]): Promise<DiscoveredTopic[]> {
    return listTopicPartitions(this.cluster, topics);
  }

  listWatermarks(topics: readonly TopicPartitions[]): Promise<TopicPartitionWatermarks> {
    return listWatermarks(this.cluster, topics);
  }

  readGroupOffsets(group: string, topics: readonly TopicPartitions[]): Promise<TopicPartitionOffsets> {
    return readGroupOffsets(this.cluster, group, topics);
  }

  readPartitions(ranges: readonly PartitionRange[], onBatch: BatchHandler, options: ReadOptions): Promise<ReadResult> {
    return readPartitions(this.cluster, ranges, onBatch, options);
  }

  /** retention.ms per topic; null when unlimited. */
  topicRetentionMs(topics: readonly string[]): Promise<Map<string, number | null>> {
    return topicRetentionMs(this.cluster, topics);
  }

  /** The group's state and its members with their assignments, without joining it. */
  describeGroup(group: string): Promise<GroupActivity> {
    return describeGroup(this.cluster, group);
  }

  commitGroupOffsets(group: string, offsets: TopicPartitionOffsets): Promise<void> {
    return commitGroupOffsets(this.cluster, group, offsets);
  }
}
