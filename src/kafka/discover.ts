// The topics of the cluster and their partition counts. Which of them a job drains is the job's
// business (config/topics.ts: topic_pattern, streams, internal topics); this file only asks the
// cluster.
import type { KafkaCluster } from "./connection.ts";
import { KafkaError } from "./errors.ts";

export interface DiscoveredTopic {
  topic: string;
  partitions: number;
}

/** Every topic of the cluster, internal ones included, sorted by name. */
export async function listTopics(cluster: KafkaCluster): Promise<string[]> {
  const names = await cluster.run("listing topics", (admin) => admin.listTopics({ includeInternals: true }));
  return [...names].sort();
}

/** The partition counts of the topics, in the order given. */
export async function listTopicPartitions(
  cluster: KafkaCluster,
  topics: readonly string[],
): Promise<DiscoveredTopic[]> {
  if (topics.length === 0) return [];
  const metadata = await cluster.run(`reading the metadata of ${topics.length} topic(s)`, (admin) =>
    admin.metadata({ topics: [...topics], forceUpdate: true }),
  );
  return topics.map((topic) => {
    const partitions = metadata.topics.get(topic)?.partitionsCount;
    // A topic deleted since it was listed has no metadata.
    if (partitions === undefined) throw new KafkaError(`topic ${topic} does not exist (deleted since it was listed?)`);
    return { topic, partitions };
  });
}
