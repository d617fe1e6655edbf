// The catalog: the one place that knows which metadata file is a table's current state, and
// swaps it atomically on commit (spec "Overview": a commit is an atomic swap of the metadata
// file pointer). floe talks to REST catalogs (Unity, Polaris, Lakekeeper, ...) and to its own
// embedded SQL catalog through this one interface; both accept the same TableRequirement /
// TableUpdate vocabulary, so the commit code does not know which one it talks to.
//
// Errors name the catalog call and the table ("loadTable kafka_topics.orders: ..."), so a
// failing sync says what it was doing without a stack trace.
import { IcebergError, type IcebergErrorKind } from "../errors.ts";
import type { FileIO } from "../io/file-io.ts";
import type { TableMetadata } from "../spec/table-metadata.ts";
import type { NewTable, TableRequirement, TableUpdate } from "../spec/table-update.ts";

export { CommitConflictError } from "../spec/table-update.ts";

export interface TableIdentifier {
  readonly namespace: readonly string[];
  readonly name: string;
}

export interface LoadedTable {
  readonly identifier: TableIdentifier;
  readonly metadata: TableMetadata;
  /** The metadata file the catalog points at; it changes with every commit. */
  readonly metadataLocation: string;
  /** Reads and writes the table's files, with the credentials the catalog vended for this table. */
  readonly io: FileIO;
}

/** What createTable needs; the catalog chooses the location when none is given. */
export type TableCreation = Omit<NewTable, "location"> & { location?: string };

export interface Catalog {
  readonly name: string;
  /** Namespaces directly under `parent` (top level when absent), each as its full list of levels. */
  listNamespaces(parent?: readonly string[]): Promise<string[][]>;
  createNamespace(namespace: readonly string[], properties?: Readonly<Record<string, string>>): Promise<void>;
  namespaceExists(namespace: readonly string[]): Promise<boolean>;
  dropNamespace(namespace: readonly string[]): Promise<void>;
  listTables(namespace: readonly string[]): Promise<TableIdentifier[]>;
  tableExists(identifier: TableIdentifier): Promise<boolean>;
  loadTable(identifier: TableIdentifier): Promise<LoadedTable>;
  createTable(identifier: TableIdentifier, table: TableCreation): Promise<LoadedTable>;
  /** `purge` also asks the catalog to delete the table's files (REST: purgeRequested). */
  dropTable(identifier: TableIdentifier, options?: { purge?: boolean }): Promise<void>;
  /**
   * Applies `updates` if every requirement holds, atomically. Throws CommitConflictError when a
   * requirement fails or another writer won (reload and rebuild), a CatalogError of kind
   * commit-state-unknown when the outcome is unknown (reload and look for the snapshot before anything else).
   */
  commitTable(
    identifier: TableIdentifier,
    requirements: readonly TableRequirement[],
    updates: readonly TableUpdate[],
  ): Promise<LoadedTable>;
  /** Releases connections (the SQL catalog's database handle). */
  close(): Promise<void>;
}

export function namespaceToString(namespace: readonly string[]): string {
  return namespace.join(".");
}

export function identifierToString(identifier: TableIdentifier): string {
  return [...identifier.namespace, identifier.name].join(".");
}

/** What a not-found catalog call found missing, as the REST spec's NoSuchTable/NoSuchNamespaceException say. */
export type CatalogMissing = "table" | "namespace";

export interface CatalogErrorOptions extends ErrorOptions {
  /** The HTTP status the catalog answered; absent when it answered none (unreachable, the SQL catalog). */
  status?: number | undefined;
  /** With kind not-found: the table or the namespace of the call does not exist. */
  missing?: CatalogMissing | undefined;
}

/**
 * A failed catalog call. One class for every catalog failure: what failed is its kind (errors.ts:
 * not-found, already-exists, validation for a namespace that is not empty, commit-state-unknown,
 * auth, io for a catalog that cannot be reached or is overloaded, ...), and from the kind whether a
 * retry can help; `call` is the catalog call and its subject ("loadTable ns.t"), `status` the
 * HTTP status of a REST answer, `missing` what a not-found call found missing. Callers test the
 * kind (isCatalogError), not a class: a REST and the SQL catalog say the same failure alike.
 */
export class CatalogError extends IcebergError {
  readonly call: string;
  readonly status: number | undefined;
  readonly missing: CatalogMissing | undefined;
  constructor(kind: IcebergErrorKind, call: string, message: string, options: CatalogErrorOptions = {}) {
    const { status, missing, ...errorOptions } = options;
    super(kind, `${call}: ${message}`, errorOptions);
    this.name = "CatalogError";
    this.call = call;
    this.status = status;
    this.missing = missing;
  }
}

/** Whether `error` is a CatalogError, of `kind` when given. */
export function isCatalogError(error: unknown, kind?: IcebergErrorKind): error is CatalogError {
  return error instanceof CatalogError && (kind === undefined || error.kind === kind);
}

/** A call that failed because the table or namespace it names does not exist. */
export function isNoSuch(error: unknown, missing?: CatalogMissing): error is CatalogError {
  return (
    isCatalogError(error, "not-found") &&
    error.missing !== undefined &&
    (missing === undefined || error.missing === missing)
  );
}

/** The table or namespace of `call` does not exist. */
export function noSuch(missing: CatalogMissing, call: string, detail = `the ${missing} does not exist`): CatalogError {
  return new CatalogError("not-found", call, detail, { missing });
}

/**
 * The commit may or may not have landed (REST 500/502/503/504, or the connection broke after
 * the request went out). Reload the table and look for the snapshot id before retrying, and
 * never delete the commit's files meanwhile: they may already be live.
 */
export function commitStateUnknown(call: string, detail: string, options?: CatalogErrorOptions): CatalogError {
  return new CatalogError(
    "commit-state-unknown",
    call,
    `commit state unknown: ${detail}; reload the table to see whether the commit landed`,
    options,
  );
}

/**
 * A refusal the catalog answered with an HTTP status (REST 400/406/422, a server error, an answer
 * that is not what the spec says): its kind follows the status unless given.
 */
export function refused(call: string, detail: string, status: number, kind = kindOfStatus(status)): CatalogError {
  return new CatalogError(kind, call, `HTTP ${status}: ${detail}`, { status });
}

/** What an HTTP error status says about a request (RFC 9110; the REST spec's error responses). */
export function kindOfStatus(status: number | undefined): IcebergErrorKind {
  switch (status) {
    case 401:
    case 403:
    case 419:
      return "auth";
    case 404:
      return "not-found";
    case 405:
    case 406:
    case 501:
      return "unsupported";
    case 409:
      return "conflict";
    case 408:
    case 429:
      return "io";
    default:
      return status !== undefined && status >= 500 ? "io" : "validation";
  }
}
