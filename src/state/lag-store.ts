// The lag store: what floe serve keeps about its jobs beside the run store, in lag.db in the
// state root. The lag at each run's plan (stop offset minus start offset, per partition) and
// the lag measured when each run ended (the high watermark minus where the next sync resumes),
// both kept over time for the UI's plots; the runs a user cancelled (the run store's outcome
// says only what was committed); and the last Test connection of each stored source and
// destination, its shown health.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { openSqlite } from "../lib/sqlite.ts";

/** The store's file in a state root. */
export const LAG_STORE_FILE = "lag.db";

export interface LagSample {
  at: string;
  topic: string;
  partition: number;
  lag: number;
}

/** One partition's lag, in messages. */
export interface PartitionLag {
  topic: string;
  partition: number;
  lag: number;
}

export type HealthKind = "source" | "destination";

/** The most samples lagSamples returns, oldest first. */
const SAMPLES_SHOWN = 5000;

export class LagStore {
  readonly #db: DatabaseSync;

  private constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Opens (creating it and the state root when needed) the lag store of `root`. */
  static open(root: string): LagStore {
    mkdirSync(root, { recursive: true });
    const db = openSqlite(join(root, LAG_STORE_FILE), { busyTimeoutMs: 5000 });
    db.exec(`
      CREATE TABLE IF NOT EXISTS lag (job TEXT NOT NULL, at INTEGER NOT NULL, topic TEXT NOT NULL,
        partition INTEGER NOT NULL, lag INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS lag_job ON lag (job, at);
      CREATE TABLE IF NOT EXISTS measured_lag (job TEXT NOT NULL, at INTEGER NOT NULL, topic TEXT NOT NULL,
        partition INTEGER NOT NULL, lag INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS measured_lag_job ON measured_lag (job, at);
      CREATE TABLE IF NOT EXISTS cancelled (run_id TEXT PRIMARY KEY, at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS health (kind TEXT NOT NULL, name TEXT NOT NULL, at INTEGER NOT NULL,
        result TEXT NOT NULL, PRIMARY KEY (kind, name));`);
    return new LagStore(db);
  }

  close(): void {
    this.#db.close();
  }

  /** The lag a run planned to read, per partition, at `at` (ms since the epoch). */
  addPlanned(job: string, at: number, partitions: readonly PartitionLag[]): void {
    const insert = this.#db.prepare("INSERT INTO lag VALUES (?, ?, ?, ?, ?)");
    for (const p of partitions) insert.run(job, at, p.topic, p.partition, p.lag);
  }

  /** The job's planned lag over time. */
  samples(job: string): LagSample[] {
    const rows = this.#db
      .prepare(`SELECT at, topic, partition, lag FROM lag WHERE job = ? ORDER BY at LIMIT ${SAMPLES_SHOWN}`)
      .all(job) as { at: number; topic: string; partition: number; lag: number }[];
    return rows.map((r) => ({ ...r, at: new Date(r.at).toISOString() }));
  }

  /** The lag measured after a run, per partition. */
  addMeasured(job: string, at: number, partitions: readonly PartitionLag[]): void {
    const insert = this.#db.prepare("INSERT INTO measured_lag VALUES (?, ?, ?, ?, ?)");
    for (const p of partitions) insert.run(job, at, p.topic, p.partition, p.lag);
  }

  /** The job's lag over every partition at the last measurement, or undefined when none was made yet. */
  measuredLag(job: string): number | undefined {
    const row = this.#db
      .prepare(
        "SELECT SUM(lag) AS lag FROM measured_lag WHERE job = ? AND at = (SELECT MAX(at) FROM measured_lag WHERE job = ?)",
      )
      .get(job, job) as { lag: number | null } | undefined;
    return row?.lag ?? undefined;
  }

  markCancelled(runId: string, at: number): void {
    this.#db.prepare("INSERT OR IGNORE INTO cancelled VALUES (?, ?)").run(runId, at);
  }

  wasCancelled(runId: string): boolean {
    return this.#db.prepare("SELECT 1 FROM cancelled WHERE run_id = ?").get(runId) !== undefined;
  }

  /** Keeps the last Test connection of a stored source or destination, with when it ran. */
  saveHealth(kind: HealthKind, name: string, at: number, result: object): void {
    this.#db.prepare("INSERT OR REPLACE INTO health VALUES (?, ?, ?, ?)").run(kind, name, at, JSON.stringify(result));
  }

  /** The last Test connection of a stored source or destination, or null when none was made. */
  health(kind: HealthKind, name: string): ({ testedAt: string } & Record<string, unknown>) | null {
    const row = this.#db.prepare("SELECT at, result FROM health WHERE kind = ? AND name = ?").get(kind, name) as
      | { at: number; result: string }
      | undefined;
    if (!row) return null;
    return { ...(JSON.parse(row.result) as Record<string, unknown>), testedAt: new Date(row.at).toISOString() };
  }

  /** Forgets a deleted record's health. */
  dropHealth(kind: HealthKind, name: string): void {
    this.#db.prepare("DELETE FROM health WHERE kind = ? AND name = ?").run(kind, name);
  }
}
