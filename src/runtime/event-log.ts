// A sync's events as log lines: what an operator reads in `floe logs` and a log collector
// indexes. Per batch progress is debug; a commit, the plan and the end are info; dead letters
// and a consumer group left behind warn; a failure error, with its kind. The logger is the run's child (it carries runId and job).
import type { Logger } from "pino";
import type { SyncEvent } from "../pipeline/events.ts";

export function logEvent(log: Logger, event: SyncEvent): void {
  switch (event.type) {
    case "started":
      log.info("run started");
      return;
    case "planned":
      log.info(
        {
          tables: event.tables.map((t) => t.table),
          partitions: event.partitions.length,
          messagesToRead: Number(event.messagesToRead),
          skippedTopics: event.skippedTopics.length,
        },
        `planned: up to ${event.messagesToRead} messages from ${event.partitions.length} partitions into ${event.tables.length} tables`,
      );
      for (const lost of event.lostMessages) {
        log.warn(
          { topic: lost.topic, partition: lost.partition, lost: Number(lost.lost) },
          `messages expired unread: ${lost.topic} partition ${lost.partition}`,
        );
      }
      return;
    case "partition-progress":
      log.debug(
        {
          topic: event.topic,
          partition: event.partition,
          nextOffset: Number(event.nextOffset),
          stopOffset: Number(event.stopOffset),
        },
        `read ${event.topic}/${event.partition} to ${event.nextOffset} of ${event.stopOffset}`,
      );
      return;
    case "dead-letters":
      log.warn(
        { topic: event.topic, table: event.table, deadLetters: event.count, reasons: event.reasons },
        `${event.count} dead letters into ${event.table}`,
      );
      return;
    case "table-committed": {
      const r = event.report;
      log.info(
        {
          table: r.table,
          snapshotId: r.snapshotId,
          messages: r.messagesRead,
          bytes: r.bytesRead,
          recordsAdded: r.recordsAdded,
          positionsDeleted: r.positionsDeleted,
          dataFiles: r.dataFilesAdded,
          deletionVectors: r.deletionVectorsAdded,
          ...(r.replans ? { replans: r.replans } : {}),
          ...(r.freshness ? { freshness: r.freshness } : {}),
        },
        r.snapshotId === null
          ? `${r.table}: nothing to commit`
          : `committed ${r.table}: ${r.recordsAdded} records added, ${r.positionsDeleted} positions deleted (snapshot ${r.snapshotId})`,
      );
      return;
    }
    case "finished": {
      const fields = { status: event.status, messages: event.messagesRead, durationMs: Math.round(event.durationMs) };
      const msg = `run ${event.status}: ${event.messagesRead} messages in ${Math.round(event.durationMs)} ms${event.readError ? ` (reading stopped: ${event.readError})` : ""}`;
      // The tables hold what was read and their offsets win at the next run: a consumer group
      // left behind misleads only lag tools, so it warns and the run does not fail.
      if (event.groupCommitError === undefined) log.info(fields, msg);
      else
        log.warn(
          { ...fields, groupCommitError: event.groupCommitError },
          `${msg}; consumer group not updated: ${event.groupCommitError} (the tables' offsets win at the next run)`,
        );
      return;
    }
    case "failed":
      log.error(
        { kind: event.error.kind, retryable: event.error.retryable, error: event.error.name },
        `run failed (${event.error.kind}): ${event.error.message}`,
      );
      return;
  }
}
