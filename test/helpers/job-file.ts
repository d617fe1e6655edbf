// The job files of the tests, built as data instead of written as YAML text: `jobFile()` gives
// the data of a job file with the job file's own snake_case keys (typed by the job file's zod
// schema, so a misspelt key fails the typecheck), `writeJobFile()` writes it as YAML, and
// `buildJob()` loads it the way `floe sync --config` does (YAML text -> ${ENV} interpolation ->
// validation). Defaults: the local broker of dev/, a name unique to the process and the moment
// (so the namespace <name>_topics and the consumer group floe_<name> are too), and an embedded
// SQLite catalog in a fresh temporary folder. Tests whose subject is the YAML text itself (line
// and column of an error, comments, invalid YAML) keep their YAML by hand.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import type { z } from "zod";
import type { Job } from "#src/job/job.ts";
import type { jobFileSchema } from "#src/job/job-schema.ts";
import { parseJob } from "#src/job/load-job.ts";
import { bootstrapServers } from "../../dev/kafka.ts";

/** A job file's data, as the file takes it (before defaults and ${ENV} interpolation). */
export type JobFileData = z.input<typeof jobFileSchema>;
/** source.kafka: the cluster (bootstrap_servers, security, sasl, tls, schema_registry, timeouts) and how the job reads it. */
export type KafkaSection = JobFileData["source"]["kafka"];
/** destination.iceberg: catalog (sql, rest, unity), storage (s3, gcs, azure), target_engines, compression, namespace. */
export type IcebergSection = NonNullable<JobFileData["destination"]>["iceberg"];
/** One entry of streams: (a binding). */
export type StreamSection = NonNullable<JobFileData["streams"]>[string];

/** What a test says about its job; every key not given takes the default named in the header. */
export interface JobFileSpec {
  readonly name?: string;
  /** Merged over {bootstrap_servers: [the local broker]}; a key set to undefined is left out. */
  readonly kafka?: Partial<KafkaSection>;
  /** Merged over {catalog: an embedded catalog in a temporary folder}; a key set to undefined is left out. */
  readonly iceberg?: Partial<IcebergSection>;
  readonly streams?: JobFileData["streams"];
  readonly default_stream?: JobFileData["default_stream"];
  readonly schedule?: JobFileData["schedule"];
  readonly alerts?: JobFileData["alerts"];
  readonly maintenance?: JobFileData["maintenance"];
  readonly history_days?: JobFileData["history_days"];
  readonly commit?: JobFileData["commit"];
  readonly cluster?: JobFileData["cluster"];
}

let made = 0;

/** A name no other job of this or another test process takes. */
export function uniqueJobName(kind = "job"): string {
  made += 1;
  return `${kind}_${process.pid}_${Date.now()}_${made}`;
}

/** `${name}` in a job file: replaced by the variable's value when the job is loaded. */
export function envRef(name: string): string {
  return `\${${name}}`;
}

/** The data of a job file: the defaults of the header with `spec` over them. */
export function jobFile(spec: JobFileSpec = {}): JobFileData {
  const name = spec.name ?? uniqueJobName();
  const iceberg: IcebergSection = {
    ...(spec.iceberg?.catalog === undefined && {
      catalog: { type: "sql", warehouse: join(mkdtempSync(join(tmpdir(), "floe-job-")), "warehouse") },
    }),
    ...spec.iceberg,
  };
  const data: JobFileData = {
    name,
    source: { kafka: { bootstrap_servers: [bootstrapServers], ...spec.kafka } },
    destination: { iceberg },
  };
  for (const key of [
    "streams",
    "default_stream",
    "schedule",
    "alerts",
    "maintenance",
    "history_days",
    "commit",
    "cluster",
  ] as const) {
    if (spec[key] !== undefined) Object.assign(data, { [key]: spec[key] });
  }
  return data;
}

/** A job file's data as YAML text, one key per line; keys whose value is undefined are left out. */
export function jobYaml(data: JobFileData): string {
  return stringify(data, { lineWidth: 0 });
}

/** Writes the job file at `file` (YAML) and returns `file`. */
export function writeJobFile(file: string, spec: JobFileSpec = {}): string {
  writeFileSync(file, jobYaml(jobFile(spec)));
  return file;
}

/** The Job that `floe sync --config <file>` would load from this job file; `file` names it and anchors relative paths. */
export function buildJob(spec: JobFileSpec, file: string): Job {
  return parseJob(jobYaml(jobFile(spec)), file);
}

/** `job` with commit.max_messages set to `maxMessages`: a sync that commits every `maxMessages` messages read. */
export function committingEvery(job: Job, maxMessages: number): Job {
  return { ...job, commit: { ...job.commit, maxMessages } };
}
