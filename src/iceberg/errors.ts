// The one error type of iceberg/. Every failure that comes from the input or the state of a
// table, a catalog or a file (not from a bug in floe) is an IcebergError that says what kind
// of failure it is and whether trying again can succeed, so that the commit loop, the CLI and
// a scheduler decide from the same two facts. Its message names the place: the file, the
// table, the catalog call, and in a malformed document the JSON path of the problem.
//
// The classes that callers tell apart with instanceof (CommitConflictError, ValidationError, ...)
// are subclasses; each takes its kind, and so its retryable flag, from here. A catalog's failures
// are one CatalogError, told apart by its kind (catalog/catalog.ts).

export type IcebergErrorKind =
  /** The change or request is not valid against the table or catalog as they are: something must change first. */
  | "validation"
  /** Another writer committed first: refresh, rebuild the change on the new state, commit again. */
  | "conflict"
  /** A commit may or may not have landed: reload and look for it before anything else, never delete its files. */
  | "commit-state-unknown"
  /** No such table, namespace, warehouse or file. */
  | "not-found"
  /** What was to be created exists already. */
  | "already-exists"
  /** Valid Iceberg, or a valid setting, that floe does not read or write (yet). */
  | "unsupported"
  /** A file or document that breaks its format: metadata JSON, a REST response, Avro, Puffin, Parquet. */
  | "corrupt"
  /** The catalog or the storage failed on the way: unreachable, timed out, overloaded (429, 5xx). */
  | "io"
  /** Credentials refused, or a privilege missing: a catalog grant, a file's permissions, a read-only file system. */
  | "auth";

/** Whether the same operation, tried again after a backoff (and a refresh), can succeed unchanged. */
const RETRYABLE: Readonly<Record<IcebergErrorKind, boolean>> = {
  validation: false,
  conflict: true,
  "commit-state-unknown": true,
  "not-found": false,
  "already-exists": false,
  unsupported: false,
  corrupt: false,
  io: true,
  auth: false,
};

export const ICEBERG_ERROR_KINDS = Object.keys(RETRYABLE) as readonly IcebergErrorKind[];

export class IcebergError extends Error {
  readonly kind: IcebergErrorKind;
  readonly retryable: boolean;

  constructor(kind: IcebergErrorKind, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "IcebergError";
    this.kind = kind;
    this.retryable = RETRYABLE[kind];
  }
}

/** The kind of an IcebergError; undefined for any other error. */
export function errorKind(error: unknown): IcebergErrorKind | undefined {
  return error instanceof IcebergError ? error.kind : undefined;
}

/**
 * Whether trying again can succeed: an IcebergError's flag, or the boolean `retryable` that an
 * error of another module carries; false for anything else (a bug does not go away by itself).
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof IcebergError) return error.retryable;
  const flag = (error as { retryable?: unknown } | null | undefined)?.retryable;
  return typeof flag === "boolean" ? flag : false;
}

/**
 * Runs `decode` over the bytes read from the file at `location`: a corrupt-file error it raises
 * gets the location in front of its message, and any other error from a decoder (avsc,
 * hyparquet, a TextDecoder) becomes one, since bytes that a decoder rejects are a corrupt file.
 * Reading the bytes stays outside: a failing read is the IO layer's error, not a corrupt file.
 */
export function decodingFile<T>(location: string, decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    throw asCorruptFile(location, error);
  }
}

/** decodingFile for a decoder that awaits (hyparquet's reader). */
export async function decodingFileAsync<T>(location: string, decode: () => Promise<T>): Promise<T> {
  try {
    return await decode();
  } catch (error) {
    throw asCorruptFile(location, error);
  }
}

function asCorruptFile(location: string, error: unknown): unknown {
  if (error instanceof IcebergError && error.kind !== "corrupt") return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof IcebergError && message.startsWith(`${location}: `)) return error;
  return new IcebergError("corrupt", `${location}: ${message}`, { cause: error });
}
