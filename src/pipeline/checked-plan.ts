// The plan step of a sync: the plan (plan-sync.ts) announced as the `planned` event, then the
// refusals a sync makes before it reads a message. Each refusal guards against a position the
// sync cannot trust: tables whose position is unknown, resume offsets past the end of the log,
// messages expired unread. The job's namespace is created here too (unless a table was just loaded
// from it), so that the write step only ever creates tables.
import { type Catalog, isCatalogError } from "../iceberg/catalog/catalog.ts";
import type { Job } from "../job/job.ts";
import { MessagesLostError, OffsetsAheadError } from "../kafka/plan.ts";
import type { SyncEventBody } from "./events.ts";
import { planSync, type SyncPlan } from "./plan-sync.ts";
import { PositionUnknownError } from "./snapshot-offsets.ts";
import type { SyncSource } from "./source.ts";
import type { SyncOptions } from "./sync-options.ts";

/** The sync's plan once announced and checked; throws the refusal otherwise. */
export async function checkedPlan(
  job: Job,
  source: SyncSource,
  catalog: Catalog,
  options: Pick<SyncOptions, "resumeFrom" | "acceptDataLoss" | "membership">,
  emit: (event: SyncEventBody) => void,
): Promise<SyncPlan> {
  const plan = await planSync(job, source, catalog, {
    ...(options.resumeFrom === undefined ? {} : { resumeFrom: options.resumeFrom }),
    ...(options.membership ? { assigned: options.membership.partitions } : {}),
  });
  const { bindings, skipped, offsets, recreated, untrusted } = plan;
  emit({
    type: "planned",
    tables: bindings.map(({ binding, table }) => ({
      topic: binding.topic,
      table: `${job.namespace}.${binding.table}`,
      mode: binding.mode,
      exists: table !== undefined,
    })),
    partitions: offsets.partitions,
    messagesToRead: offsets.offsetsToRead,
    skippedTopics: skipped,
    lostMessages: offsets.lost,
    recreatedTopics: recreated,
  });
  // A table with rows and no position floe can trust: resuming from the group or the log start
  // could land its messages twice or skip some; the user says where (--resume-from).
  if (untrusted.length > 0 && options.resumeFrom === undefined) throw new PositionUnknownError(untrusted);
  // A table just loaded from the namespace shows that it exists (a round trip to the catalog less
  // at every sync of a job whose tables are there).
  if (!bindings.some((b) => b.table !== undefined || b.deadLetterTable !== undefined)) {
    await ensureNamespace(catalog, [job.namespace]);
  }
  // A resume offset past the end of the log: the topic was re-created or truncated, and the
  // offsets the tables hold name other messages. Nothing is read there, so going on would
  // report a complete sync and later skip the new messages below the old offsets.
  if (offsets.ahead.length > 0) throw new OffsetsAheadError(offsets.ahead);
  if (offsets.lost.length > 0 && !options.acceptDataLoss) throw new MessagesLostError(offsets.lost);
  return plan;
}

async function ensureNamespace(catalog: Catalog, namespace: readonly string[]): Promise<void> {
  if (await catalog.namespaceExists(namespace)) return;
  try {
    await catalog.createNamespace(namespace);
  } catch (error) {
    // Created meanwhile by another sync of the job: it is there, as wanted.
    if (!isCatalogError(error, "already-exists")) throw error;
  }
}
