// The shapes of the API's answers, for the OpenAPI document and the tests that check real
// answers against it. Records are shown as stored, without their secrets (secrets_set names them).
import { z } from "zod";

const secretsSet = z
  .array(z.string())
  .describe("Paths of the write-only secrets that are set; their values are never returned.");

export const diagnosis = z.object({
  ok: z.boolean(),
  message: z.string(),
  kind: z.string().optional(),
  retryable: z.boolean().optional(),
  reason: z
    .string()
    .optional()
    .describe("Kafka: what the broker or the network refused (refused, timeout, authentication, ...)."),
  hint: z.string().optional().describe("Kafka: what to check."),
  durationMs: z.number(),
});

const connectionHealth = diagnosis
  .extend({ testedAt: z.string().describe("When Test connection ran (ISO 8601, UTC).") })
  .nullable()
  .describe("The last Test connection of the record as saved; null: not tested since it was created or changed.");

export const sourceShown = z.looseObject({
  name: z.string(),
  kafka: z.record(z.string(), z.unknown()),
  secrets_set: secretsSet,
  health: connectionHealth.optional(),
});
export const destinationShown = z.looseObject({
  name: z.string(),
  iceberg: z.record(z.string(), z.unknown()),
  secrets_set: secretsSet,
  health: connectionHealth.optional(),
});
export const jobShown = z.looseObject({
  name: z.string(),
  source: z.string(),
  destination: z.string(),
  schedule: z.string().optional(),
  paused: z.boolean(),
  streams: z.record(z.string(), z.record(z.string(), z.unknown())),
  secrets_set: secretsSet,
});

export const runSummary = z.object({
  id: z.string(),
  job: z.string(),
  trigger: z.enum(["manual", "schedule", "retry"]),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
  status: z.enum(["running", "complete", "partial", "failed", "abandoned"]),
  messages: z.number(),
  bytes: z.number(),
  deadLetters: z.number().describe("Messages the run sent to dead-letter tables or skipped."),
  cancelled: z.boolean().describe("A user cancelled the run; it committed what it had read."),
  tables: z
    .array(
      z.object({
        topic: z.string(),
        table: z.string(),
        messages: z.number(),
        records: z.number().describe("Rows the run added to the table."),
        deadLetters: z.number(),
      }),
    )
    .describe("Per stream: what the run read and wrote."),
  error: z.string().nullable(),
});

export const tableReport = z.looseObject({
  topic: z.string(),
  table: z.string(),
  mode: z.enum(["upsert", "append"]),
  messagesRead: z.number(),
  bytesRead: z.number(),
  dataFilesAdded: z.number(),
  deletionVectorsAdded: z.number(),
  recordsAdded: z.number(),
  positionsDeleted: z.number(),
  deadLetters: z.number(),
});

export const runDetail = runSummary.extend({
  report: z.looseObject({ status: z.string(), tables: z.array(tableReport), messagesRead: z.number() }).nullable(),
  progress: z.array(
    z.object({
      topic: z.string(),
      partition: z.number(),
      nextOffset: z.string(),
      stopOffset: z.string(),
      messages: z.number(),
    }),
  ),
});

export const jobRow = z.object({
  name: z.string(),
  source: z.string(),
  destination: z.string(),
  schedule: z.string().nullable(),
  paused: z.boolean(),
  lastRun: runSummary.nullable(),
  runningRun: z.string().nullable(),
  nextRun: z.string().nullable(),
  lag: z
    .number()
    .nullable()
    .describe(
      "Messages behind over every partition (high watermark minus where the next sync resumes), measured when the last run ended; before any measurement, the messages to read at the last run's plan.",
    ),
});

const topicPartition = z.object({ topic: z.string(), partition: z.number() });

export const jobGroup = z.object({
  group: z.string().describe("The job's consumer group."),
  state: z
    .string()
    .describe(
      "The broker's group state: Stable, PreparingRebalance, CompletingRebalance, Empty, Dead (no such group).",
    ),
  protocol: z
    .string()
    .nullable()
    .describe(
      "classic, or consumer for a group of KIP-848's protocol, whose members are not listed (floe's members are classic); null: no such group.",
    ),
  members: z.array(
    z.object({
      memberId: z.string(),
      clientId: z.string().describe("floe-<host>-<pid> for a floe member."),
      host: z.string().describe("The member's address as the broker sees it."),
      partitions: topicPartition.array().describe("The job's partitions the group assigned the member."),
      lag: z
        .number()
        .describe("Messages behind over the member's partitions (high watermark minus where the next sync resumes)."),
      moved: z
        .object({ gained: topicPartition.array(), gaveUp: topicPartition.array() })
        .nullable()
        .describe("What the member gained and gave up at the last rebalance; null when no floe leader noted it."),
    }),
  ),
  lastRebalance: z
    .object({
      generation: z.number(),
      at: z.string().describe("When the group's leader assigned the generation (ISO 8601, UTC; the leader's clock)."),
    })
    .nullable()
    .describe("null when no member carries a floe leader's note (no member, or members that are not floe)."),
  lag: z.number().describe("Messages behind over every partition of the job."),
});

export const logLine = z.object({
  seq: z.number(),
  at: z.string(),
  level: z.enum(["debug", "info", "warn", "error"]),
  msg: z.string(),
});

export const discovery = z.object({
  topics: z.array(
    z.object({
      topic: z.string(),
      table: z.string(),
      tableExists: z.boolean(),
      partitions: z.array(
        z.object({
          partition: z.number(),
          logStartOffset: z.string(),
          highWatermark: z.string(),
          retained: z.number(),
        }),
      ),
      retained: z.number(),
      sampled: z.number(),
      columns: z.array(
        z.object({
          name: z.string(),
          type: z.string().optional(),
          nullable: z.boolean(),
          example: z.string().optional(),
        }),
      ),
    }),
  ),
  skipped: z.array(z.object({ topic: z.string(), reason: z.string() })),
});

const engineSupport = z.object({ engine: z.string(), deletionVectors: z.boolean(), note: z.string() });

export const choices = z.object({
  targetEngines: z.array(engineSupport).describe("The engines a destination or a job can name, and what each reads."),
  valueFormats: z.array(z.string()).describe("A stream's format."),
  keyFormats: z.array(z.string()).describe("A stream's key_format."),
  streamDefaults: z
    .object({ on_error: z.string(), format: z.string(), key_format: z.string() })
    .describe("What a stream that leaves out on_error, format or key_format gets."),
});

export const engineCheck = z.object({
  deleteFormat: z.string().describe("What upsert streams write for these engines."),
  upsertAllowed: z.boolean(),
  reason: z.string().nullable().describe("Why upsert is disabled, naming the engine."),
  engines: z.array(engineSupport),
});

export const jobTable = z.object({
  table: z.string(),
  name: z.string(),
  deadLetter: z.boolean(),
  columns: z.array(z.object({ id: z.number(), name: z.string(), type: z.string(), required: z.boolean() })),
  snapshots: z.array(
    z.looseObject({
      snapshotId: z.string(),
      at: z.string(),
      operation: z.string(),
      totalDataFiles: z.number(),
      totalDeleteFiles: z.number(),
      totalRecords: z.number(),
      addedDataFiles: z.number().optional(),
      addedDeleteFiles: z.number().optional(),
      addedRecords: z.number().optional(),
      kafkaOffsets: z.string().optional().describe("The snapshot summary's Kafka offsets, as written."),
    }),
  ),
  dataFiles: z.number(),
  deletionVectors: z.number(),
  records: z.number(),
  deadLetters: z.number(),
  location: z.string(),
});

const tableHealth = z.object({
  dataFiles: z.number(),
  deleteFiles: z.number(),
  records: z.number(),
  deletedRecords: z.number(),
  dataBytes: z.number(),
  averageFileBytes: z.number(),
  deletedRatio: z.number(),
  snapshots: z.number(),
  manifests: z.number(),
});

export const tablesHealth = z.object({
  tables: z.array(tableHealth.extend({ table: z.string() })),
  lastMaintenance: z.object({ runId: z.string(), at: z.string(), outcome: z.string() }).nullable(),
});

export const maintenancePass = z.object({
  runId: z.string(),
  outcome: z.string(),
  tables: z.array(
    z.looseObject({
      table: z.string(),
      before: tableHealth,
      after: tableHealth.optional(),
      compaction: z.object({ dataFiles: z.number() }).loose().nullable(),
      snapshots: z.object({ expired: z.number() }).loose().nullable(),
      orphans: z.object({ files: z.number() }).loose().nullable(),
      error: z.string().optional(),
    }),
  ),
});

export const preview = z.object({
  columns: z.array(z.string()),
  rows: z.array(z.record(z.string(), z.unknown())),
  liveRows: z.number(),
});

export const metrics = z.object({
  runs: z.array(
    z.object({
      id: z.string(),
      startedAt: z.string(),
      messages: z.number(),
      durationMs: z.number(),
      perSecond: z.number(),
    }),
  ),
  lag: z.array(z.object({ at: z.string(), topic: z.string(), partition: z.number(), lag: z.number() })),
  dataFiles: z.array(
    z.object({
      table: z.string(),
      points: z.array(z.object({ at: z.string(), dataFiles: z.number(), deleteFiles: z.number() })),
    }),
  ),
});

export const auditEntry = z.object({
  at: z.string(),
  actor: z.string(),
  action: z.string(),
  kind: z.string(),
  name: z.string(),
});

export const schedulePreview = z.object({
  error: z.string().nullable(),
  next: z.array(z.string()),
  /** The job keeps reading and commits by its commit: limits; it has no run times. */
  continuous: z.boolean(),
  presets: z.array(z.object({ label: z.string(), schedule: z.string() })),
});

/** A refused request: its message, and the fields that are wrong (path: the job file's keys, dotted). */
export const errorBody = z.object({
  error: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })),
});

export const session = z.object({
  authRequired: z.boolean(),
  authenticated: z.boolean(),
  csrfToken: z.string().nullable(),
});

export type SourceShown = z.infer<typeof sourceShown>;
export type DestinationShown = z.infer<typeof destinationShown>;
export type JobShown = z.infer<typeof jobShown>;
export type RunSummary = z.infer<typeof runSummary>;
export type RunDetail = z.infer<typeof runDetail>;
export type TableReport = z.infer<typeof tableReport>;
export type JobRow = z.infer<typeof jobRow>;
export type LogLine = z.infer<typeof logLine>;
export type Diagnosis = z.infer<typeof diagnosis>;
export type Discovery = z.infer<typeof discovery>;
export type Choices = z.infer<typeof choices>;
export type EngineCheck = z.infer<typeof engineCheck>;
export type JobTable = z.infer<typeof jobTable>;
export type Preview = z.infer<typeof preview>;
export type Metrics = z.infer<typeof metrics>;
export type TablesHealth = z.infer<typeof tablesHealth>;
export type MaintenancePass = z.infer<typeof maintenancePass>;
export type AuditEntry = z.infer<typeof auditEntry>;
export type Session = z.infer<typeof session>;
export type SchedulePreview = z.infer<typeof schedulePreview>;
export type ApiErrorBody = z.infer<typeof errorBody>;
export type JobGroup = z.infer<typeof jobGroup>;
