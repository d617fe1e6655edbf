// The records of the config store, validated: a source is the job file's source.kafka, a
// destination its destination.iceberg, a job the rest (its reading settings, streams, schedule)
// naming a stored source and destination. A job is also checked whole: its record composed with
// its source and destination is a job file's data, which the job file's one schema
// (job/job-schema.ts) must accept, so that a job made in the UI is the job `floe sync` runs.
// Problems are StoreErrors naming the record's field.
import { z } from "zod";
import { icebergDestination } from "../job/destination.ts";
import { interpolateEnv } from "../job/env-interpolation.ts";
import type { Job } from "../job/job.ts";
import { defaultStreamSchema, jobFileSchema, jobReadingShape, streamsSchema } from "../job/job-schema.ts";
import { jobFromData } from "../job/load-job.ts";
import { identifier, nonEmpty } from "../job/schema-parts.ts";
import { isSecretPath } from "../job/secret.ts";
import { kafkaClusterSchema } from "../job/source.ts";
import { TARGET_ENGINES } from "../job/target-engines.ts";
import { describeIssue } from "../lib/zod-issues.ts";

export type Doc = Record<string, unknown>;

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
  commit: z
    .looseObject({})
    .optional()
    .describe("As the job file's commit: {max_messages, max_bytes}, when a sync commits what it has read."),
});

export type Kind = "source" | "destination" | "job";
/** The schema of each kind of record, as stored (a job names its source and destination). */
export const RECORD_SCHEMAS: Record<Kind, z.ZodType> = {
  source: sourceRecord,
  destination: destinationRecord,
  job: jobRecord,
};

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

export const NO_ENVIRONMENT: ServeEnvironment = { env: {}, allowed: new Set(), ambientCredentials: false };

/**
 * A composed job document as a Job: `${NAME}`s substituted as the environment allows, validated
 * by the job file's schema, relative paths the state directory's.
 */
export function recordJob(doc: Doc, environment: ServeEnvironment, stateDir: string): Job {
  const { env, allowed } = environment;
  const data = interpolateEnv(doc, env, allowed);
  if (data.issues.length > 0) {
    throw new StoreError(
      400,
      data.issues.map((i) => ({ path: i.path.join("."), message: i.message })),
    );
  }
  const job = jobFromData(data.value, `job ${String(doc["name"])}`, stateDir);
  if (environment.ambientCredentials) return job;
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

/** The job file's data of a stored job with its source and destination. */
export function compose(job: Doc, source: Doc, destination: Doc): Doc {
  const reading = Object.fromEntries(Object.keys(jobReadingShape).flatMap((k) => (k in job ? [[k, job[k]]] : [])));
  const iceberg = { ...(destination["iceberg"] as Doc) };
  if (job["target_engines"] !== undefined) iceberg["target_engines"] = job["target_engines"];
  if (job["namespace"] !== undefined) iceberg["namespace"] = job["namespace"];
  // `schedule:` joins the job file when its schema knows the key.
  const shape = (jobFileSchema as unknown as { in: { shape: Record<string, unknown> } }).in.shape;
  return {
    name: job["name"],
    ...Object.fromEntries(
      ["schedule", "alerts", "history_days", "commit"].flatMap((k) =>
        k in shape && job[k] !== undefined ? [[k, job[k]]] : [],
      ),
    ),
    source: { kafka: { ...(source["kafka"] as Doc), ...reading } },
    destination: { iceberg },
    streams: job["streams"] ?? {},
    ...(job["default_stream"] === undefined ? {} : { default_stream: job["default_stream"] }),
  };
}

/** A job file path in the terms of a stored job's record. */
export function jobPathToRecord(path: string): { path: string } {
  const mapped = path
    .replace(/^source\.kafka\.(consumer_group|topic_pattern|max_threads)/, "$1")
    .replace(/^source\.kafka\./, "source (its kafka.")
    .replace(/^destination\.iceberg\.(target_engines|namespace)/, "$1")
    .replace(/^destination\.iceberg\./, "destination (its iceberg.");
  return { path: mapped.includes("(its ") ? `${mapped})` : mapped };
}

export function checkJobFile(doc: Doc, place: (path: string) => { path: string }): void {
  const parsed = jobFileSchema.safeParse(doc, { reportInput: true });
  if (parsed.success) return;
  throw new StoreError(
    400,
    parsed.error.issues
      .flatMap((i) => describeIssue(i, [], { hidesValue: isSecretPath }))
      .map((i) => ({ ...place(i.path.join(".")), message: i.message })),
  );
}

export function issuesError(error: z.ZodError, prefix: (string | number)[]): StoreError {
  return new StoreError(
    400,
    error.issues
      .flatMap((i) => describeIssue(i, prefix, { hidesValue: isSecretPath }))
      .map((i) => ({ path: i.path.join("."), message: i.message })),
  );
}
