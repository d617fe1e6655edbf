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
   * requirement fails or another writer won (reload and rebuild), CommitStateUnknownError when
   * the outcome is unknown (reload and look for the snapshot before anything else).
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

/**
 * Base of the catalog errors: `call` is the catalog call and its subject, e.g. "loadTable ns.t".
 * Each subclass has one kind; a CatalogError itself names its kind.
 */
export class CatalogError extends IcebergError {
  readonly call: string;
  constructor(kind: IcebergErrorKind, call: string, message: string, options?: ErrorOptions) {
    super(kind, `${call}: ${message}`, options);
    this.name = "CatalogError";
    this.call = call;
  }
}

export class NoSuchTableError extends CatalogError {
  constructor(call: string, detail = "the table does not exist") {
    super("not-found", call, detail);
    this.name = "NoSuchTableError";
  }
}

export class NoSuchNamespaceError extends CatalogError {
  constructor(call: string, detail = "the namespace does not exist") {
    super("not-found", call, detail);
    this.name = "NoSuchNamespaceError";
  }
}

export class AlreadyExistsError extends CatalogError {
  constructor(call: string, detail = "it already exists") {
    super("already-exists", call, detail);
    this.name = "AlreadyExistsError";
  }
}

export class NamespaceNotEmptyError extends CatalogError {
  constructor(call: string, detail = "the namespace still holds tables or namespaces") {
    super("validation", call, detail);
    this.name = "NamespaceNotEmptyError";
  }
}

/**
 * The commit may or may not have landed (REST 500/502/503/504, or the connection broke after
 * the request went out). Reload the table and look for the snapshot id before retrying, and
 * never delete the commit's files meanwhile: they may already be live.
 */
export class CommitStateUnknownError extends CatalogError {
  constructor(call: string, detail: string, options?: ErrorOptions) {
    super(
      "commit-state-unknown",
      call,
      `commit state unknown: ${detail}; reload the table to see whether the commit landed`,
      options,
    );
    this.name = "CommitStateUnknownError";
  }
}

/** 401/403 (or a refused token request): the credentials are wrong or lack a privilege. */
export class CatalogAuthError extends CatalogError {
  readonly status: number;
  constructor(call: string, status: number, detail: string) {
    super("auth", call, detail);
    this.name = "CatalogAuthError";
    this.status = status;
  }
}

/** No connection to the catalog at all: refused, unknown host, TLS failure, timeout. */
export class CatalogUnreachableError extends CatalogError {
  constructor(call: string, detail: string, options?: ErrorOptions) {
    super("io", call, detail, options);
    this.name = "CatalogUnreachableError";
  }
}

/**
 * Any other refusal: a malformed or invalid request (REST 400/406/422), a server error, an
 * answer that is not what the spec says. Its kind follows the HTTP status unless given.
 */
export class CatalogRequestError extends CatalogError {
  readonly status: number | undefined;
  constructor(call: string, detail: string, options: { status?: number; kind?: IcebergErrorKind } = {}) {
    const { status } = options;
    super(options.kind ?? kindOfStatus(status), call, status === undefined ? detail : `HTTP ${status}: ${detail}`);
    this.name = "CatalogRequestError";
    this.status = status;
  }
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
