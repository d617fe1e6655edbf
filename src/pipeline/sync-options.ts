// What a caller decides about one sync, beside the job and its connections: the one declaration
// of these options. The ones a person chooses (the flags of `floe sync` and `floe run`) travel
// as one SyncChoices object through the scheduler and the recorded sync to here, never copied
// field by field at each hop.
import type { MemberLease } from "../kafka/group-member.ts";
import type { ResumeFrom } from "../kafka/plan.ts";
import type { SyncEvent } from "./events.ts";

export interface SyncOptions {
  /** Where the upsert key indexes live. */
  stateDir: string;
  /** Go on although messages expired unread (retention): the loss is reported, never silent. */
  acceptDataLoss?: boolean;
  /**
   * Where a topic resumes when its table (or dead-letter table) holds rows but no position floe
   * can trust; without it such a sync fails (PositionUnknownError). Tables with a trusted
   * position are not affected.
   */
  resumeFrom?: ResumeFrom;
  /** Stops reading; what was read is committed. */
  signal?: AbortSignal;
  /**
   * Keep reading as messages come, committing by the job's commit: limits, until the signal or
   * `until` (ms since the epoch): a run of a continuous job.
   */
  continuous?: { until: number };
  /**
   * The sync runs as a member of the job's consumer group (the job's `cluster:`): it plans, reads
   * and acknowledges only the member's partitions, and commits the group's offsets as the member,
   * in its generation. The lease's signal is the caller's to combine into `signal`.
   */
  membership?: Pick<MemberLease, "memberId" | "generationId" | "partitions" | "commitOffsets">;
  /** The run's id; a new one when absent. */
  runId?: string;
  /** Every event of the run, in order, as it happens. */
  onEvent?: (event: SyncEvent) => void;
}

/** The options a person chooses for every sync of a command (its flags); the rest the command's own code sets. */
const SYNC_CHOICES = ["acceptDataLoss", "resumeFrom"] as const;
export type SyncChoices = Pick<SyncOptions, (typeof SYNC_CHOICES)[number]>;

/** The sync choices among a command's flags (the flags are named as the options), the others left out. */
export function syncChoices(flags: SyncChoices): SyncChoices {
  const choices: Record<string, unknown> = {};
  for (const key of SYNC_CHOICES) if (flags[key] !== undefined) choices[key] = flags[key];
  return choices as SyncChoices;
}
