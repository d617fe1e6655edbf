// The job file (YAML, snake_case keys) as a zod schema: validation, defaults, and the
// transform into the camel-cased JobConfig. Objects are strict, so a misspelt key is an error
// and not a silently ignored setting. The same schema gives the JSON Schema that editors use
// to complete and check job files (`jobFileJsonSchema`).
//
// Checks that span several keys (a SASL protocol needs sasl:, upsert needs dedup_keys) sit on
// the smallest object that holds all the keys, so that they report together with the rest.
import { z } from "zod";
import { DECLARABLE_TYPES, type DeclarableType, type DeclaredColumns } from "../decode/declared-columns.ts";
import { isSystemColumn, KAFKA_KEY } from "../decode/system-columns.ts";
import type {
  CatalogSettings,
  IcebergDestination,
  JobConfig,
  KafkaSecurity,
  KafkaSource,
  RestCredential,
  StreamConfig,
  StreamSettings,
  TlsSettings,
} from "./job-config.ts";
import { Secret } from "./secret.ts";
import { storageSchema, storageSettings } from "./storage.ts";
import { TARGET_ENGINES } from "./target-engines.ts";
import { deadLetterTableName, isInternalTopic, tableNameFor, topicMatcher } from "./topics.ts";

/** Names that become catalog identifiers (namespace, table): safe in every engine's SQL without quoting. */
const IDENTIFIER = /^[A-Za-z0-9_]+$/;
/** Kafka's legal topic names. */
const TOPIC_NAME = /^[A-Za-z0-9._-]{1,249}$/;
/** host:port, with an IPv6 host in brackets. */
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+):\d{1,5}$/;
const MIB = 1024 * 1024;

const identifier = z.string().regex(IDENTIFIER, "must be letters, digits and _ (it becomes a catalog identifier)");

const secret = z
  .string()
  .min(1, "must not be empty")
  .transform((value) => new Secret(value));

const nonEmpty = z.string().min(1, "must not be empty");

const hostPort = z.string().regex(HOST_PORT, "expected host:port");

/** A duration with its unit, "30s", "1500ms" or "2m", as milliseconds. */
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m)$/;
const DURATION_UNIT_MS = { ms: 1, s: 1000, m: 60_000 } as const;

function duration(fallback: string, what: string) {
  return z
    .union([z.string(), z.number()])
    .transform((value, ctx) => {
      const match = typeof value === "string" ? DURATION.exec(value) : null;
      if (!match) {
        ctx.addIssue({
          code: "custom",
          message: `expected a duration with its unit ("30s", "1500ms" or "2m"), got ${JSON.stringify(value)}`,
        });
        return z.NEVER;
      }
      return Math.round(Number(match[1]) * DURATION_UNIT_MS[match[2] as keyof typeof DURATION_UNIT_MS]);
    })
    .pipe(z.int().min(1, "must be at least 1ms").max(3_600_000, "at most 1 hour (60m)"))
    .prefault(fallback)
    .describe(`${what} Default ${fallback}.`);
}

const bootstrapServers = z
  .union([
    z.array(hostPort).min(1, "list at least one broker"),
    z
      .string()
      .transform((list) => list.split(",").map((s) => s.trim()))
      .pipe(z.array(hostPort)),
  ])
  .describe("Brokers to bootstrap from: a list of host:port, or one comma-separated string.");

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

const PROTOCOLS = ["PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL"] as const;
const SASL_PROTOCOLS: readonly string[] = ["SASL_PLAINTEXT", "SASL_SSL"];
const TLS_PROTOCOLS: readonly string[] = ["SSL", "SASL_SSL"];

const sasl = z.strictObject({
  mechanism: z.enum(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]),
  username: nonEmpty,
  password: secret,
});

const tls = z
  .strictObject({
    ca: nonEmpty.optional().describe("PEM file of the CA(s) to trust; omitted: the system's."),
    cert: nonEmpty.optional().describe("PEM file of the client certificate (mutual TLS), with key."),
    key: nonEmpty.optional().describe("PEM file of the client's private key, with cert."),
    insecure_skip_verify: z.boolean().default(false).describe("Accept any broker certificate. For tests only."),
  })
  .superRefine((t, ctx) => {
    if ((t.cert === undefined) !== (t.key === undefined)) {
      const missing = t.cert === undefined ? "cert" : "key";
      ctx.addIssue({ code: "custom", path: [missing], message: "cert and key go together (mutual TLS)" });
    }
  });

const kafka = z
  .strictObject({
    bootstrap_servers: bootstrapServers,
    consumer_group: nonEmpty.optional().describe("Default: floe_<name>."),
    topic_pattern: topicPattern.optional(),
    security: z
      .strictObject({ protocol: z.enum(PROTOCOLS).default("PLAINTEXT") })
      .prefault({})
      .describe("protocol: PLAINTEXT (default), SASL_PLAINTEXT, SASL_SSL or SSL."),
    sasl: sasl.optional().describe("Required when security.protocol is SASL_PLAINTEXT or SASL_SSL."),
    tls: tls.optional().describe("For security.protocol SSL or SASL_SSL."),
    max_threads: z.int().min(1).max(64).default(4).describe("Partitions read in parallel."),
    connect_timeout: duration("30s", "Connecting to a broker (TCP, TLS and SASL), e.g. 30s."),
    request_timeout: duration(
      "30s",
      "Waiting for a broker's answer to a request; a request left unanswered that long fails the step.",
    ),
  })
  .superRefine((k, ctx) => {
    const { protocol } = k.security;
    if (SASL_PROTOCOLS.includes(protocol) && k.sasl === undefined) {
      ctx.addIssue({ code: "custom", path: ["sasl"], message: `required when security.protocol is ${protocol}` });
    }
    if (!SASL_PROTOCOLS.includes(protocol) && k.sasl !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["sasl"],
        message: `only used with security.protocol SASL_PLAINTEXT or SASL_SSL, and it is ${protocol}`,
      });
    }
    if (!TLS_PROTOCOLS.includes(protocol) && k.tls !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["tls"],
        message: `only used with security.protocol SSL or SASL_SSL, and it is ${protocol}`,
      });
    }
  });

function catalogRequestTimeout() {
  return duration("30s", "Waiting for the catalog's answer to a request (connecting included).");
}

const restCatalog = z
  .strictObject({
    type: z.literal("rest"),
    uri: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }),
    warehouse: nonEmpty.optional(),
    token: secret.optional().describe("Bearer token; or client_id + client_secret for OAuth2."),
    client_id: nonEmpty.optional(),
    client_secret: secret.optional(),
    scope: nonEmpty.optional().describe("OAuth2 scope (default PRINCIPAL_ROLE:ALL)."),
    oauth2_server_uri: nonEmpty.optional().describe("OAuth2 token endpoint (default <uri>/v1/oauth/tokens)."),
    request_timeout: catalogRequestTimeout(),
  })
  .superRefine((c, ctx) => {
    checkCredential(c, ctx);
    if (c.client_id === undefined) {
      for (const key of ["scope", "oauth2_server_uri"] as const) {
        if (c[key] !== undefined) ctx.addIssue({ code: "custom", path: [key], message: "only used with client_id" });
      }
    }
  });

const unityCatalog = z
  .strictObject({
    type: z.literal("unity"),
    workspace_url: nonEmpty.describe("https://<workspace>.cloud.databricks.com"),
    catalog: nonEmpty.describe("The Unity catalog; the namespace is a schema in it."),
    token: secret.optional().describe("Personal access token; or client_id + client_secret (service principal)."),
    client_id: nonEmpty.optional(),
    client_secret: secret.optional(),
    request_timeout: catalogRequestTimeout(),
  })
  .superRefine((c, ctx) => {
    checkCredential(c, ctx);
    if (c.token === undefined && c.client_id === undefined && c.client_secret === undefined) {
      ctx.addIssue({ code: "custom", path: ["token"], message: "unity needs token, or client_id and client_secret" });
    }
  });

const sqlCatalog = z.strictObject({
  type: z.literal("sql"),
  warehouse: nonEmpty.default("./warehouse").describe("Folder (relative to the job file) or URI of the warehouse."),
  uri: nonEmpty
    .optional()
    .describe("The SQLite database file. Default <warehouse>/catalog.db; required with an object-store warehouse."),
});

const iceberg = z.strictObject({
  catalog: z
    .discriminatedUnion("type", [restCatalog, unityCatalog, sqlCatalog])
    .prefault({ type: "sql" })
    .describe("Default: the embedded SQL catalog in ./warehouse."),
  namespace: identifier.optional().describe("Default: <name>_topics."),
  target_engines: z
    .array(z.enum(TARGET_ENGINES))
    .default([])
    .describe("Engines that read the tables; floe refuses what one of them cannot read."),
  target_file_size_bytes: z
    .int()
    .min(MIB, "at least 1 MiB (1048576)")
    .default(128 * MIB),
  compression: z.enum(["zstd", "snappy", "gzip", "uncompressed"]).default("zstd").describe("Parquet codec."),
  storage: storageSchema.optional(),
});

const streamFields = {
  mode: z.enum(["upsert", "append"]).describe("upsert: one row per key. append: one row per message."),
  dedup_keys: z
    .array(nonEmpty)
    .min(1, "list at least one field")
    .optional()
    .describe("Fields that identify a row (required for upsert); _kafka_key names the message key."),
  on_error: z
    .enum(["dlq", "fail", "skip"])
    .default("dlq")
    .describe("A bad message goes to the <table>__dlq table, fails the sync, or is counted and skipped."),
  columns: z
    .record(nonEmpty, z.enum(DECLARABLE_TYPES))
    // The names are checked even when a type is wrong, so that every problem shows at once.
    .check(z.superRefine(checkColumns, { when: () => true }))
    .optional()
    .describe(
      "Column types by field, e.g. {amount: double}: they win over inference, when the table is created and for every value.",
    ),
};

type StreamInput = { mode: "upsert" | "append"; dedup_keys?: string[] | undefined };

function checkColumns(columns: unknown, ctx: z.RefinementCtx): void {
  if (typeof columns !== "object" || columns === null || Array.isArray(columns)) return;
  const names = new Map<string, string>();
  for (const name of Object.keys(columns)) {
    const other = names.get(name.toLowerCase());
    if (isSystemColumn(name)) {
      ctx.addIssue({ code: "custom", path: [name], message: `${name} is a floe system column; its type is fixed` });
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

function checkDedupKeys(s: StreamInput, ctx: z.RefinementCtx): void {
  if (s.mode === "upsert" && s.dedup_keys === undefined) {
    ctx.addIssue({ code: "custom", path: ["dedup_keys"], message: "required when mode is upsert" });
  }
  s.dedup_keys?.forEach((key, i) => {
    if (s.dedup_keys!.indexOf(key) !== i) {
      ctx.addIssue({ code: "custom", path: ["dedup_keys", i], message: `${key} is listed twice` });
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

function streamSettings(
  s: StreamInput & { on_error: "dlq" | "fail" | "skip"; columns?: Record<string, DeclarableType> | undefined },
): StreamSettings {
  const columns: DeclaredColumns = new Map(Object.entries(s.columns ?? {}));
  return s.mode === "upsert"
    ? { mode: "upsert", dedupKeys: s.dedup_keys as [string, ...string[]], onError: s.on_error, columns }
    : { mode: "append", dedupKeys: s.dedup_keys ?? [], onError: s.on_error, columns };
}

const stream = z
  .strictObject({ ...streamFields, table: identifier.optional().describe("Default: the topic name.") })
  .superRefine(checkDedupKeys);

const defaultStream = z
  .strictObject(streamFields)
  .superRefine(checkDedupKeys)
  .describe("Settings for topics that topic_pattern selects and streams does not list. Default: append, dlq.");

/** Parses a job file's data (already YAML-parsed and env-interpolated) into a JobConfig. */
export const jobFileSchema = z
  .strictObject({
    name: identifier.describe("Names the namespace (<name>_topics) and the consumer group (floe_<name>)."),
    source: z.strictObject({ kafka }),
    destination: z.strictObject({ iceberg }).prefault({ iceberg: {} }),
    streams: z
      .record(z.string().regex(TOPIC_NAME, "not a Kafka topic name"), stream)
      .default({})
      .describe("Per topic: mode, dedup_keys, on_error, columns, table."),
    default_stream: defaultStream.prefault({ mode: "append" }),
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
    const owners = new Map<string, string>();
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
      const table = job.streams[topic]!.table ?? tableNameFor(topic);
      for (const name of [table, deadLetterTableName(table)]) {
        const other = owners.get(name);
        if (other !== undefined) {
          ctx.addIssue({
            code: "custom",
            path: ["streams", topic],
            message: `writes table ${name}, as ${other} does; set table: for one of them`,
          });
        }
        owners.set(name, topic);
      }
    }
  })
  .transform((job): JobConfig => {
    const k = job.source.kafka;
    const i = job.destination.iceberg;
    const streams = new Map<string, StreamConfig>();
    for (const [topic, s] of Object.entries(job.streams)) {
      streams.set(topic, { ...streamSettings(s), table: s.table ?? tableNameFor(topic) });
    }
    const source: KafkaSource = {
      bootstrapServers: k.bootstrap_servers,
      consumerGroup: k.consumer_group ?? `floe_${job.name}`,
      topicPattern: k.topic_pattern,
      security: security(k.security.protocol, k.sasl, k.tls),
      maxThreads: k.max_threads,
      connectTimeoutMs: k.connect_timeout,
      requestTimeoutMs: k.request_timeout,
    };
    const destination: IcebergDestination = {
      catalog: catalogSettings(i.catalog),
      namespace: i.namespace ?? `${job.name}_topics`,
      targetEngines: i.target_engines,
      targetFileSizeBytes: i.target_file_size_bytes,
      compression: i.compression,
      ...(i.storage === undefined ? {} : { storage: storageSettings(i.storage) }),
    };
    return {
      name: job.name,
      kafka: source,
      iceberg: destination,
      streams,
      defaultStream: streamSettings(job.default_stream),
    };
  });

/** JSON Schema (draft 2020-12) of the job file, for `floe schema` and editors. */
export function jobFileJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(jobFileSchema, { io: "input", target: "draft-2020-12" }),
    title: "floe job file",
    description: "A floe sync job: Kafka topics into Apache Iceberg tables.",
  };
}

type Credentials = { token?: Secret | undefined; client_id?: string | undefined; client_secret?: Secret | undefined };

function checkCredential(c: Credentials, ctx: z.RefinementCtx): void {
  if (c.token !== undefined && (c.client_id !== undefined || c.client_secret !== undefined)) {
    ctx.addIssue({ code: "custom", path: ["token"], message: "give token or client_id + client_secret, not both" });
  }
  if (c.client_id !== undefined && c.client_secret === undefined) {
    ctx.addIssue({ code: "custom", path: ["client_secret"], message: "required with client_id" });
  }
  if (c.client_secret !== undefined && c.client_id === undefined) {
    ctx.addIssue({ code: "custom", path: ["client_id"], message: "required with client_secret" });
  }
}

type SaslInput = z.output<typeof sasl>;
type TlsInput = z.output<typeof tls>;
type CatalogInput = z.output<typeof iceberg>["catalog"];

function security(
  protocol: (typeof PROTOCOLS)[number],
  s: SaslInput | undefined,
  t: TlsInput | undefined,
): KafkaSecurity {
  const tlsSettings: TlsSettings = {
    ca: t?.ca,
    clientCertificate: t?.cert !== undefined && t.key !== undefined ? { cert: t.cert, key: t.key } : undefined,
    insecureSkipVerify: t?.insecure_skip_verify ?? false,
  };
  // The refinements above guarantee sasl for the SASL protocols.
  const credentials = s && { mechanism: s.mechanism, username: s.username, password: s.password };
  switch (protocol) {
    case "PLAINTEXT":
      return { protocol };
    case "SSL":
      return { protocol, tls: tlsSettings };
    case "SASL_PLAINTEXT":
      return { protocol, sasl: credentials! };
    case "SASL_SSL":
      return { protocol, sasl: credentials!, tls: tlsSettings };
  }
}

function catalogSettings(c: CatalogInput): CatalogSettings {
  switch (c.type) {
    case "rest": {
      let credential: RestCredential | undefined;
      if (c.token !== undefined) credential = { token: c.token };
      else if (c.client_id !== undefined && c.client_secret !== undefined) {
        credential = {
          clientId: c.client_id,
          clientSecret: c.client_secret,
          scope: c.scope,
          oauth2ServerUri: c.oauth2_server_uri,
        };
      }
      return { type: "rest", uri: c.uri, warehouse: c.warehouse, credential, requestTimeoutMs: c.request_timeout };
    }
    case "unity":
      return {
        type: "unity",
        workspaceUrl: c.workspace_url,
        catalog: c.catalog,
        credential:
          c.token !== undefined ? { token: c.token } : { clientId: c.client_id!, clientSecret: c.client_secret! },
        requestTimeoutMs: c.request_timeout,
      };
    case "sql":
      return { type: "sql", warehouse: c.warehouse, ...(c.uri === undefined ? {} : { uri: c.uri }) };
  }
}
