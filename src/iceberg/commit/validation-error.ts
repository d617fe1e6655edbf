import { IcebergError } from "../errors.ts";

/**
 * A concurrent change that retrying cannot absorb (spec "Commit Conflict Resolution": the
 * operation's assumptions no longer hold, e.g. a deleted-from data file was compacted away).
 * The caller must recompute its change from the refreshed table.
 */
export class ValidationError extends IcebergError {
  constructor(message: string) {
    super("validation", message);
    this.name = "ValidationError";
  }
}
