// The sources, destinations and jobs made in the UI: their rows, in a SQLite database in the
// state directory (config.db), with an audit record of every change. They are the job file's
// own sections, kept apart so that jobs share a source or a destination; a stored job plus its
// source and its destination compose a job file's data (config-records.ts validates them by the
// job file's one schema), so that a job made here is the job `floe sync` runs, and exports to
// (and imports from) a job file (config-yaml.ts).
//
// Secrets are sealed before they are written and never handed out (sealed-secrets.ts); an
// update that leaves one out keeps it while its place is unchanged (kept-secrets.ts). A change
// is validated whole before anything is written, and written with its audit record in one
// transaction: a refused change changes nothing.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import type { Job } from "../job/job.ts";
import { openSqlite, transaction } from "../lib/sqlite.ts";
import {
  checkJobFile,
  compose,
  type Doc,
  issuesError,
  jobPathToRecord,
  type Kind,
  NO_ENVIRONMENT,
  RECORD_SCHEMAS,
  recordJob,
  type ServeEnvironment,
  StoreError,
} from "./config-records.ts";
import { jobFileText, recordsOfJobFile } from "./config-yaml.ts";
import { keepSecrets } from "./kept-secrets.ts";
import { openSecrets, refuseSealed, type Shown, sealPlainSecrets, sealSecrets, shown } from "./sealed-secrets.ts";
import type { SecretBox } from "./secret-box.ts";

// The records' schemas and the store's error are part of the store's face, for the API.
export {
  destinationRecord,
  jobRecord,
  type Kind,
  type ServeEnvironment,
  StoreError,
  sourceRecord,
} from "./config-records.ts";
export type { Shown } from "./sealed-secrets.ts";

const TABLES: Record<Kind, string> = { source: "sources", destination: "destinations", job: "jobs" };

export interface AuditEntry {
  at: string;
  actor: string;
  action: "create" | "update" | "delete" | "import";
  kind: Kind;
  name: string;
}

export class ConfigStore {
  readonly #db: DatabaseSync;
  readonly #box: SecretBox;
  readonly stateDir: string;
  readonly #environment: ServeEnvironment;

  constructor(stateDir: string, box: SecretBox, environment: ServeEnvironment = NO_ENVIRONMENT) {
    mkdirSync(stateDir, { recursive: true });
    this.stateDir = stateDir;
    this.#box = box;
    this.#environment = environment;
    this.#db = openSqlite(join(stateDir, "config.db"), { busyTimeoutMs: 5000 });
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS sources (name TEXT PRIMARY KEY, doc TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS destinations (name TEXT PRIMARY KEY, doc TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS jobs (name TEXT PRIMARY KEY, doc TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, actor TEXT NOT NULL,
        action TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL);
    `);
    this.#sealPlainSecrets();
  }

  /** Seals the secrets stored in the clear by a version that did not take them for secrets (tls.key). */
  #sealPlainSecrets(): void {
    for (const table of Object.values(TABLES)) {
      const rows = this.#db.prepare(`SELECT name, doc FROM ${table}`).all() as { name: string; doc: string }[];
      for (const row of rows) {
        const text = JSON.stringify(sealPlainSecrets(JSON.parse(row.doc) as Doc, this.#box));
        if (text !== row.doc) this.#db.prepare(`UPDATE ${table} SET doc = ? WHERE name = ?`).run(text, row.name);
      }
    }
  }

  close(): void {
    this.#db.close();
  }

  list(kind: Kind): Shown[] {
    const rows = this.#db.prepare(`SELECT doc FROM ${TABLES[kind]} ORDER BY name`).all() as { doc: string }[];
    return rows.map((row) => shown(JSON.parse(row.doc) as Doc));
  }

  get(kind: Kind, name: string): Shown {
    return shown(this.#sealed(kind, name));
  }

  has(kind: Kind, name: string): boolean {
    return this.#row(kind, name) !== undefined;
  }

  /** Creates (no `name` given) or replaces the record; an absent secret of an update keeps its stored value. */
  save(kind: Kind, input: unknown, actor: string, name?: string): Shown {
    refuseSealed(input);
    const existing = name === undefined ? undefined : this.#sealed(kind, name);
    const merged = existing ? keepSecrets(kind, input, existing) : input;
    const doc = this.#validate(kind, merged, name === undefined ? undefined : name);
    if (name !== undefined && doc["name"] !== name) {
      throw new StoreError(400, [{ path: "name", message: `a ${kind} cannot be renamed (${name})` }]);
    }
    if (name === undefined && this.has(kind, String(doc["name"]))) {
      throw new StoreError(409, [{ path: "name", message: `a ${kind} named ${doc["name"]} exists` }]);
    }
    transaction(this.#db, () => {
      this.#write(kind, doc);
      this.#audit(actor, name === undefined ? "create" : "update", kind, String(doc["name"]));
    });
    return this.get(kind, String(doc["name"]));
  }

  /** Changes a job's paused flag. */
  setPaused(name: string, paused: boolean, actor: string): Shown {
    const doc = this.#sealed("job", name);
    transaction(this.#db, () => {
      this.#write("job", { ...doc, paused });
      this.#audit(actor, "update", "job", name);
    });
    return this.get("job", name);
  }

  delete(kind: Kind, name: string, actor: string): void {
    this.#sealed(kind, name);
    if (kind !== "job") {
      const users = this.list("job").filter((j) => j[kind] === name);
      if (users.length > 0) {
        throw new StoreError(409, [
          { path: "name", message: `used by job(s) ${users.map((j) => j["name"]).join(", ")}; delete them first` },
        ]);
      }
    }
    transaction(this.#db, () => {
      this.#db.prepare(`DELETE FROM ${TABLES[kind]} WHERE name = ?`).run(name);
      this.#audit(actor, "delete", kind, name);
    });
  }

  auditLog(limit = 200): AuditEntry[] {
    return this.#db
      .prepare("SELECT at, actor, action, kind, name FROM audit ORDER BY id DESC LIMIT ?")
      .all(limit) as unknown as AuditEntry[];
  }

  /** A stored source with its secrets, for the connection test; never shown. */
  sourceDocument(name: string): Doc {
    return this.#opened(this.#sealed("source", name));
  }

  destinationDocument(name: string): Doc {
    return this.#opened(this.#sealed("destination", name));
  }

  /** The job file's data of a stored job, secrets included: what the sync validates and runs. */
  jobDocument(name: string): Doc {
    const job = this.#opened(this.#sealed("job", name));
    return compose(
      job,
      this.sourceDocument(String(job["source"])),
      this.destinationDocument(String(job["destination"])),
    );
  }

  /** The stored job as a Job, validated by the job file's schema; relative paths are the state directory's. */
  job(name: string): Job {
    return this.#toJob(this.jobDocument(name));
  }

  /**
   * A job that reads a stored source or writes a stored destination, for its connection test
   * and the discovery of its topics; the other side is a placeholder that is never contacted.
   */
  probeJob(kind: "source" | "destination", name: string): Job {
    const source = kind === "source" ? this.sourceDocument(name) : { kafka: { bootstrap_servers: ["127.0.0.1:9"] } };
    const destination = kind === "destination" ? this.destinationDocument(name) : { iceberg: {} };
    return this.#toJob(compose({ name: "probe", topic_pattern: ".*" }, source, destination));
  }

  /**
   * A probe job (as probeJob) of a source or destination not saved yet, as a form holds it:
   * validated as a save would be, with only the secrets the form itself carries (a stored
   * record's secrets never go to a host the form names).
   */
  probeUnsaved(kind: "source" | "destination", input: unknown): Job {
    refuseSealed(input);
    const doc = this.#validate(kind, input);
    const source = kind === "source" ? doc : { kafka: { bootstrap_servers: ["127.0.0.1:9"] } };
    const destination = kind === "destination" ? doc : { iceberg: {} };
    return this.#toJob(compose({ name: "probe", topic_pattern: ".*" }, source, destination));
  }

  /**
   * The job that the streams step discovers with: a stored source, optionally a destination
   * (whose tables then show as existing), the topics a pattern selects, under the job's name.
   */
  discoveryJob(
    names: { source: string; destination?: string | undefined; job?: string | undefined },
    topicPattern: string,
  ): Job {
    const destination = names.destination === undefined ? { iceberg: {} } : this.destinationDocument(names.destination);
    return this.#toJob(
      compose(
        { name: names.job ?? "discover", topic_pattern: topicPattern },
        this.sourceDocument(names.source),
        destination,
      ),
    );
  }

  #toJob(doc: Doc): Job {
    return recordJob(doc, this.#environment, this.stateDir);
  }

  /** The job as a job file; each secret becomes a ${VARIABLE} to set where it runs. */
  exportJob(name: string): string {
    const sealed = this.#sealed("job", name);
    const doc = compose(
      sealed,
      this.#sealed("source", String(sealed["source"])),
      this.#sealed("destination", String(sealed["destination"])),
    );
    return jobFileText(doc);
  }

  /** A job file's text as a source, a destination and a job, created together or not at all. */
  importJob(text: string, actor: string, names: { source?: string; destination?: string } = {}): Shown {
    const records = recordsOfJobFile(text, names);
    const { name } = records;
    const sourceName = String(records.source["name"]);
    const destinationName = String(records.destination["name"]);
    const sourceDoc = this.#validate("source", records.source);
    const destinationDoc = this.#validate("destination", records.destination);
    for (const [kind, n] of [
      ["source", sourceName],
      ["destination", destinationName],
      ["job", name],
    ] as const) {
      if (this.has(kind, n))
        throw new StoreError(409, [{ path: kind === "job" ? "name" : kind, message: `a ${kind} named ${n} exists` }]);
    }
    const jobDoc = this.#validate("job", records.job, undefined, { source: sourceDoc, destination: destinationDoc });
    transaction(this.#db, () => {
      this.#write("source", sourceDoc);
      this.#write("destination", destinationDoc);
      this.#write("job", jobDoc);
      this.#audit(actor, "import", "job", name);
    });
    return this.get("job", name);
  }

  /**
   * The input checked by its record schema and, for a job, as the job file it composes with its
   * source and destination; a source or destination used by jobs is checked with each of them.
   * Returns the document to store, secrets sealed.
   */
  #validate(kind: Kind, input: unknown, name?: string, parts?: { source: Doc; destination: Doc }): Doc {
    const opened = this.#opened((input ?? {}) as Doc);
    const parsed = RECORD_SCHEMAS[kind].safeParse(opened, { reportInput: true });
    if (!parsed.success) throw issuesError(parsed.error, []);
    // Stored as given (the job file's keys, as the user wrote them), with the job's own flag filled in.
    // streams: the job shows its (empty) streams, as the API's schema of a job says it does.
    const doc =
      kind === "job" ? { ...opened, paused: opened["paused"] === true, streams: opened["streams"] ?? {} } : opened;
    if (kind === "job") {
      const source = parts?.source ?? this.#reference("source", doc["source"]);
      const destination = parts?.destination ?? this.#reference("destination", doc["destination"]);
      checkJobFile(compose(doc, this.#opened(source), this.#opened(destination)), jobPathToRecord);
    } else if (name !== undefined) {
      for (const job of this.list("job").filter((j) => j[kind] === name)) {
        const jobDoc = this.#opened(this.#sealed("job", String(job["name"])));
        const source = kind === "source" ? doc : this.sourceDocument(String(jobDoc["source"]));
        const destination = kind === "destination" ? doc : this.destinationDocument(String(jobDoc["destination"]));
        checkJobFile(compose(jobDoc, source, destination), (path) => ({
          path: `${path} (in job ${job["name"]})`,
        }));
      }
    }
    return sealSecrets(doc, this.#box);
  }

  #reference(kind: "source" | "destination", name: unknown): Doc {
    const row = typeof name === "string" ? this.#row(kind, name) : undefined;
    if (row === undefined) throw new StoreError(400, [{ path: kind, message: `no ${kind} named ${String(name)}` }]);
    return row;
  }

  #row(kind: Kind, name: string): Doc | undefined {
    const row = this.#db.prepare(`SELECT doc FROM ${TABLES[kind]} WHERE name = ?`).get(name) as
      | { doc: string }
      | undefined;
    return row && (JSON.parse(row.doc) as Doc);
  }

  #sealed(kind: Kind, name: string): Doc {
    const row = this.#row(kind, name);
    if (row === undefined) throw new StoreError(404, [{ path: "name", message: `no ${kind} named ${name}` }]);
    return row;
  }

  /** Sealed secrets opened; plain values pass through. */
  #opened(doc: Doc): Doc {
    return openSecrets(doc, this.#box);
  }

  #write(kind: Kind, doc: Doc): void {
    this.#db
      .prepare(`INSERT INTO ${TABLES[kind]} (name, doc, updated_at) VALUES (?, ?, ?)
                ON CONFLICT(name) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at`)
      .run(String(doc["name"]), JSON.stringify(doc), new Date().toISOString());
  }

  #audit(actor: string, action: AuditEntry["action"], kind: Kind, name: string): void {
    this.#db
      .prepare("INSERT INTO audit (at, actor, action, kind, name) VALUES (?, ?, ?, ?, ?)")
      .run(new Date().toISOString(), actor, action, kind, name);
  }
}
