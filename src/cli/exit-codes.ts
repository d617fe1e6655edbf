// Exit codes of every floe command, for scripts and schedulers.
export const ExitCode = {
  OK: 0,
  /** The run failed: Kafka, the catalog or a commit; nothing past the last successful commit landed. */
  FAILED: 1,
  /** The command line or the job file is wrong; nothing was done. */
  USAGE: 2,
  /** Messages expired unread (retention); rerun with --accept-data-loss to go on. */
  DATA_LOSS: 3,
  /** Reading stopped early (broker loss, rebalance, Ctrl-C): what was read landed; run again to resume. */
  PARTIAL: 4,
  /**
   * Another process is syncing the job, or committed its messages while this run read them, or
   * other writers kept committing to a table through every commit retry; run again later.
   */
  BUSY: 5,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
