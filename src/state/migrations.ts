// The run store's schema, versioned: SQLite's `user_version` holds the number of migrations
// applied, and opening the store applies the missing ones in order (lib/sqlite.ts's migrate).
// A migration is never edited once released: a change is a new one at the end of the list.
import type { DatabaseSync } from "node:sqlite";
import { migrate as migrateTo } from "../lib/sqlite.ts";

export const MIGRATIONS: readonly string[] = [
  // 1: runs and their log lines, keyed by job so that one store holds every job of a state root.
  `CREATE TABLE runs (
     run_id TEXT PRIMARY KEY,
     job TEXT NOT NULL,
     trigger TEXT NOT NULL,
     started_at INTEGER NOT NULL,
     ended_at INTEGER,
     duration_ms REAL,
     outcome TEXT NOT NULL,
     messages INTEGER NOT NULL DEFAULT 0,
     bytes INTEGER NOT NULL DEFAULT 0,
     dead_letters INTEGER NOT NULL DEFAULT 0,
     tables TEXT NOT NULL DEFAULT '[]',
     error_kind TEXT,
     error_retryable INTEGER,
     error_name TEXT,
     error_message TEXT,
     pid INTEGER NOT NULL,
     host TEXT NOT NULL
   );
   CREATE INDEX runs_by_job ON runs (job, started_at DESC);
   CREATE TABLE run_logs (
     run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
     seq INTEGER NOT NULL,
     at INTEGER NOT NULL,
     level INTEGER NOT NULL,
     msg TEXT NOT NULL,
     fields TEXT NOT NULL DEFAULT '{}',
     PRIMARY KEY (run_id, seq)
   );`,
  // 2: a run is a sync or a maintenance pass (floe maintain, or one the scheduler makes after a
  // sync); a pass keeps its per-table report as JSON.
  `ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'sync';
   ALTER TABLE runs ADD COLUMN maintenance TEXT;`,
];

export class StoreVersionError extends Error {
  override name = "StoreVersionError";
}

/** Brings the run store to the latest schema version; returns the version it had. */
export function migrate(db: DatabaseSync, path: string, migrations: readonly string[] = MIGRATIONS): number {
  return migrateTo(
    db,
    migrations,
    (version) =>
      new StoreVersionError(
        `the run store ${path} has schema version ${version}, newer than this floe knows (${migrations.length}); upgrade floe or use another --state-dir`,
      ),
  );
}
