// Topic settings read from the brokers (DescribeConfigs): the retention of each topic, which
// bounds how long a job can stay behind before messages expire unread.
import { ConfigResourceTypes } from "@platformatic/kafka";
import type { KafkaCluster } from "./connection.ts";

/** retention.ms of each topic, in ms; null when unlimited (-1) or not given. */
export async function topicRetentionMs(
  cluster: KafkaCluster,
  topics: readonly string[],
): Promise<Map<string, number | null>> {
  const retention = new Map<string, number | null>();
  if (topics.length === 0) return retention;
  const described = await cluster.run("reading the topics' retention.ms", (admin) =>
    admin.describeConfigs({
      resources: topics.map((topic) => ({
        resourceType: ConfigResourceTypes.TOPIC,
        resourceName: topic,
        configurationKeys: ["retention.ms"],
      })),
    }),
  );
  for (const resource of described) {
    const value = resource.configs.find((c) => c.name === "retention.ms")?.value;
    const ms = value === null || value === undefined ? Number.NaN : Number(value);
    retention.set(resource.resourceName, Number.isFinite(ms) && ms >= 0 ? ms : null);
  }
  return retention;
}
