/**
 * A concurrent change that retrying cannot absorb (spec "Commit Conflict Resolution": the
 * operation's assumptions no longer hold, e.g. a deleted-from data file was compacted away).
 * The caller must recompute its change from the refreshed table.
 */
export class ValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ValidationError";
  }
}
