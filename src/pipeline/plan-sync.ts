// The plan of a sync, before a message is read: which topics the job selects, each with its
// binding (and why the others are skipped), the tables they land in as they are now, and per partition where
// reading starts (the table's committed offsets win over the group's) and stops (the high
// watermark listed now). `floe sync` executes it; `floe check` only shows it.
//
// A topic whose id differs from the one its table recorded was deleted and re-created: it is
// read from its log start, the table's offsets and the group's are left aside (both count the
// deleted topic's messages), and the plan names it with both ids. Its table keeps the rows it
// has: an append table then holds both topics' messages, an upsert table the latest row per key
// over both (the new topic's messages replace old rows by key, keys it does not repeat stay).
//
// A table (or dead-letter table) with live rows and no position floe can trust (its snapshots
// expired before the position was kept as a table property, a rollback past floe's commits, rows
// written by another engine) is listed as untrusted: `floe sync` refuses it unless told where to
// resume (resumeFrom), never guessing from the group's offsets or the log start. Told, its
// offsets are left aside and the topic starts where the user chose.

import { type Catalog, isNoSuch } from "../iceberg/catalog/catalog.ts";
import { Table } from "../iceberg/table.ts";
import type { Binding, Job } from "../job/job.ts";
import { deadLetterTableName, type SkippedTopic, selectTopics, TopicSelectionError } from "../job/topics.ts";
import type { TopicPartitionOffsets } from "../kafka/commit-offsets.ts";
import { assignedOnly, type OffsetPlan, offsetPlan, type ResumeFrom } from "../kafka/plan.ts";
import { classifyError } from "./classify-error.ts";
import {
  committedPosition,
  type KafkaPosition,
  noPosition,
  replacedTopicId,
  type TopicIds,
  untrustedPosition,
} from "./snapshot-offsets.ts";
import type { SyncSource } from "./source.ts";

/** A binding of the sync with its table and dead-letter table, each undefined until first written. */
export interface PlannedBinding {
  binding: Binding;
  table: Table | undefined;
  deadLetterTable: Table | undefined;
  /** The position each table holds (empty when none, or when it is not trusted and the sync resumes). */
  tablePosition: KafkaPosition;
  deadLetterPosition: KafkaPosition;
  /**
   * The table (the dead-letter table) holds no trusted position and the sync resumes where
   * told: its next commit must record the position even with nothing read.
   */
  resumed: { table: boolean; deadLetterTable: boolean };
}

/** A table with live rows and no position floe can trust, and why. */
export interface UntrustedTable {
  topic: string;
  /** `namespace.table` */
  table: string;
  reason: string;
}

/** A topic deleted and re-created since its table last recorded offsets. */
export interface RecreatedTopic {
  topic: string;
  /** `namespace.table`: the table (or its dead-letter table) whose offsets were of the old topic. */
  table: string;
  previousTopicId: string;
  topicId: string;
}

export interface SyncPlan {
  bindings: PlannedBinding[];
  skipped: readonly SkippedTopic[];
  offsets: OffsetPlan;
  /** The id of every selected topic the cluster gives one. */
  topicIds: TopicIds;
  recreated: RecreatedTopic[];
  /** Tables without a trusted position; a sync refuses them unless resumeFrom says where to go on. */
  untrusted: UntrustedTable[];
  resumeFrom?: ResumeFrom;
}

export interface PlanOptions {
  /** Where topics whose tables have no trusted position resume. */
  resumeFrom?: ResumeFrom;
  /**
   * The partitions this process was assigned as a member of the job's consumer group (the job's
   * `cluster:`): only they are planned. Absent: every partition of the selected topics.
   */
  assigned?: ReadonlyMap<string, readonly number[]>;
}

/** `catalog` undefined: there is none yet (an embedded warehouse never written), so no table either. */
export async function planSync(
  job: Job,
  source: SyncSource,
  catalog: Catalog | undefined,
  options: PlanOptions = {},
): Promise<SyncPlan> {
  const seen = await source.listTopics();
  await checkListedTopicsVisible(job, source, seen);
  const { selected, skipped } = selectVisibleTopics(job, source, seen);
  const bindings = await Promise.all(selected.map((binding) => loadBindingTables(catalog, job, binding)));
  const untrusted: UntrustedTable[] = [];
  const resumeFrom = new Map<string, ResumeFrom>();
  for (const t of bindings) {
    const topic = t.binding.topic;
    for (const [which, table] of [
      ["table", t.table],
      ["deadLetterTable", t.deadLetterTable],
    ] as const) {
      const reason = table && untrustedPosition(table.metadata, table.name);
      if (!table || reason === undefined) continue;
      untrusted.push({ topic, table: table.name, reason });
      if (options.resumeFrom === undefined) continue;
      // The untrusted table's offsets are left aside (committedPosition gives none for it). The
      // topic's table decides where the topic is read from; the dead-letter table does only
      // when the topic's table does not exist yet.
      t.resumed[which] = true;
      if (which === "table" || !t.table) resumeFrom.set(topic, options.resumeFrom);
    }
  }
  const topics = await source.describeTopics(selected.map((s) => s.topic));
  const topicIds = new Map(topics.flatMap(({ topic, topicId }) => (topicId === undefined ? [] : [[topic, topicId]])));
  const tableOffsets: TopicPartitionOffsets = new Map();
  const recreated: RecreatedTopic[] = [];
  for (const { table, deadLetterTable, binding } of bindings) {
    const { topic } = binding;
    const topicId = topicIds.get(topic);
    // The table's offsets are where the sync resumes; the dead-letter table's tell the topic's
    // identity when the table has none (every message so far was bad: the group's offsets are used).
    if (resumeFrom.has(topic)) continue;
    const [recorded] = [
      { table, position: positionOf(table) },
      { table: deadLetterTable, position: positionOf(deadLetterTable) },
    ].filter((r) => r.table !== undefined && r.position.offsets.has(topic));
    if (!recorded) continue;
    const previousTopicId = replacedTopicId(recorded.position, topic, topicId);
    if (previousTopicId && topicId) {
      recreated.push({ topic, table: recorded.table!.name, previousTopicId, topicId });
    } else if (recorded.table === table) {
      tableOffsets.set(topic, recorded.position.offsets.get(topic)!);
    }
  }
  const [watermarks, groupOffsets] = await Promise.all([
    source.listWatermarks(topics),
    source.readGroupOffsets(job.consumerGroup, topics),
  ]);
  const planned = offsetPlan({
    topics,
    consumerGroup: job.consumerGroup,
    watermarks,
    groupOffsets,
    tableOffsets,
    recreatedTopics: new Set(recreated.map((r) => r.topic)),
    resumeFrom,
  });
  const offsets = options.assigned ? assignedOnly(planned, options.assigned) : planned;
  return {
    bindings,
    skipped,
    offsets,
    topicIds,
    recreated,
    untrusted,
    ...(options.resumeFrom === undefined ? {} : { resumeFrom: options.resumeFrom }),
  };
}

function positionOf(table: Table | undefined): KafkaPosition {
  return table ? committedPosition(table.metadata, table.name) : noPosition();
}

/**
 * selectTopics, and when nothing is selected on a cluster that knows the source by name, a
 * reminder that the cluster lists only the topics the principal may Describe.
 */
function selectVisibleTopics(job: Job, source: SyncSource, seen: readonly string[]) {
  try {
    return selectTopics(job, seen);
  } catch (error) {
    if (!(error instanceof TopicSelectionError) || source.principal === undefined || job.topicPattern === undefined) {
      throw error;
    }
    throw new TopicSelectionError(
      `${error.message}. The cluster lists only the topics ${source.principal} may Describe; if a topic is missing, ` +
        `a cluster admin allows it with: kafka-acls.sh --add --allow-principal ${source.principal} --operation Read --operation Describe --topic <topic>`,
    );
  }
}

/**
 * A topic the job lists under streams (without topic_pattern, the topics it syncs) that the
 * cluster does not list is either absent or hidden: a principal without Describe on a topic does
 * not see it listed. Asked by name, the broker tells: a refusal fails the sync naming the ACL to
 * add; an absent topic is left out, as before.
 */
async function checkListedTopicsVisible(job: Job, source: SyncSource, seen: readonly string[]): Promise<void> {
  if (job.topicPattern !== undefined) return;
  const listed = new Set(seen);
  const unlisted = [...job.bindings.keys()].filter((topic) => !listed.has(topic));
  if (unlisted.length === 0) return;
  try {
    await source.describeTopics(unlisted);
  } catch (error) {
    if (classifyError(error).kind === "auth") throw error;
  }
}

async function loadBindingTables(catalog: Catalog | undefined, job: Job, binding: Binding): Promise<PlannedBinding> {
  const load = async (name: string) => {
    if (catalog === undefined) return undefined;
    try {
      return await Table.load(catalog, { namespace: [job.namespace], name });
    } catch (error) {
      if (isNoSuch(error)) return undefined;
      throw error;
    }
  };
  const [table, deadLetterTable] = await Promise.all([load(binding.table), load(deadLetterTableName(binding.table))]);
  return {
    binding,
    table,
    deadLetterTable,
    tablePosition: positionOf(table),
    deadLetterPosition: positionOf(deadLetterTable),
    resumed: { table: false, deadLetterTable: false },
  };
}
