// The sync report: a table on the terminal, or JSON for scripts (--json). Numbers only; no
// secret is ever part of a report.

import type { SkippedTopic } from "../job/topics.ts";
import { stringifyJson } from "../lib/int64-json.ts";
import type { RecreatedTopic } from "../pipeline/plan-sync.ts";
import type { SyncReport } from "../pipeline/sync.ts";
import { textTable } from "./text-table.ts";

export function reportToJson(report: SyncReport): string {
  return stringifyJson(report, { bigints: "strings", indent: 2 });
}

export function reportToText(report: SyncReport): string {
  const header = [
    "table",
    "mode",
    "messages",
    "bytes",
    "data files",
    "DVs",
    "records",
    "deleted",
    "dead letters",
    "ms",
  ];
  const rows = report.tables.map((t) => [
    t.table,
    t.mode,
    String(t.messagesRead),
    String(t.bytesRead),
    String(t.dataFilesAdded),
    String(t.deletionVectorsAdded),
    String(t.recordsAdded),
    String(t.positionsDeleted),
    String(t.deadLetters),
    String(Math.round(t.durationMs)),
  ]);
  const out = textTable(header, rows, { right: [2, 3, 4, 5, 6, 7, 8, 9] });
  const notes: string[] = [];
  for (const t of report.tables) {
    if (t.created) notes.push(`${t.table}: created (format v3) with ${t.columnsAdded.length} columns`);
    else if (t.columnsAdded.length > 0) notes.push(`${t.table}: new columns ${t.columnsAdded.join(", ")}`);
    if (t.tombstonesIgnored > 0) {
      notes.push(
        `${t.table}: ${t.tombstonesIgnored} tombstones ignored (deletes need _kafka_key as the only dedup key)`,
      );
    }
    if (t.skipped > 0) notes.push(`${t.table}: ${t.skipped} bad messages skipped (on_error: skip)`);
    if ((t.duplicatesRetired ?? 0) > 0) {
      notes.push(
        `${t.table}: ${t.duplicatesRetired} rows deleted that shared a key with a later row (another engine wrote them)`,
      );
    }
    const unkeyed = (t.keyIndex ?? []).reduce((sum, k) => sum + k.rowsWithoutKey, 0);
    if (unkeyed > 0)
      notes.push(
        `${t.table}: ${unkeyed} rows floe cannot match by key (a null dedup value, or no _floe_id where only it holds the key)`,
      );
    const rebuilt = t.keyIndex?.find((k) => k.how === "rebuilt");
    if (rebuilt) notes.push(`${t.table}: key index rebuilt from ${rebuilt.dataFilesRead} data files`);
  }
  notes.push(...skippedTopicLines(report.skippedTopics));
  for (const r of report.recreatedTopics) {
    const mode = report.tables.find((t) => t.topic === r.topic)?.mode;
    notes.push(recreatedTopicLine(r, mode));
  }
  for (const l of report.lostMessages) {
    notes.push(
      `${l.topic} partition ${l.partition}: ${l.lost} messages expired unread (accepted with --accept-data-loss)`,
    );
  }
  if (report.groupCommitError)
    notes.push(`consumer group not updated: ${report.groupCommitError} (the tables' offsets win at the next sync)`);
  if (report.status === "partial")
    notes.push(
      `reading stopped early (${report.readError ?? report.readStatus}); what was read landed, run again to resume`,
    );
  out.push("", `${report.messagesRead} messages in ${(report.durationMs / 1000).toFixed(2)} s, ${report.status}`);
  return [...out, ...notes].join("\n");
}

/** A re-created topic: both ids, where reading started, and what became of the old topic's rows. */
export function recreatedTopicLine(r: RecreatedTopic, mode: "upsert" | "append" | undefined): string {
  const kept =
    mode === "upsert"
      ? "its rows stay where the new topic has no message with their key"
      : "its rows stay beside the new topic's";
  return (
    `${r.topic}: deleted and re-created (topic id ${r.previousTopicId} -> ${r.topicId}); ` +
    `read from its log start. ${r.table} recorded the deleted topic: ${kept}`
  );
}

/** Skipped topics grouped by reason, a few names each: a cluster can have hundreds. */
export function skippedTopicLines(skipped: readonly SkippedTopic[]): string[] {
  return [...Map.groupBy(skipped, (s) => s.reason)].map(([reason, topics]) => {
    const shown = topics.slice(0, 5).map((s) => s.topic);
    const more = topics.length > shown.length ? ` and ${topics.length - shown.length} more` : "";
    return `skipped ${topics.length} topic(s), ${reason}: ${shown.join(", ")}${more}`;
  });
}
