// The embedded catalog: a local warehouse directory and a SQLite database laid out as Java's
// JdbcCatalog (schema V1) and PyIceberg's SqlCatalog lay it out, so either can open a floe
// warehouse and floe can open theirs:
//
//   iceberg_tables(catalog_name, table_namespace, table_name, metadata_location,
//                  previous_metadata_location, iceberg_type)      -- iceberg_type 'TABLE' | 'VIEW' | NULL
//   iceberg_namespace_properties(catalog_name, namespace, property_key, property_value)
//
// Namespaces are stored as their levels joined by "."; a namespace exists when a table row or
// a property row names it or a namespace below it ("exists" = "true" marks an empty one).
// Rows of other catalog names in the same database are other catalogs, untouched.
//
// Commit is optimistic, as in JdbcTableOperations: read the current metadata, check the
// requirements, apply the updates, write a new metadata file, then swap the pointer with a
// compare-and-set UPDATE on the old metadata_location. No row changed: another writer won.
// WAL mode and a busy timeout let several processes commit to one database.
//
// Tables are placed at <warehouse>/<namespace levels as directories>/<table> as JdbcCatalog
// places them (and the REST fixture over it), or under the namespace's `location` property.
import { mkdirSync, realpathSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve, sep } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { openSqlite, transaction } from "../../lib/sqlite.ts";
import { IcebergError, type IcebergErrorKind } from "../errors.ts";
import type { FileIO, FileIOFactory } from "../io/file-io.ts";
import { fileSystemErrorKind, localFileIO, localPath } from "../io/local-file-io.ts";
import {
  applyUpdates,
  CommitConflictError,
  checkRequirements,
  newTableMetadata,
  type TableRequirement,
  type TableUpdate,
} from "../spec/table-update.ts";
import {
  type Catalog,
  CatalogError,
  identifierToString,
  type LoadedTable,
  namespaceToString,
  noSuch,
  type TableCreation,
  type TableIdentifier,
} from "./catalog.ts";
import {
  metadataFileLocation,
  metadataFileVersion,
  readMetadataFile,
  withPreviousMetadataFile,
  writeMetadataFile,
} from "./metadata-file.ts";

export interface SqlCatalogOptions {
  /** The warehouse directory; tables go under it. */
  warehouse: string;
  /** The catalog_name of this catalog's rows (PyIceberg's and Java's catalog name). Default "floe". */
  name?: string;
  /**
   * The SQLite database: a path, sqlite:///<path> (SQLAlchemy, as PyIceberg takes it) or
   * jdbc:sqlite:<path> (as Java takes it). Default <warehouse>/catalog.db.
   */
  uri?: string;
  fileIO?: FileIOFactory;
  /** How long a writer waits for another's lock on the database. */
  busyTimeoutMs?: number;
}

const NAMESPACE_EXISTS_PROPERTY = "exists";
const NAMESPACE_LOCATION_PROPERTY = "location";
const SQLITE_CONSTRAINT = 19;
const SQLITE_READONLY = 8;
const SQLITE_CANTOPEN = 14;

/**
 * Opens (creating if needed) the warehouse directory and its catalog database. A directory or a
 * database floe cannot write fails here, naming the path and what floe tried to do there.
 */
export async function openSqlCatalog(options: SqlCatalogOptions): Promise<SqlCatalog> {
  // An object-store warehouse (gs://, s3://, abfss://...) holds the tables; the database stays local.
  const remote = /^[a-z][a-z0-9+.-]*:\/\//i.test(options.warehouse) && !options.warehouse.startsWith("file:");
  const warehouse = remote ? options.warehouse.replace(/\/+$/, "") : resolve(options.warehouse);
  const call = `opening the sql catalog in ${warehouse}`;
  if (remote && options.uri === undefined) {
    throw new CatalogError(
      "validation",
      call,
      "a warehouse in an object store needs the catalog database's path (uri)",
    );
  }
  const database = options.uri === undefined ? join(warehouse, "catalog.db") : databasePath(options.uri);
  const attempt = <T>(what: string, work: () => T): T => {
    try {
      return work();
    } catch (error) {
      throw new CatalogError(storageKind(error), call, `cannot ${what}: ${storageProblem(error, dirname(database))}`, {
        cause: error,
      });
    }
  };
  if (!remote) attempt(`create the warehouse directory ${warehouse}`, () => mkdirSync(warehouse, { recursive: true }));
  attempt(`create the directory ${dirname(database)} of the catalog database`, () =>
    mkdirSync(dirname(database), { recursive: true }),
  );
  const db = attempt(
    `open or create the catalog database ${database}`,
    // WAL, persistent for the database file: readers never block the writer and vice versa.
    () => openSqlite(database, { busyTimeoutMs: options.busyTimeoutMs ?? 30_000 }),
  );
  try {
    return attempt(
      `set up the catalog tables in ${database}`,
      () => new SqlCatalog(options.name ?? "floe", warehouse, db, options.fileIO ?? localFileIO),
    );
  } catch (error) {
    db.close();
    throw error;
  }
}

/** What kind of failure a file system or SQLite step met: a permission, a missing file, or the storage itself. */
function storageKind(error: unknown): IcebergErrorKind {
  const e = error as { code?: unknown; errcode?: unknown };
  const sqlite = typeof e.errcode === "number" ? e.errcode & 0xff : undefined;
  if (sqlite === SQLITE_CANTOPEN || sqlite === SQLITE_READONLY) return "auth";
  return fileSystemErrorKind(e.code);
}

/** Why a file system or SQLite step failed, in words that say what to change. */
function storageProblem(error: unknown, directory: string): string {
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown };
  const message = String(e.message ?? error);
  const who = typeof process.getuid === "function" ? ` (uid ${process.getuid()})` : "";
  // SQLite's primary result codes, the low byte of the extended code.
  const sqlite = typeof e.errcode === "number" ? e.errcode & 0xff : undefined;
  if (sqlite === SQLITE_CANTOPEN) {
    return (
      `SQLite cannot create or open the file (${message}): the directory ${directory} must be writable by this ` +
      `user${who}, for the database and its -wal and -shm files`
    );
  }
  if (sqlite === SQLITE_READONLY) {
    return `the database or its directory ${directory} is read-only for this user${who} (${message})`;
  }
  if (e.code === "EACCES" || e.code === "EPERM") return `permission denied for this user${who} (${message})`;
  if (e.code === "EROFS") return `the file system is read-only (${message})`;
  return message;
}

/** The file behind a database URI, in any of the forms PyIceberg, Java or a person would write. */
export function databasePath(uri: string): string {
  let path = uri;
  if (path.startsWith("sqlite:///")) {
    // SQLAlchemy: sqlite:///relative.db, sqlite:////absolute.db
    path = path.slice("sqlite:///".length);
  } else if (path.startsWith("jdbc:sqlite:")) {
    path = path.slice("jdbc:sqlite:".length).replace(/^file:/, "");
  } else if (path.startsWith("file:")) {
    path = localPath(path);
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(path)) {
    throw new IcebergError(
      "validation",
      `sql catalog: ${JSON.stringify(uri)} is not a SQLite database (give a path or sqlite:///<path>)`,
    );
  }
  path = path.replace(/\?.*$/, "");
  return isAbsolute(path) ? path : resolve(path);
}

interface TableRow {
  metadata_location: string | null;
}

export class SqlCatalog implements Catalog {
  readonly name: string;
  readonly warehouse: string;
  readonly #db: DatabaseSync;
  readonly #fileIO: FileIOFactory;
  /** False on a V0 database (no iceberg_type column, no views): rows are then all tables. */
  readonly #typed: boolean;
  /** The SQL condition that leaves views (JdbcCatalog V1) out of table lookups. */
  readonly #isTable: string;

  constructor(name: string, warehouse: string, db: DatabaseSync, fileIO: FileIOFactory) {
    this.name = name;
    this.warehouse = warehouse;
    this.#db = db;
    this.#fileIO = fileIO;
    db.exec(`CREATE TABLE IF NOT EXISTS iceberg_tables (
      catalog_name VARCHAR(255) NOT NULL,
      table_namespace VARCHAR(255) NOT NULL,
      table_name VARCHAR(255) NOT NULL,
      metadata_location VARCHAR(1000),
      previous_metadata_location VARCHAR(1000),
      iceberg_type VARCHAR(5),
      PRIMARY KEY (catalog_name, table_namespace, table_name))`);
    db.exec(`CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
      catalog_name VARCHAR(255) NOT NULL,
      namespace VARCHAR(255) NOT NULL,
      property_key VARCHAR(255),
      property_value VARCHAR(1000),
      PRIMARY KEY (catalog_name, namespace, property_key))`);
    const columns = db.prepare("PRAGMA table_info(iceberg_tables)").all() as { name: string }[];
    this.#typed = columns.some((c) => c.name === "iceberg_type");
    this.#isTable = this.#typed ? "(iceberg_type = 'TABLE' OR iceberg_type IS NULL)" : "1 = 1";
  }

  async listNamespaces(parent: readonly string[] = []): Promise<string[][]> {
    const call = parent.length ? `listNamespaces ${namespaceToString(parent)}` : "listNamespaces";
    if (parent.length && !(await this.namespaceExists(parent))) throw noSuch("namespace", call);
    const rows = this.#db
      .prepare(
        `SELECT table_namespace AS ns FROM iceberg_tables WHERE catalog_name = ?
         UNION SELECT namespace AS ns FROM iceberg_namespace_properties WHERE catalog_name = ?`,
      )
      .all(this.name, this.name) as { ns: string }[];
    const children = new Map<string, string[]>();
    for (const { ns } of rows) {
      const levels = ns.split(".");
      if (levels.length > parent.length && parent.every((level, i) => levels[i] === level)) {
        const child = levels.slice(0, parent.length + 1);
        children.set(namespaceToString(child), child);
      }
    }
    return [...children.values()];
  }

  async createNamespace(
    namespace: readonly string[],
    properties: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    const call = `createNamespace ${namespaceToString(namespace)}`;
    const ns = this.#namespaceKey(call, namespace);
    if (await this.namespaceExists(namespace))
      throw new CatalogError("already-exists", call, "the namespace already exists");
    const insert = this.#db.prepare(
      "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) VALUES (?, ?, ?, ?)",
    );
    try {
      transaction(this.#db, () => {
        for (const [key, value] of Object.entries({ ...properties, [NAMESPACE_EXISTS_PROPERTY]: "true" })) {
          insert.run(this.name, ns, key, value);
        }
      });
    } catch (error) {
      if (isConstraintViolation(error)) throw new CatalogError("already-exists", call, "the namespace already exists");
      throw error;
    }
  }

  async namespaceExists(namespace: readonly string[]): Promise<boolean> {
    const ns = namespaceToString(namespace);
    // The namespace itself, or one below it (JdbcUtil.namespaceExists); ! escapes LIKE wildcards.
    const below = `${ns.replace(/[!_%]/g, "!$&")}.%`;
    const found = this.#db
      .prepare(
        `SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND (table_namespace = ? OR table_namespace LIKE ? ESCAPE '!')
         UNION ALL
         SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND (namespace = ? OR namespace LIKE ? ESCAPE '!')
         LIMIT 1`,
      )
      .get(this.name, ns, below, this.name, ns, below);
    return found !== undefined;
  }

  async dropNamespace(namespace: readonly string[]): Promise<void> {
    const call = `dropNamespace ${namespaceToString(namespace)}`;
    if (!(await this.namespaceExists(namespace))) throw noSuch("namespace", call);
    const tables = await this.listTables(namespace);
    if (tables.length > 0)
      throw new CatalogError("validation", call, `the namespace still holds ${tables.length} table(s)`);
    const children = await this.listNamespaces(namespace);
    if (children.length > 0) {
      throw new CatalogError("validation", call, `the namespace still holds ${children.length} namespace(s)`);
    }
    this.#db
      .prepare("DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?")
      .run(this.name, namespaceToString(namespace));
  }

  async listTables(namespace: readonly string[]): Promise<TableIdentifier[]> {
    const call = `listTables ${namespaceToString(namespace)}`;
    if (!(await this.namespaceExists(namespace))) throw noSuch("namespace", call);
    const rows = this.#db
      .prepare(
        `SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND ${this.#isTable} ORDER BY table_name`,
      )
      .all(this.name, namespaceToString(namespace)) as { table_name: string }[];
    return rows.map((r) => ({ namespace: [...namespace], name: r.table_name }));
  }

  async tableExists(identifier: TableIdentifier): Promise<boolean> {
    return this.#row(identifier) !== undefined;
  }

  async loadTable(identifier: TableIdentifier): Promise<LoadedTable> {
    const call = `loadTable ${identifierToString(identifier)}`;
    const location = this.#currentMetadataLocation(call, identifier);
    const metadata = await readMetadataFile(this.#tableIO(location), location);
    return { identifier, metadata, metadataLocation: location, io: this.#tableIO(metadata.location) };
  }

  async createTable(identifier: TableIdentifier, table: TableCreation): Promise<LoadedTable> {
    const call = `createTable ${identifierToString(identifier)}`;
    const ns = this.#namespaceKey(call, identifier.namespace);
    if (!(await this.namespaceExists(identifier.namespace))) throw noSuch("namespace", call);
    if (this.#row(identifier) !== undefined) throw new CatalogError("already-exists", call, "the table already exists");
    const location = table.location ?? this.#defaultLocation(identifier);
    const metadata = newTableMetadata({ ...table, location }, BigInt(Date.now()));
    const io = this.#tableIO(metadata.location);
    const metadataLocation = metadataFileLocation(metadata, 0);
    await writeMetadataFile(io, metadataLocation, metadata);
    try {
      this.#db
        .prepare(
          this.#typed
            ? "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type) VALUES (?, ?, ?, ?, NULL, 'TABLE')"
            : "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location) VALUES (?, ?, ?, ?, NULL)",
        )
        .run(this.name, ns, identifier.name, metadataLocation);
    } catch (error) {
      // The file was never referenced: nobody can be reading it.
      await io.delete(metadataLocation);
      if (isConstraintViolation(error)) throw new CatalogError("already-exists", call, "the table already exists");
      throw error;
    }
    return { identifier, metadata, metadataLocation, io };
  }

  async dropTable(identifier: TableIdentifier, options: { purge?: boolean } = {}): Promise<void> {
    const call = `dropTable ${identifierToString(identifier)}`;
    const purgeDir = options.purge
      ? this.#purgeDir(call, (await this.loadTable(identifier)).metadata.location)
      : undefined;
    const { changes } = this.#db
      .prepare(
        `DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND ${this.#isTable}`,
      )
      .run(this.name, namespaceToString(identifier.namespace), identifier.name);
    if (changes === 0) throw noSuch("table", call);
    if (purgeDir !== undefined) await rm(purgeDir, { recursive: true, force: true });
  }

  async commitTable(
    identifier: TableIdentifier,
    requirements: readonly TableRequirement[],
    updates: readonly TableUpdate[],
  ): Promise<LoadedTable> {
    const call = `commitTable ${identifierToString(identifier)}`;
    const baseLocation = this.#currentMetadataLocation(call, identifier);
    const base = await readMetadataFile(this.#tableIO(baseLocation), baseLocation);
    let next: typeof base;
    try {
      checkRequirements(base, requirements);
      next = withPreviousMetadataFile(applyUpdates(base, updates, BigInt(Date.now())), base, baseLocation);
    } catch (error) {
      if (error instanceof CommitConflictError) throw new CommitConflictError(`${call}: ${error.message}`);
      // An update the spec forbids: the request is wrong, as a REST catalog's 400 says.
      throw new CatalogError("validation", call, error instanceof Error ? error.message : String(error));
    }
    const io = this.#tableIO(next.location);
    const metadataLocation = metadataFileLocation(next, metadataFileVersion(baseLocation) + 1);
    await writeMetadataFile(io, metadataLocation, next);
    let changes: number | bigint;
    try {
      ({ changes } = this.#db
        .prepare(
          `UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?
           WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ? AND ${this.#isTable}`,
        )
        .run(
          metadataLocation,
          baseLocation,
          this.name,
          namespaceToString(identifier.namespace),
          identifier.name,
          baseLocation,
        ));
    } catch (error) {
      // SQLite rolled the statement back: the new file is referenced by nothing.
      await io.delete(metadataLocation);
      throw new CatalogError(
        storageKind(error),
        call,
        `the catalog database refused the commit: ${(error as Error).message}`,
      );
    }
    if (Number(changes) === 0) {
      await io.delete(metadataLocation);
      throw new CommitConflictError(
        `${call}: another writer committed first (the table is no longer at ${baseLocation})`,
      );
    }
    return { identifier, metadata: next, metadataLocation, io };
  }

  async close(): Promise<void> {
    if (this.#db.isOpen) this.#db.close();
  }

  #row(identifier: TableIdentifier): TableRow | undefined {
    return this.#db
      .prepare(
        `SELECT metadata_location FROM iceberg_tables
         WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND ${this.#isTable}`,
      )
      .get(this.name, namespaceToString(identifier.namespace), identifier.name) as TableRow | undefined;
  }

  #currentMetadataLocation(call: string, identifier: TableIdentifier): string {
    const row = this.#row(identifier);
    if (row === undefined) throw noSuch("table", call);
    if (!row.metadata_location) throw noSuch("table", call, "the catalog row has no metadata_location");
    return row.metadata_location;
  }

  #tableIO(location: string): FileIO {
    return this.#fileIO(location, {});
  }

  /** Namespace levels are joined by "." in the database, so a level cannot contain one. */
  #namespaceKey(call: string, namespace: readonly string[]): string {
    if (namespace.length === 0 || namespace.some((level) => level === "" || level.includes("."))) {
      throw new CatalogError("validation", call, "namespace levels must be non-empty and contain no '.'");
    }
    return namespaceToString(namespace);
  }

  #defaultLocation(identifier: TableIdentifier): string {
    const ns = namespaceToString(identifier.namespace);
    const row = this.#db
      .prepare(
        "SELECT property_value FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? AND property_key = ?",
      )
      .get(this.name, ns, NAMESPACE_LOCATION_PROPERTY) as { property_value: string } | undefined;
    if (row?.property_value) return `${row.property_value.replace(/\/+$/, "")}/${identifier.name}`;
    return [this.warehouse, ...identifier.namespace, identifier.name].join("/");
  }

  /**
   * The directory a purge deletes: the table's location, only inside the warehouse. A location
   * elsewhere may hold files that are not the table's, which only a manifest walk could tell.
   */
  #purgeDir(call: string, location: string): string {
    const dir = realpathOrSelf(localPath(location));
    if (!dir.startsWith(realpathOrSelf(this.warehouse) + sep)) {
      throw new CatalogError(
        "unsupported",
        call,
        `cannot purge a table located outside the warehouse ${this.warehouse} (${location}); drop it without purge`,
      );
    }
    return dir;
  }
}

function isConstraintViolation(error: unknown): boolean {
  const code = (error as { errcode?: unknown }).errcode;
  return typeof code === "number" && (code & 0xff) === SQLITE_CONSTRAINT;
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
