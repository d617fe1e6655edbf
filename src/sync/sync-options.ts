// What a caller decides about one sync, beside the job and its connections.
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
  /** A commit lands at least every this many messages read (default 250,000). */
  maxMessagesPerCommit?: number;
  /** The run's id; a new one when absent. */
  runId?: string;
  /** Every event of the run, in order, as it happens. */
  onEvent?: (event: SyncEvent) => void;
}

// Measured with bench/sync.ts (1M messages of ~150 bytes): 100k, 250k and 500k messages per
// commit sync at the same rate, with peak RSS of about 560, 720 and 960 MB (append).
export const DEFAULT_MAX_MESSAGES_PER_COMMIT = 250_000;
