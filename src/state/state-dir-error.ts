// The state root, or a job's folder in it, cannot be created or opened (a read-only disk, a path
// through a file, missing permissions): a setting to fix, not worth retrying. The message names
// the path, what lives there, and the way out (make it writable or pass --state-dir).
export class StateDirError extends Error {
  override name = "StateDirError";
  readonly retryable = false;
}
