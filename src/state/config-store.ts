// The sources, destinations and jobs made in the UI, in a SQLite database in the state
// directory, with an audit record of every change. They are the job file's own sections, kept
// apart so that jobs share a source or a destination: a stored job plus its source and its
// destination compose a job file's data, validated by the job file's one schema
// (config/job-schema.ts), so that a job made here is the job `floe sync` runs, and exports to
// (and imports from) a job file.
//
// Secrets (config/secret.ts's SECRET_KEYS) are sealed with AES-256-GCM before they are written
// and are write-only: what this store hands out for display never holds them, only the paths
// of those that are set. A change is validated whole before anything is written, and written
// with its audit record in one transaction: a refused change changes nothing.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parse as parseYaml, stringify as toYaml } from "yaml";
import { z } from "zod";
import { icebergDestination } from "../config/destination.ts";
import { interpolateEnv } from "../config/env-interpolation.ts";
import type { Job } from "../config/job.ts";
import { defaultStreamSchema, jobFileSchema, jobReadingShape, streamsSchema } from "../config/job-schema.ts";
import { describeIssue, jobFromData } from "../config/load-job.ts";
import { identifier, nonEmpty } from "../config/schema-parts.ts";
import { isSecretPath } from "../config/secret.ts";
import { kafkaClusterSchema } from "../config/source.ts";
import { TARGET_ENGINES } from "../config/target-engines.ts";
import type { SecretBox } from "./secret-box.ts";

type Doc = Record<string, unknown>;

/** A change the store refuses, naming the field: the API answers it with a 4xx. */
export class StoreError extends Error {
  override name = "StoreError";
  readonly status: 400 | 404 | 409;
  readonly issues: readonly { path: string; message: string }[];

  constructor(status: 400 | 404 | 409, issues: readonly { path: string; message: string }[]) {
    super(issues.map((i) => (i.path === "" ? i.message : `${i.path}: ${i.message}`)).join("; "));
    this.status = status;
    this.issues = issues;
  }
}

export const sourceRecord = z.strictObject({
  name: identifier.describe("The source's name, unique among sources."),
  kafka: kafkaClusterSchema,
});

export const destinationRecord = z.strictObject({
  name: identifier.describe("The destination's name, unique among destinations."),
  iceberg: icebergDestination,
});

export const jobRecord = z.strictObject({
  name: identifier.describe("Names the namespace (<name>_topics) and the consumer group (floe_<name>)."),
  source: identifier.describe("The name of a stored source."),
  destination: identifier.describe("The name of a stored destination."),
  schedule: nonEmpty
    .optional()
    .describe("As the job file's schedule: `every 5m`, or a cron expression (`*/5 * * * *`); absent: only Sync now."),
  paused: z.boolean().default(false),
  ...jobReadingShape,
  namespace: identifier.optional().describe("Default: <name>_topics."),
  target_engines: z
    .array(z.enum(TARGET_ENGINES))
    .optional()
    .describe("Engines that read the tables; absent: the destination's."),
  streams: streamsSchema,
  default_stream: defaultStreamSchema.optional(),
  alerts: z.looseObject({}).optional().describe("As the job file's alerts: {webhook: URL} (a secret)."),
  history_days: z.number().optional().describe("As the job file's history_days."),
});

export type Kind = "source" | "destination" | "job";
const TABLES: Record<Kind, string> = { source: "sources", destination: "destinations", job: "jobs" };
const SCHEMAS: Record<Kind, z.ZodType> = { source: sourceRecord, destination: destinationRecord, job: jobRecord };

/** A stored record as shown: no secret, and the paths of the secrets that are set. */
export interface Shown {
  readonly [key: string]: unknown;
  readonly secrets_set: string[];
}

export interface AuditEntry {
  at: string;
  actor: string;
  action: "create" | "update" | "delete" | "import";
  kind: Kind;
  name: string;
}

const SEALED = "$sealed";

/**
 * What the records may take from the server's environment. A record is written by a UI user,
 * and the server's environment holds the server's own secrets: a `${NAME}` in a record is
 * substituted only when the operator allowed NAME (floe serve --allow-env), else refused.
 * ambientCredentials: the object stores may fall back to the server's own credentials.
 */
export interface ServeEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly allowed: ReadonlySet<string>;
  readonly ambientCredentials: boolean;
}

const NO_ENVIRONMENT: ServeEnvironment = { env: {}, allowed: new Set(), ambientCredentials: false };

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
    this.#db = new DatabaseSync(join(stateDir, "config.db"));
    this.#db.exec("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000;");
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
        const doc = JSON.parse(row.doc) as Doc;
        const sealed = mapTree(doc, (value, path) =>
          path.length > 0 && isSecretPath(path) && typeof value === "string"
            ? { replace: { [SEALED]: this.#box.seal(value) } }
            : undefined,
        );
        const text = JSON.stringify(sealed);
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
    this.#transaction(() => {
      this.#write(kind, doc);
      this.#audit(actor, name === undefined ? "create" : "update", kind, String(doc["name"]));
    });
    return this.get(kind, String(doc["name"]));
  }

  /** Changes a job's paused flag. */
  setPaused(name: string, paused: boolean, actor: string): Shown {
    const doc = this.#sealed("job", name);
    this.#transaction(() => {
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
    this.#transaction(() => {
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
    const { env, allowed } = this.#environment;
    const data = interpolateEnv(doc, env, allowed);
    if (data.issues.length > 0) {
      throw new StoreError(
        400,
        data.issues.map((i) => ({ path: i.path.join("."), message: i.message })),
      );
    }
    const job = jobFromData(data.value, `job ${String(doc["name"])}`, this.stateDir);
    if (this.#environment.ambientCredentials) return job;
    // A UI user's destination is reached with its own credentials or the catalog's, never the server's:
    // a key file is one of the server's files (its GOOGLE_APPLICATION_CREDENTIALS, say), whose token
    // would go to whatever endpoint the record names.
    if (job.destination.storage?.gcs?.serviceAccountKeyFile !== undefined) {
      throw new StoreError(400, [
        {
          path: "destination.iceberg.storage.gcs.service_account_key_file",
          message:
            "a key file on the server is the server's credential: floe serve reads none for its records unless started with --ambient-credentials; give oauth2_token, or let the catalog vend the token",
        },
      ]);
    }
    const storage = job.destination.storage ?? { s3: undefined };
    return { ...job, destination: { ...job.destination, storage: { ...storage, ambientCredentials: false } } };
  }

  /** The job as a job file; each secret becomes a ${VARIABLE} to set where it runs. */
  exportJob(name: string): string {
    const sealed = this.#sealed("job", name);
    const doc = compose(
      sealed,
      this.#sealed("source", String(sealed["source"])),
      this.#sealed("destination", String(sealed["destination"])),
    );
    const placeholders = mapSecrets(doc, (_value, path) => `\${${path.join("_").toUpperCase()}}`);
    return `# floe job file, exported from the UI; set the \${...} variables where it runs.\n${toYaml(placeholders)}`;
  }

  /** A job file's text as a source, a destination and a job, created together or not at all. */
  importJob(text: string, actor: string, names: { source?: string; destination?: string } = {}): Shown {
    let data: unknown;
    try {
      data = parseYaml(text);
    } catch (error) {
      throw new StoreError(400, [{ path: "yaml", message: (error as Error).message }]);
    }
    const file = z
      .looseObject({
        name: identifier,
        source: z.looseObject({ kafka: z.looseObject({}) }),
        destination: z.looseObject({ iceberg: z.looseObject({}) }).prefault({ iceberg: {} }),
      })
      .safeParse(data);
    if (!file.success) throw issuesError(file.error, ["yaml"]);
    refuseSealed(file.data, ["yaml"]);
    const { name, source, destination, ...rest } = file.data;
    const kafka = { ...source.kafka };
    const reading: Doc = {};
    for (const key of Object.keys(jobReadingShape)) {
      if (key in kafka) reading[key] = kafka[key];
      delete kafka[key];
    }
    const { namespace, ...iceberg } = destination.iceberg;
    const sourceName = names.source ?? name;
    const destinationName = names.destination ?? name;
    const sourceDoc = this.#validate("source", { name: sourceName, kafka });
    const destinationDoc = this.#validate("destination", { name: destinationName, iceberg });
    for (const [kind, n] of [
      ["source", sourceName],
      ["destination", destinationName],
      ["job", name],
    ] as const) {
      if (this.has(kind, n))
        throw new StoreError(409, [{ path: kind === "job" ? "name" : kind, message: `a ${kind} named ${n} exists` }]);
    }
    const jobDoc = this.#validate(
      "job",
      {
        name,
        source: sourceName,
        destination: destinationName,
        ...reading,
        ...(namespace === undefined ? {} : { namespace }),
        ...rest,
      },
      undefined,
      { source: sourceDoc, destination: destinationDoc },
    );
    this.#transaction(() => {
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
    const parsed = SCHEMAS[kind].safeParse(opened, { reportInput: true });
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
    return mapSecrets(doc, (value) => ({ [SEALED]: this.#box.seal(value) }));
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
    return mapTree(doc, (value) => (isSealed(value) ? { replace: this.#box.open(value[SEALED]) } : undefined)) as Doc;
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

  #transaction(work: () => void): void {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      work();
      this.#db.exec("COMMIT");
    } catch (error) {
      this.#db.exec("ROLLBACK");
      throw error;
    }
  }
}

/** The job file's data of a stored job with its source and destination. */
function compose(job: Doc, source: Doc, destination: Doc): Doc {
  const reading = Object.fromEntries(Object.keys(jobReadingShape).flatMap((k) => (k in job ? [[k, job[k]]] : [])));
  const iceberg = { ...(destination["iceberg"] as Doc) };
  if (job["target_engines"] !== undefined) iceberg["target_engines"] = job["target_engines"];
  if (job["namespace"] !== undefined) iceberg["namespace"] = job["namespace"];
  // `schedule:` joins the job file when its schema knows the key.
  const shape = (jobFileSchema as unknown as { in: { shape: Record<string, unknown> } }).in.shape;
  return {
    name: job["name"],
    ...Object.fromEntries(
      ["schedule", "alerts", "history_days"].flatMap((k) => (k in shape && job[k] !== undefined ? [[k, job[k]]] : [])),
    ),
    source: { kafka: { ...(source["kafka"] as Doc), ...reading } },
    destination: { iceberg },
    streams: job["streams"] ?? {},
    ...(job["default_stream"] === undefined ? {} : { default_stream: job["default_stream"] }),
  };
}

/** A job file path in the terms of a stored job's record. */
function jobPathToRecord(path: string): { path: string } {
  const mapped = path
    .replace(/^source\.kafka\.(consumer_group|topic_pattern|max_threads)/, "$1")
    .replace(/^source\.kafka\./, "source (its kafka.")
    .replace(/^destination\.iceberg\.(target_engines|namespace)/, "$1")
    .replace(/^destination\.iceberg\./, "destination (its iceberg.");
  return { path: mapped.includes("(its ") ? `${mapped})` : mapped };
}

function checkJobFile(doc: Doc, place: (path: string) => { path: string }): void {
  const parsed = jobFileSchema.safeParse(doc, { reportInput: true });
  if (parsed.success) return;
  throw new StoreError(
    400,
    parsed.error.issues
      .flatMap((i) => describeIssue(i, []))
      .map((i) => ({ ...place(i.path.join(".")), message: i.message })),
  );
}

function issuesError(error: z.ZodError, prefix: (string | number)[]): StoreError {
  return new StoreError(
    400,
    error.issues.flatMap((i) => describeIssue(i, prefix)).map((i) => ({ path: i.path.join("."), message: i.message })),
  );
}

/**
 * Refuses a sealed value in what a caller sent: only the store puts them in (a secret an update
 * keeps). Opened as if stored, one would decrypt a ciphertext taken from a copy of config.db
 * (whose key may live apart, in FLOE_SECRET_KEY) into a field the API shows, or send it as a
 * password to a host the caller names.
 */
function refuseSealed(input: unknown, prefix: string[] = []): void {
  const found: string[] = [];
  mapTree(input, (value, path) => {
    if (typeof value === "object" && value !== null && SEALED in value) found.push([...prefix, ...path].join("."));
    return undefined;
  });
  if (found.length > 0) {
    throw new StoreError(
      400,
      found.map((path) => ({ path, message: `a {"${SEALED}": ...} value is the store's own; give the value itself` })),
    );
  }
}

function isSealed(value: unknown): value is { [SEALED]: string } {
  return typeof value === "object" && value !== null && typeof (value as Doc)[SEALED] === "string";
}

/** Rebuilds a JSON tree; `visit` may replace a node (its children are then not visited). */
function mapTree(
  node: unknown,
  visit: (value: unknown, path: string[]) => { replace: unknown } | undefined,
  path: string[] = [],
): unknown {
  const hit = visit(node, path);
  if (hit) return hit.replace;
  if (Array.isArray(node)) return node.map((v, i) => mapTree(v, visit, [...path, String(i)]));
  if (typeof node === "object" && node !== null) {
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, mapTree(v, visit, [...path, k])]));
  }
  return node;
}

/** Every secret value (a string or a sealed one at a secret's path, config/secret.ts) replaced. */
function mapSecrets(doc: Doc, replace: (value: string, path: string[]) => unknown): Doc {
  return mapTree(doc, (value, path) => {
    if (path.length === 0 || !isSecretPath(path)) return undefined;
    if (typeof value === "string") return { replace: replace(value, path) };
    return isSealed(value) ? { replace: replace("", path) } : undefined;
  }) as Doc;
}

/** The document without its secrets, and the paths of those that are set. */
function shown(doc: Doc): Shown {
  const set: string[] = [];
  const strip = (node: unknown, path: string[]): unknown => {
    if (Array.isArray(node)) return node.map((v, i) => strip(v, [...path, String(i)]));
    if (typeof node !== "object" || node === null) return node;
    const out: Doc = {};
    for (const [key, value] of Object.entries(node)) {
      if (isSecretPath([...path, key]) && (typeof value === "string" || isSealed(value)))
        set.push([...path, key].join("."));
      else out[key] = strip(value, [...path, key]);
    }
    return out;
  };
  const clean = strip(doc, []) as Doc;
  return { ...clean, secrets_set: set };
}

/**
 * The settings that say where each secret is sent, and how: a secret left out of an update is
 * kept only while they are unchanged. Pointing a record at another host must not send the stored
 * password or token there, nor must a changed transport (TLS off, a PLAIN mechanism, another
 * trusted CA, no certificate check) hand it to whoever is on the path; the update is refused,
 * naming the secret to enter again.
 */
/** The settings that name the catalog, and so the tables' locations and the store hosts it vends. */
const CATALOG_PLACE = [
  "iceberg.catalog.type",
  "iceberg.catalog.uri",
  "iceberg.catalog.warehouse",
  "iceberg.catalog.workspace_url",
  "iceberg.catalog.catalog",
] as const;

const BOUND_TO: Record<Kind, readonly { secret: RegExp; to: readonly string[] }[]> = {
  source: [
    {
      secret: /^kafka\.sasl\.password$/,
      to: [
        "kafka.bootstrap_servers",
        "kafka.security.protocol",
        "kafka.sasl.mechanism",
        "kafka.tls.ca",
        "kafka.tls.insecure_skip_verify",
      ],
    },
    { secret: /^kafka\.tls\.key$/, to: ["kafka.bootstrap_servers"] },
    {
      secret: /^kafka\.schema_registry\.auth\.(basic\.password|bearer\.token)$/,
      to: [
        "kafka.schema_registry.url",
        "kafka.schema_registry.tls.ca",
        "kafka.schema_registry.tls.insecure_skip_verify",
      ],
    },
  ],
  destination: [
    {
      secret: /^iceberg\.catalog\.(token|client_secret)$/,
      to: [
        "iceberg.catalog.type",
        "iceberg.catalog.uri",
        "iceberg.catalog.workspace_url",
        "iceberg.catalog.oauth2_server_uri",
      ],
    },
    // Without its own endpoint, a store's host comes from the catalog (s3.endpoint, gcs.service.host,
    // the table locations it hands out): another catalog may name any host for the store's keys.
    {
      secret: /^iceberg\.storage\.s3\.(secret_access_key|session_token)$/,
      to: ["iceberg.storage.s3.endpoint", ...CATALOG_PLACE],
    },
    { secret: /^iceberg\.storage\.gcs\.oauth2_token$/, to: ["iceberg.storage.gcs.endpoint", ...CATALOG_PLACE] },
    {
      secret: /^iceberg\.storage\.azure\.(sas_token|account_key)$/,
      to: ["iceberg.storage.azure.endpoint", ...CATALOG_PLACE],
    },
  ],
  job: [],
};

/** A setting's value when it is left out: leaving it out is no change from its default. */
const DEFAULTS: Record<string, unknown> = {
  "kafka.security.protocol": "PLAINTEXT",
  "kafka.tls.insecure_skip_verify": false,
  "kafka.schema_registry.tls.insecure_skip_verify": false,
};

function at(doc: unknown, dotted: string): unknown {
  let node = doc;
  for (const key of dotted.split(".")) {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return undefined;
    node = (node as Doc)[key];
  }
  return node;
}

/** A setting as compared across an update: a comma-separated server list is its list. */
function canonical(value: unknown): string {
  if (typeof value === "string" && value.includes(",")) return JSON.stringify(value.split(",").map((s) => s.trim()));
  if (typeof value === "string") return JSON.stringify([value]);
  return JSON.stringify(value ?? null);
}

/**
 * An update's input with the stored secrets it leaves out, where the object that held them is
 * still given; refused (400, naming each secret) when a setting that says where a kept secret
 * goes has changed.
 */
function keepSecrets(kind: Kind, input: unknown, stored: Doc): unknown {
  const issues: { path: string; message: string }[] = [];
  const merge = (given: unknown, old: unknown, path: string[]): unknown => {
    if (typeof given !== "object" || given === null || Array.isArray(given)) return given;
    if (typeof old !== "object" || old === null || Array.isArray(old)) return given;
    const out: Doc = { ...(given as Doc) };
    for (const [key, value] of Object.entries(old as Doc)) {
      const here = [...path, key];
      // A plain string at a secret's path: stored before that path was a secret (tls.key).
      if (isSecretPath(here) && (isSealed(value) || typeof value === "string") && !(key in out)) {
        const dotted = here.join(".");
        const moved = BOUND_TO[kind]
          .filter((b) => b.secret.test(dotted))
          .flatMap((b) => b.to)
          .filter(
            (target) =>
              canonical(at(input, target) ?? DEFAULTS[target]) !== canonical(at(stored, target) ?? DEFAULTS[target]),
          );
        if (moved.length > 0) {
          issues.push({
            path: dotted,
            message: `${moved.join(", ")} changed: enter ${key} again (a stored secret is not sent to another place)`,
          });
        } else out[key] = value;
      } else if (key in out) out[key] = merge(out[key], value, here);
    }
    return out;
  };
  const merged = merge(input, stored, []);
  if (issues.length > 0) throw new StoreError(400, issues);
  return merged;
}
