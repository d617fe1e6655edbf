// Which topics a job syncs, and into which tables: the job's bindings on the cluster as it is. topic_pattern must
// match the whole topic name; without one, the job syncs exactly the topics under `streams`.
// Internal topics (`__consumer_offsets`, `__transaction_state`, any `__*`, the schema
// registry's `_schemas`) are never synced, whatever the pattern says.
import type { Binding, Job } from "./job.ts";

export interface SkippedTopic {
  readonly topic: string;
  readonly reason: string;
}

export interface TopicSelection {
  /** A binding per topic the job syncs: listed under `streams`, or `default_stream` for a topic the pattern selects. */
  readonly selected: readonly Binding[];
  readonly skipped: readonly SkippedTopic[];
}

/** The topics of a job that the cluster has nothing to sync for: a pattern that matches none, or two topics on one table. */
export class TopicSelectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TopicSelectionError";
  }
}

/** Table name of a topic: lowercased, every character outside [a-z0-9_] replaced by `_`. */
export function tableNameFor(topic: string): string {
  return topic.toLowerCase().replace(/[^a-z0-9_]/g, "_");
}

/** The dead-letter table beside a topic's table. */
export function deadLetterTableName(table: string): string {
  return `${table}__dlq`;
}

export function isInternalTopic(topic: string): boolean {
  return topic.startsWith("__") || topic === "_schemas";
}

/** A topic that would write a table another topic writes. */
export interface SharedTable {
  readonly topic: string;
  readonly table: string;
  /** The earlier topic that writes it. */
  readonly other: string;
}

/**
 * The topics, in the order given, that would write a table an earlier one writes. A topic's
 * table and its dead-letter table are both taken: `orders__dlq` cannot be a topic's table beside
 * `orders`. The job file's bindings are checked against it when the job loads; the topics a
 * pattern selects when a sync lists them.
 */
export function sharedTables(targets: readonly { topic: string; table: string }[]): SharedTable[] {
  const owners = new Map<string, string>();
  const shared: SharedTable[] = [];
  for (const { topic, table } of targets) {
    for (const name of [table, deadLetterTableName(table)]) {
      const other = owners.get(name);
      if (other !== undefined) shared.push({ topic, table: name, other });
      owners.set(name, topic);
    }
  }
  return shared;
}

/** topic_pattern as a full-match regular expression (the loader has checked that it compiles). */
export function topicMatcher(pattern: string): RegExp {
  return new RegExp(`^(?:${pattern})$`);
}

/**
 * Sorts the cluster's topics into those the job syncs and those it skips, each skip with its
 * reason for the log. Fails when nothing is selected (listing the topics seen) and when two
 * selected topics would land in one table.
 */
export function selectTopics(job: Job, topicsSeen: readonly string[]): TopicSelection {
  const { topicPattern } = job;
  const matcher = topicPattern === undefined ? undefined : topicMatcher(topicPattern);
  const selected: Binding[] = [];
  const skipped: SkippedTopic[] = [];
  for (const topic of [...topicsSeen].sort()) {
    const listed = job.bindings.get(topic);
    if (isInternalTopic(topic)) {
      skipped.push({ topic, reason: "internal topic" });
    } else if (matcher === undefined ? listed === undefined : !matcher.test(topic)) {
      skipped.push({ topic, reason: matcher ? "does not match topic_pattern" : "not listed under streams" });
    } else {
      selected.push(listed ?? { ...job.defaultBinding, topic, table: tableNameFor(topic) });
    }
  }
  if (selected.length === 0) {
    const what = topicPattern === undefined ? "the topics listed under streams" : `topic_pattern ${topicPattern}`;
    const seen = topicsSeen.filter((t) => !isInternalTopic(t)).sort();
    throw new TopicSelectionError(
      `${what} selects none of the ${seen.length} topics on the cluster` +
        (seen.length === 0 ? "" : `: ${seen.join(", ")}`),
    );
  }
  const [shared] = sharedTables(selected);
  if (shared) {
    throw new TopicSelectionError(
      `topics ${shared.other} and ${shared.topic} would both write table ${shared.table}; set table: for one of them under streams`,
    );
  }
  return { selected, skipped };
}
