// The topics of the cluster, their partition counts and their topic ids. Which of them a job
// drains is the job's business (job/topics.ts: topic_pattern, streams, internal topics); this
// file only asks the cluster.
//
// A topic id (KIP-516) is a UUID the cluster gives a topic when it is created: a topic deleted
// and re-created under the same name gets a new one, and its offsets start over. Ids are written
// as Kafka's own tools write them (kafka-topics.sh --describe: "TopicId: ..."), the 16 bytes in
// URL-safe base64 without padding, so that a user can compare them.
import type { KafkaCluster } from "./connection.ts";
import { KafkaError } from "./errors.ts";

export interface DiscoveredTopic {
  topic: string;
  partitions: number;
  /** Undefined when the cluster gives none (a broker before Kafka 2.8, or Metadata below v10). */
  topicId: string | undefined;
}

/** Every topic of the cluster, internal ones included, sorted by name. */
export async function listTopics(cluster: KafkaCluster): Promise<string[]> {
  const names = await cluster.run("listing topics", (admin) => admin.listTopics({ includeInternals: true }));
  return [...names].sort();
}

/** The partition counts and ids of the topics, in the order given. */
export async function listTopicPartitions(
  cluster: KafkaCluster,
  topics: readonly string[],
): Promise<DiscoveredTopic[]> {
  if (topics.length === 0) return [];
  const metadata = await cluster.run(
    `reading the metadata of ${topics.length === 1 ? `topic ${topics[0]}` : `${topics.length} topics`}`,
    (admin) => admin.metadata({ topics: [...topics], forceUpdate: true }),
    { topics },
  );
  return topics.map((topic) => {
    const found = metadata.topics.get(topic);
    // A topic deleted since it was listed has no metadata.
    if (found === undefined) throw new KafkaError(`topic ${topic} does not exist (deleted since it was listed?)`);
    return { topic, partitions: found.partitionsCount, topicId: kafkaTopicId(found.id) };
  });
}

const ZERO_UUID = "00000000000000000000000000000000";

/**
 * The library's hyphenated hex UUID as Kafka writes a topic id; undefined for the zero UUID
 * (Kafka's "no id") and for what is not a UUID (the library puts the topic name there when the
 * broker's Metadata version carries no ids).
 */
export function kafkaTopicId(uuid: string | undefined): string | undefined {
  const hex = uuid?.replaceAll("-", "").toLowerCase();
  if (hex === undefined || !/^[0-9a-f]{32}$/.test(hex) || hex === ZERO_UUID) return undefined;
  return Buffer.from(hex, "hex").toString("base64url");
}
