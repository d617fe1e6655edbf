// Which topics a job drains: every topic of the cluster whose whole name matches topic_pattern,
// except internal ones. Each topic left out is returned with its reason, so that the caller can log
// why a topic it expected is not synced.
//
// Matching is full-name, as Java's Pattern.matches() and Kafka Connect's topics.regex: the pattern
// is wrapped as ^(?:pattern)$, so "orders" does not select "orders_dlq" even without anchors, and
// anchors the user did write change nothing. The pattern is a JavaScript regular expression
// without flags (no `u`, so that the escapes of Java patterns, e.g. \-, still compile).
import type { KafkaCluster } from "./connection.ts";
import { KafkaError } from "./errors.ts";

export interface DiscoveredTopic {
  topic: string;
  partitions: number;
}

export type SkipReason = "does not match topic_pattern" | "internal topic";

export interface SkippedTopic {
  topic: string;
  reason: SkipReason;
}

export interface Discovery {
  /** Sorted by name. */
  topics: DiscoveredTopic[];
  /** Sorted by name. */
  skipped: SkippedTopic[];
}

export class InvalidTopicPatternError extends KafkaError {
  override name = "InvalidTopicPatternError";
}

/** The pattern matched no topic; `topicsSeen` lists what the cluster has (internal topics included). */
export class NoTopicMatchError extends KafkaError {
  override name = "NoTopicMatchError";
  readonly pattern: string;
  readonly topicsSeen: readonly string[];

  constructor(pattern: string, topicsSeen: readonly string[]) {
    const shown = 50;
    const listed =
      topicsSeen.length === 0
        ? "the cluster has no topic"
        : `topics seen: ${topicsSeen.slice(0, shown).join(", ")}${topicsSeen.length > shown ? ` and ${topicsSeen.length - shown} more` : ""}`;
    super(`topic_pattern ${pattern} matches no topic (internal topics never match); ${listed}`);
    this.pattern = pattern;
    this.topicsSeen = topicsSeen;
  }
}

/** Kafka's own topics (__consumer_offsets, __transaction_state, ...) and the schema registry's store. */
export function isInternalTopic(topic: string): boolean {
  return topic.startsWith("__") || topic === "_schemas";
}

/** The pattern as a full-name matcher (see the top of this file). */
export function compileTopicPattern(pattern: string): RegExp {
  try {
    return new RegExp(`^(?:${pattern})$`);
  } catch (error) {
    throw new InvalidTopicPatternError(
      `topic_pattern ${pattern} is not a valid regular expression: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}

/** Splits topic names into matched and skipped; pure, for the caller that already has the names. */
export function selectTopics(
  topics: Iterable<string>,
  pattern: string,
): { matched: string[]; skipped: SkippedTopic[] } {
  const matcher = compileTopicPattern(pattern);
  const matched: string[] = [];
  const skipped: SkippedTopic[] = [];
  for (const topic of [...topics].sort()) {
    if (isInternalTopic(topic)) skipped.push({ topic, reason: "internal topic" });
    else if (matcher.test(topic)) matched.push(topic);
    else skipped.push({ topic, reason: "does not match topic_pattern" });
  }
  return { matched, skipped };
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

/**
 * The topics of the cluster that topic_pattern selects, with their partition counts, and the
 * others with the reason each was skipped. Throws NoTopicMatchError when nothing matches.
 */
export async function discoverTopics(cluster: KafkaCluster, pattern: string): Promise<Discovery> {
  compileTopicPattern(pattern); // a bad pattern fails before any network call
  const names = await listTopics(cluster);
  const { matched, skipped } = selectTopics(names, pattern);
  if (matched.length === 0) throw new NoTopicMatchError(pattern, names);
  return { topics: await listTopicPartitions(cluster, matched), skipped };
}
