// The job file (YAML, snake_case keys) as a zod schema: validation, defaults, and the
// transform into the camel-cased Job. Objects are strict, so a misspelt key is an error and not
// a silently ignored setting. The same schema gives the JSON Schema that editors use to
// complete and check job files (`jobFileJsonSchema`, printed by `floe config schema`).
//
// The source's keys and rules are in source.ts, the destination's in destination.ts; this file
// adds the job's own: its name, the reading settings, the bindings (the file's `streams` and
// `default_stream`), and the rules that span them.
// Checks that span several keys (upsert needs dedup_keys) sit on the smallest object that holds
// all the keys, so that they report together with the rest.

import { z } from "zod";
import { DECLARABLE_TYPES, type DeclarableType, type DeclaredColumns } from "../decode/declared-columns.ts";
import { isSystemColumn, KAFKA_KEY } from "../decode/system-columns.ts";
import type { UnboundPartitionField } from "../iceberg/commit/update-partition-spec.ts";
import type { IcebergType } from "../iceberg/spec/types.ts";
import {
  type ChangeStreamInput,
  changeStreamFields,
  checkChangeStream,
  defaultChangeDedupKeys,
  isChangeStream,
  toEnvelope,
  toKeyColumns,
} from "./change-stream.ts";
import { clusterSchema } from "./cluster.ts";
import { commitPolicySchema } from "./commit-policy.ts";
import { type DedupKey, parseDedupKey } from "./dedup-key.ts";
import { icebergDestinationShape, toDestination } from "./destination.ts";
import {
  BINDING_DEFAULTS,
  BINDING_MODES,
  type Binding,
  type BindingSettings,
  type Job,
  KEY_FORMATS,
  type KeyFormat,
  ON_ERROR,
  type OnError,
  VALUE_FORMATS,
  type ValueFormat,
  WINNER_ORDERS,
  type WinnerOrder,
} from "./job.ts";
import { maintenanceSchema } from "./maintenance.ts";
import { checkPartitionTypes, partitionBySchema } from "./partition-by.ts";
import { parseSchedule, ScheduleError } from "./schedule.ts";
import { identifier, nonEmpty } from "./schema-parts.ts";
import { Secret } from "./secret.ts";
import { checkKafkaSecurity, kafkaClusterShape, toSource } from "./source.ts";
import { engineConflicts } from "./target-engines.ts";
import { isInternalTopic, sharedTables, tableNameFor, topicMatcher } from "./topics.ts";

/** Kafka's legal topic names. */
const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;

/** Why topic_pattern does not compile, as written (the user's terms) or as floe anchors it; undefined when it does. */
function topicPatternError(pattern: string): string | undefined {
  try {
    new RegExp(pattern);
    topicMatcher(pattern);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const topicPattern = z
  .string()
  .min(1, "must not be empty")
  .superRefine((pattern, ctx) => {
    const error = topicPatternError(pattern);
    if (error !== undefined) ctx.addIssue({ code: "custom", message: `not a regular expression: ${error}` });
  })
  .describe("Regular expression matched against the whole topic name. Omitted: the topics listed under streams.");

/** The keys of source.kafka that say how this job reads the cluster (a stored job keeps them apart from its source). */
export const jobReadingShape = {
  consumer_group: nonEmpty.optional().describe("Default: floe_<name>."),
  topic_pattern: topicPattern.optional(),
  max_threads: z.int().min(1).max(64).default(4).describe("Partitions read in parallel."),
};

/** source.kafka: the cluster (source.ts), and how this job reads from it. */
const kafka = z.strictObject({ ...kafkaClusterShape, ...jobReadingShape }).superRefine(checkKafkaSecurity);

/** destination.iceberg: the catalog and the tables' files (destination.ts), and this job's namespace. */
const iceberg = z.strictObject({
  ...icebergDestinationShape,
  namespace: identifier.optional().describe("Default: <name>_topics."),
});

/** The job file's formats: the model's, and debezium, which is JSON in Debezium's envelope. */
const FILE_FORMATS = [...VALUE_FORMATS, "debezium"] as const;
type FileFormat = (typeof FILE_FORMATS)[number];

const bindingFields = {
  mode: z.enum(BINDING_MODES).describe("upsert: one row per key. append: one row per message."),
  dedup_keys: z
    .array(nonEmpty)
    .min(1, "list at least one field")
    .optional()
    .describe("Fields that identify a row (required for upsert); _kafka_key names the message key."),
  on_error: z
    .enum(ON_ERROR)
    .default(BINDING_DEFAULTS.on_error)
    .describe("A bad message goes to the <table>__dlq table, fails the sync, or is counted and skipped."),
  format: z
    .enum(FILE_FORMATS)
    .default(BINDING_DEFAULTS.format)
    .describe(
      "json (default): JSON text, columns inferred. avro, protobuf: the Confluent wire format, columns from the schema registry (source.kafka.schema_registry). json_schema: JSON in the Confluent wire format (Confluent's JSON Schema serializer), columns inferred as for json, typed by the registry schema's top-level properties. debezium: JSON Debezium change events (upsert; deletes delete).",
    ),
  key_format: z
    .enum(KEY_FORMATS)
    .default(BINDING_DEFAULTS.key_format)
    .describe(
      "bytes (default): the key is _kafka_key (base64). avro, protobuf, json_schema: a framed key is decoded too, and dedup_keys can name its fields as _kafka_key.<field>.",
    ),
  columns: z
    .record(nonEmpty, z.enum(DECLARABLE_TYPES))
    // The names are checked even when a type is wrong, so that every problem shows at once.
    .check(z.superRefine(checkColumns, { when: () => true }))
    .optional()
    .describe(
      "Column types by field, e.g. {amount: double}: they win over inference, when the table is created and for every value. json: the value's JSON text in a string column; map: a JSON object as map<string, V> instead of a struct. For avro and protobuf streams only json.",
    ),
  partition_by: partitionBySchema.optional(),
  order_by: z
    .enum(WINNER_ORDERS)
    .optional()
    .describe(
      "upsert: which message of a key wins when the key is in several partitions. _kafka_timestamp: the latest Kafka timestamp, then the higher partition, then the higher offset, whatever order the messages arrive in. Default: the latest offset read.",
    ),
  ...changeStreamFields,
};

type BindingInput = ChangeStreamInput & {
  mode: "upsert" | "append";
  dedup_keys?: string[] | undefined;
  format?: FileFormat;
  key_format?: KeyFormat;
  columns?: Record<string, unknown> | undefined;
  partition_by?: UnboundPartitionField[] | undefined;
  order_by?: WinnerOrder | undefined;
};

function checkColumns(columns: unknown, ctx: z.RefinementCtx): void {
  if (typeof columns !== "object" || columns === null || Array.isArray(columns)) return;
  const names = new Map<string, string>();
  for (const name of Object.keys(columns)) {
    const other = names.get(name.toLowerCase());
    if (isSystemColumn(name)) {
      ctx.addIssue({ code: "custom", path: [name], message: `${name} is a floe system column; its type is fixed` });
    } else if (name.includes(".")) {
      // A declared type is a top-level column's: a path would silently make a column of that name beside the struct.
      const top = name.slice(0, name.indexOf("."));
      ctx.addIssue({
        code: "custom",
        path: [name],
        message: `a field inside a struct cannot be declared (columns: names top-level fields); declare ${top}: json or ${top}: map to type the whole field`,
      });
    } else if (other !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: [name],
        message: `differs from ${other} only in case, and Spark, Databricks and Trino match column names without case`,
      });
    }
    names.set(name.toLowerCase(), name);
  }
}

function checkDedupKeys(s: BindingInput, ctx: z.RefinementCtx): void {
  checkChangeStream(s, ctx);
  if (
    s.format !== undefined &&
    s.format !== "json" &&
    s.format !== "json_schema" &&
    s.format !== "debezium" &&
    s.columns !== undefined
  ) {
    // The registry's schema says what each column is; a field's JSON text is the one choice left.
    for (const [name, type] of Object.entries(s.columns)) {
      if (type === "json") continue;
      ctx.addIssue({
        code: "custom",
        path: ["columns", name],
        message: `only json (the field's JSON text) for an ${s.format} stream: its schema types its columns`,
      });
    }
  }
  if (s.partition_by)
    checkPartitionTypes(s.partition_by, columnTypesOf(s.columns as Record<string, DeclarableType> | undefined), ctx, [
      "partition_by",
    ]);
  if (s.order_by !== undefined && s.mode !== "upsert") {
    ctx.addIssue({ code: "custom", path: ["order_by"], message: "only for mode: upsert (append keeps every message)" });
  } else if (s.order_by !== undefined && isChangeStream(s)) {
    ctx.addIssue({
      code: "custom",
      path: ["order_by"],
      message: "a change stream's messages are ordered by their source position; order_by is for plain upsert",
    });
  }
  if (s.mode === "upsert" && s.dedup_keys === undefined && !isChangeStream(s)) {
    ctx.addIssue({ code: "custom", path: ["dedup_keys"], message: "required when mode is upsert" });
  }
  s.dedup_keys?.forEach((key, i) => {
    const parsed = parseDedupKey(key);
    if (s.dedup_keys!.indexOf(key) !== i) {
      ctx.addIssue({ code: "custom", path: ["dedup_keys", i], message: `${key} is listed twice` });
    } else if (parsed.kind === "kafka-key-field") {
      if (s.key_format === undefined || s.key_format === "bytes") {
        ctx.addIssue({
          code: "custom",
          path: ["dedup_keys", i],
          message: `a field of the key needs key_format: avro, protobuf or json_schema (the key's schema names its fields)`,
        });
      }
    } else if (key.includes(".") && declaredWhole(s.columns, key) !== undefined) {
      const top = key.slice(0, key.indexOf("."));
      ctx.addIssue({
        code: "custom",
        path: ["dedup_keys", i],
        message: `${top} is declared ${declaredWhole(s.columns, key)} (columns), so ${key} is inside no struct: a dedup key may be a field inside structs only`,
      });
    } else if (isSystemColumn(key) && key !== KAFKA_KEY) {
      // The message key identifies a row; the other system columns describe one message.
      ctx.addIssue({
        code: "custom",
        path: ["dedup_keys", i],
        message: `${key} is a floe system column; of those only ${KAFKA_KEY} can be a dedup key`,
      });
    }
  });
}

/** The declared type (json, map) that makes a dedup key's top-level field no struct; undefined when none does. */
function declaredWhole(columns: Record<string, unknown> | undefined, key: string): string | undefined {
  const type = columns?.[key.slice(0, key.indexOf("."))];
  return type === "json" || type === "map" ? type : undefined;
}

function bindingSettings(
  s: BindingInput & {
    on_error: OnError;
    format: FileFormat;
    key_format: KeyFormat;
    columns?: Record<string, DeclarableType> | undefined;
  },
): BindingSettings {
  const columns: DeclaredColumns = new Map(Object.entries(s.columns ?? {}));
  const { key_format: keyFormat } = s;
  // Debezium's JSON is JSON: the envelope is what differs.
  const format: ValueFormat = s.format === "debezium" ? "json" : s.format;
  const common = {
    onError: s.on_error,
    columns,
    format,
    keyFormat,
    keyColumns: toKeyColumns(s),
    ...(s.partition_by === undefined ? {} : { partitionBy: s.partition_by }),
  };
  const envelope = toEnvelope(s);
  const dedupKeys = (s.dedup_keys ?? (envelope ? defaultChangeDedupKeys(s) : [])).map(parseDedupKey);
  return s.mode === "upsert"
    ? {
        mode: "upsert",
        dedupKeys: dedupKeys as [DedupKey, ...DedupKey[]],
        envelope,
        ...(s.order_by === undefined ? {} : { orderBy: s.order_by }),
        ...common,
      }
    : { mode: "append", dedupKeys, ...common };
}

const binding = z
  .strictObject({ ...bindingFields, table: identifier.optional().describe("Default: the topic name.") })
  .superRefine(checkDedupKeys);

const defaultBinding = z
  .strictObject(bindingFields)
  .superRefine(checkDedupKeys)
  .describe("Settings for topics that topic_pattern selects and streams does not list. Default: append, dlq.");

/** The job file's top-level `streams` and `default_stream`, for a stored job that keeps its source and destination apart. */
export const streamsSchema = z
  .record(z.string().regex(TOPIC_NAME, "not a Kafka topic name"), binding)
  .default({})
  .describe("Per topic: mode, dedup_keys, on_error, columns, table.");
export const defaultStreamSchema = defaultBinding.prefault({ mode: "append" });

const schedule = z
  .string()
  .transform((text, ctx) => {
    try {
      return parseSchedule(text);
    } catch (error) {
      if (!(error instanceof ScheduleError)) throw error;
      ctx.addIssue({ code: "custom", message: error.message });
      return z.NEVER;
    }
  })
  .describe(
    'When `floe run` syncs the job: "continuous" (keeps reading, commits by commit:), "every <n><unit>" (unit s, m, h, d; "every 5m") or a cron expression of five fields, or six with seconds first ("*/2 * * * * *"), in the machine\'s time zone.',
  );

const alerts = z
  .strictObject({
    webhook: z
      .url({ protocol: /^https?$/, error: "expected an http:// or https:// URL" })
      .transform((url) => new Secret(url))
      .optional()
      .describe(
        "Slack-compatible incoming webhook: a JSON {text} is posted on a failed run, on dead letters, and when the last successful run nears the topics' retention. Never printed.",
      ),
  })
  .describe("Where `floe run` sends alerts for this job; `floe run --webhook` sets one for the jobs without.");

/** Parses a job file's data (already YAML-parsed and env-interpolated) into a Job. */
export const jobFileSchema = z
  .strictObject({
    name: identifier.describe("Names the namespace (<name>_topics) and the consumer group (floe_<name>)."),
    source: z.strictObject({ kafka }),
    destination: z.strictObject({ iceberg }).prefault({ iceberg: {} }),
    streams: streamsSchema,
    default_stream: defaultStreamSchema,
    schedule: schedule.optional(),
    alerts: alerts.optional(),
    maintenance: maintenanceSchema,
    commit: commitPolicySchema,
    cluster: clusterSchema.optional(),
    history_days: z
      .number()
      .positive()
      .max(36_500)
      .default(30)
      .describe("Days the run store keeps this job's runs and their logs."),
  })
  .superRefine((job, ctx) => {
    const { topic_pattern } = job.source.kafka;
    const topics = Object.keys(job.streams);
    if (topic_pattern === undefined && topics.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["source", "kafka", "topic_pattern"],
        message: "required when streams lists no topic",
      });
    }
    // A pattern that does not compile is reported on its own key; the streams are then not checked against it.
    const matcher =
      topic_pattern === undefined || topicPatternError(topic_pattern) !== undefined
        ? undefined
        : topicMatcher(topic_pattern);
    for (const topic of topics) {
      if (isInternalTopic(topic)) {
        ctx.addIssue({ code: "custom", path: ["streams", topic], message: "internal topics are never synced" });
      } else if (matcher && !matcher.test(topic)) {
        ctx.addIssue({
          code: "custom",
          path: ["streams", topic],
          message: `topic_pattern ${topic_pattern} does not match this topic, so it would never sync`,
        });
      }
    }
    if (job.source.kafka.schema_registry === undefined) {
      const bindings: [(string | number)[], BindingInput][] = topics.map((t) => [["streams", t], job.streams[t]!]);
      if (topic_pattern !== undefined) bindings.push([["default_stream"], job.default_stream]);
      for (const [path, s] of bindings) {
        for (const [key, value] of [
          ["format", s.format],
          ["key_format", s.key_format],
        ] as const) {
          if (value === "avro" || value === "protobuf" || value === "json_schema") {
            ctx.addIssue({
              code: "custom",
              path: [...path, key],
              message: "avro, protobuf and json_schema need source.kafka.schema_registry, where the schemas are",
            });
          }
        }
      }
    }
    const listed = topics.map((topic) => ({ topic, table: job.streams[topic]!.table ?? tableNameFor(topic) }));
    for (const { topic, table, other } of sharedTables(listed)) {
      ctx.addIssue({
        code: "custom",
        path: ["streams", topic],
        message: `writes table ${table}, as ${other} does; set table: for one of them`,
      });
    }
    // An engine that applies no deletion vectors reads an upsert table's retired rows as live.
    // default_stream only applies to topics a pattern selects: without one it writes no table.
    const upsertBindings = topics.filter((topic) => job.streams[topic]!.mode === "upsert");
    if (topic_pattern !== undefined && job.default_stream.mode === "upsert") upsertBindings.push("default_stream");
    for (const conflict of engineConflicts(job.destination.iceberg.target_engines, upsertBindings)) {
      ctx.addIssue({
        code: "custom",
        path: ["destination", "iceberg", "target_engines", conflict.index],
        message: conflict.message,
      });
    }
  })
  .transform((job): Job => {
    const k = job.source.kafka;
    const i = job.destination.iceberg;
    const bindings = new Map<string, Binding>();
    for (const [topic, s] of Object.entries(job.streams)) {
      bindings.set(topic, { ...bindingSettings(s), topic, table: s.table ?? tableNameFor(topic) });
    }
    return {
      name: job.name,
      source: toSource(k),
      destination: toDestination(i),
      consumerGroup: k.consumer_group ?? `floe_${job.name}`,
      topicPattern: k.topic_pattern,
      maxThreads: k.max_threads,
      namespace: i.namespace ?? `${job.name}_topics`,
      bindings,
      defaultBinding: bindingSettings(job.default_stream),
      schedule: job.schedule,
      alerts: { webhook: job.alerts?.webhook },
      historyDays: job.history_days,
      maintenance: job.maintenance,
      commit: job.commit,
      cluster: job.cluster,
    };
  });

/** JSON Schema (draft 2020-12) of the job file, for `floe config schema` and editors. */
export function jobFileJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(jobFileSchema, { io: "input", target: "draft-2020-12" }),
    title: "floe job file",
    description: "A floe sync job: Kafka topics into Apache Iceberg tables.",
  };
}

/** The Iceberg types of declared columns: a json column is a string column, a map one a map (of values still unknown). */
function columnTypesOf(columns: Record<string, DeclarableType> | undefined): Record<string, IcebergType> {
  const types: Record<string, IcebergType> = {};
  for (const [name, type] of Object.entries(columns ?? {})) {
    types[name] =
      type === "json"
        ? "string"
        : type === "map"
          ? { kind: "map", keyId: 0, key: "string", valueId: 0, value: "string", valueRequired: false }
          : type;
  }
  return types;
}
