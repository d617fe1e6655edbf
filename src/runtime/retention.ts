// Retention is the replay window of a topic: past `retention.ms` Kafka deletes messages whether
// they were read or not. A job whose last successful run is older than that has lost messages,
// so status and the alerts warn once the time since the last successful run passes
// WARN_FRACTION of the shortest retention of the job's topics.
export const WARN_FRACTION = 0.8;

export interface TopicRetention {
  topic: string;
  /** null: unlimited (retention.ms -1). */
  retentionMs: number | null;
}

/** The topic with the shortest limited retention, or undefined when every retention is unlimited. */
export function shortestRetention(
  topics: readonly TopicRetention[],
): { topic: string; retentionMs: number } | undefined {
  let shortest: { topic: string; retentionMs: number } | undefined;
  for (const { topic, retentionMs } of topics) {
    if (retentionMs !== null && (shortest === undefined || retentionMs < shortest.retentionMs)) {
      shortest = { topic, retentionMs };
    }
  }
  return shortest;
}

/**
 * The warning for a job whose last successful run (ms since the epoch; undefined: none yet,
 * counted from `since`, its first run) is older than WARN_FRACTION of the shortest retention.
 */
export function retentionWarning(
  lastSuccessAt: number | undefined,
  since: number | undefined,
  topics: readonly TopicRetention[],
  now: number,
): string | undefined {
  const shortest = shortestRetention(topics);
  const from = lastSuccessAt ?? since;
  if (shortest === undefined || from === undefined) return undefined;
  const elapsed = now - from;
  if (elapsed < WARN_FRACTION * shortest.retentionMs) return undefined;
  const what = lastSuccessAt === undefined ? "no run has succeeded since the first one" : "the last successful run";
  const lost = elapsed >= shortest.retentionMs;
  return `${what} started ${formatDuration(elapsed)} ago, ${lost ? "past" : "near"} the retention of topic ${shortest.topic} (retention.ms ${shortest.retentionMs}, ${formatDuration(shortest.retentionMs)}): ${lost ? "messages may have expired unread" : "messages older than that expire unread"}`;
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.round(m / 6) / 10;
  if (h < 48) return `${h}h`;
  return `${Math.round(h / 2.4) / 10}d`;
}
