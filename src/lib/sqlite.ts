// The one way floe opens an embedded SQLite database (node:sqlite), for the run store, the
// config store, the lag store, the sql catalog and the job lock: the busy timeout each needs,
// its journal, a transaction that takes the write lock up front, and schema versions kept in
// SQLite's `user_version`.
//
// WAL (the default here) lets readers and the one writer proceed side by side, and the mode is
// persistent in the file. A lock file opts out: it holds no data, and under WAL an exclusive
// transaction no longer keeps other connections from reading.
import { DatabaseSync } from "node:sqlite";

export interface OpenSqliteOptions {
  /**
   * How long a statement waits for another connection's lock before SQLITE_BUSY, in ms; 0
   * fails at once (a lock that is tried, not waited for).
   */
  readonly busyTimeoutMs: number;
  /** The WAL journal; default true. */
  readonly wal?: boolean;
  /**
   * synchronous = NORMAL: with WAL, a power loss may lose the last transactions, never corrupt
   * the file; default SQLite's (FULL).
   */
  readonly synchronousNormal?: boolean;
  /** Enforce REFERENCES ... ON DELETE (off by default in SQLite, per connection). */
  readonly foreignKeys?: boolean;
}

/** Opens (creating it) the database at `path`; a failing pragma closes it again before the error is thrown. */
export function openSqlite(path: string, options: OpenSqliteOptions): DatabaseSync {
  const db = new DatabaseSync(path, { timeout: options.busyTimeoutMs });
  try {
    if (options.wal ?? true) db.exec("PRAGMA journal_mode = WAL");
    if (options.synchronousNormal) db.exec("PRAGMA synchronous = NORMAL");
    if (options.foreignKeys) db.exec("PRAGMA foreign_keys = ON");
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/**
 * Runs `work` in one write transaction: committed when it returns, rolled back when it throws.
 * IMMEDIATE takes the write lock up front, so another writer makes it wait the busy timeout
 * at BEGIN rather than fail half-way, at its first write.
 */
export function transaction<T>(db: DatabaseSync, work: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = work();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    db.exec("ROLLBACK");
    throw error;
  }
}

/** Whether `error` is SQLite's "database is locked": another connection holds the lock. */
export function isBusy(error: unknown): boolean {
  return (
    error instanceof Error &&
    /database is locked|SQLITE_BUSY/i.test(`${error.message} ${(error as { code?: string }).code}`)
  );
}

/** The schema version: the number of migrations applied. */
export function userVersion(db: DatabaseSync): number {
  return Number((db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
}

/**
 * Brings the database to `migrations.length`, applying the missing ones in order, each in its
 * own transaction with the version it reaches, so that a crash mid-migration leaves the
 * previous version intact. A database newer than the list throws `tooNew(version)`: this floe
 * cannot know its schema. Returns the version the database had.
 */
export function migrate(db: DatabaseSync, migrations: readonly string[], tooNew: (version: number) => Error): number {
  const version = userVersion(db);
  if (version > migrations.length) throw tooNew(version);
  for (let v = version; v < migrations.length; v++) {
    transaction(db, () => {
      // Another process may have migrated meanwhile: the version is read again under the write lock.
      if (userVersion(db) > v) return;
      db.exec(migrations[v]!);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    });
  }
  return version;
}
