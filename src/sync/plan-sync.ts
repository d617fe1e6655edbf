// The plan of a sync, before a message is read: which topics the job selects (and why the
// others are skipped), the tables they land in as they are now, and per partition where
// reading starts (the table's committed offsets win over the group's) and stops (the high
// watermark listed now). `floe sync` executes it; `floe check` only shows it.
import type { JobConfig } from "../config/job-config.ts";
import { engineConflicts } from "../config/target-engines.ts";
import { deadLetterTableName, type SelectedTopic, type SkippedTopic, selectTopics } from "../config/topics.ts";
import { type Catalog, NoSuchNamespaceError, NoSuchTableError } from "../iceberg/catalog/catalog.ts";
import { Table } from "../iceberg/table.ts";
import type { TopicPartitionOffsets } from "../kafka/commit-offsets.ts";
import type { KafkaCluster } from "../kafka/connection.ts";
import { listTopicPartitions, listTopics } from "../kafka/discover.ts";
import { type OffsetPlan, planOffsets } from "../kafka/plan.ts";
import { committedOffsets } from "./snapshot-offsets.ts";

/** A selected topic with its table and dead-letter table, each undefined until first written. */
export interface StreamTargets {
  selection: SelectedTopic;
  table: Table | undefined;
  deadLetterTable: Table | undefined;
}

export interface SyncPlan {
  targets: StreamTargets[];
  skipped: readonly SkippedTopic[];
  offsets: OffsetPlan;
}

export class EngineConflictError extends Error {
  override name = "EngineConflictError";
}

/** Fails before any connection when a target engine cannot read what an upsert stream writes. */
export function checkTargetEngines(job: JobConfig): void {
  const upsertStreams = [...job.streams].filter(([, s]) => s.mode === "upsert").map(([topic]) => topic);
  if (job.defaultStream.mode === "upsert") upsertStreams.push("default_stream");
  const conflicts = engineConflicts(job.iceberg.targetEngines, upsertStreams);
  if (conflicts.length > 0) throw new EngineConflictError(conflicts.map((c) => c.message).join("\n"));
}

export async function planSync(job: JobConfig, cluster: KafkaCluster, catalog: Catalog): Promise<SyncPlan> {
  const { selected, skipped } = selectTopics(job, await listTopics(cluster));
  const targets = await Promise.all(selected.map((selection) => loadTargets(catalog, job, selection)));
  const tableOffsets: TopicPartitionOffsets = new Map();
  for (const { table, selection } of targets) {
    const offsets = table && committedOffsets(table.metadata, table.name).get(selection.topic);
    if (offsets) tableOffsets.set(selection.topic, offsets);
  }
  const offsets = await planOffsets(cluster, {
    topics: await listTopicPartitions(
      cluster,
      selected.map((s) => s.topic),
    ),
    consumerGroup: job.kafka.consumerGroup,
    tableOffsets,
  });
  return { targets, skipped, offsets };
}

async function loadTargets(catalog: Catalog, job: JobConfig, selection: SelectedTopic): Promise<StreamTargets> {
  const load = async (name: string) => {
    try {
      return await Table.load(catalog, { namespace: [job.iceberg.namespace], name });
    } catch (error) {
      if (error instanceof NoSuchTableError || error instanceof NoSuchNamespaceError) return undefined;
      throw error;
    }
  };
  const [table, deadLetterTable] = await Promise.all([
    load(selection.table),
    load(deadLetterTableName(selection.table)),
  ]);
  return { selection, table, deadLetterTable };
}
