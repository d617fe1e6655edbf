// How run records, log lines and statuses print on a terminal: aligned columns, local times to
// the second, durations with their unit. --json prints the records themselves.
import type { LogLine, RunRecord } from "../state/run-store.ts";
import { textTable } from "./text-table.ts";

export function time(ms: number | null): string {
  if (ms === null) return "-";
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function duration(ms: number | null): string {
  if (ms === null) return "-";
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

export function runsToText(runs: readonly RunRecord[]): string {
  if (runs.length === 0) return "no runs recorded";
  const lines: string[] = [];
  const header = ["run id", "started", "duration", "outcome", "trigger", "messages", "bytes", "dead letters"];
  const rows = runs.map((r) => [
    r.runId,
    time(r.startedAt),
    duration(r.durationMs),
    r.outcome,
    r.kind === "maintenance" ? `${r.trigger}, maintenance` : r.trigger,
    String(r.messages),
    String(r.bytes),
    String(r.deadLetters),
  ]);
  const table = textTable(header, rows, { right: [2, 5, 6, 7] });
  lines.push(table[0]!, table[1]!);
  runs.forEach((r, i) => {
    lines.push(table[i + 2]!);
    for (const t of r.tables) {
      lines.push(
        `    ${t.table}: ${t.messagesRead} messages, ${t.recordsAdded} records added, ${t.positionsDeleted} deleted, ` +
          `${t.dataFilesAdded} data files, ${t.deletionVectorsAdded} DVs, ${t.deadLetters} dead letters` +
          (t.snapshotId ? `, snapshot ${t.snapshotId}` : ""),
      );
    }
    for (const t of r.maintenance ?? []) {
      if (t.error !== undefined) continue;
      lines.push(
        `    ${t.table}: ${t.compaction?.dataFiles ?? 0} data files compacted (+${t.compaction?.deleteFiles ?? 0} DVs), ` +
          `${t.manifests?.replaced ?? 0} manifests rewritten, ${t.snapshots?.expired ?? 0} snapshots expired, ` +
          `${t.orphans?.files ?? 0} orphan files removed`,
      );
    }
    if (r.error) lines.push(`    error (${r.error.kind}${r.error.retryable ? ", retryable" : ""}): ${r.error.message}`);
  });
  return lines.join("\n");
}

const LEVEL_NAMES: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};

export function logLineToText(line: LogLine): string {
  const { job: _job, ...fields } = line.fields;
  const extra = Object.entries(fields)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  const level = (LEVEL_NAMES[line.level] ?? String(line.level)).padEnd(5);
  return `${time(line.at)}  ${level}  ${line.msg}${extra ? `  ${extra}` : ""}`;
}

/** A log line as the JSON line pino wrote. */
export function logLineToJson(line: LogLine): string {
  return JSON.stringify({ level: line.level, time: line.at, runId: line.runId, ...line.fields, msg: line.msg });
}
