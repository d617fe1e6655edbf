// What a job would sync, as a person sets it up: the topics it selects (and why the others are
// skipped), each with its partitions, the messages each retains (high watermark minus log start)
// and the columns a sample of its messages gives, with the Iceberg type, whether the column is
// nullable and an example value: the bindings a job file would list. `floe discover` prints it;
// the web UI's streams page shows it.
//
// It writes nothing: no namespace, no table, no consumer-group offsets (the group's offsets are
// read without joining it), and an embedded catalog that does not exist yet is not created (the
// job has no table then). The example values are the messages' data: a field whose name says it
// holds a secret (password, token, ...) shows none.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { DeclarableType } from "../decode/declared-columns.ts";
import type { ColumnSource, StreamSample } from "../decode/schema-sample.ts";
import type { Catalog } from "../iceberg/catalog/catalog.ts";
import { loadCatalog } from "../iceberg/catalog/load-catalog.ts";
import { databasePath } from "../iceberg/catalog/sql-catalog.ts";
import type { Destination } from "../job/destination.ts";
import type { Job } from "../job/job.ts";
import type { SkippedTopic } from "../job/topics.ts";
import { KafkaCluster } from "../kafka/connection.ts";
import { KafkaSource } from "../kafka/kafka-source.ts";
import { catalogConfig, kafkaConnectionOptions, tableFileIO } from "../pipeline/connect.ts";
import { planSync } from "../pipeline/plan-sync.ts";
import type { SyncSource } from "../pipeline/source.ts";
import { sampleBindings } from "./sample-bindings.ts";

export const DEFAULT_DISCOVERY_SAMPLE = 1000;

export interface DiscoveryOptions {
  /** Messages sampled per topic to infer its columns (0: none). */
  readonly sample?: number;
  readonly signal?: AbortSignal;
}

/** Where a discovery looks; `catalog` undefined: the job's catalog does not exist yet, so it has no table. */
export interface DiscoveryConnections {
  readonly source: SyncSource;
  readonly catalog: Catalog | undefined;
}

export interface DiscoveredPartition {
  readonly partition: number;
  readonly logStartOffset: bigint;
  readonly highWatermark: bigint;
  /** highWatermark - logStartOffset: offsets in the log now (fewer messages when compacted or transactional). */
  readonly retained: bigint;
  /** Offsets the next sync would read. */
  readonly toRead: bigint;
}

export interface DiscoveredColumn {
  readonly name: string;
  /** The Iceberg type; undefined when no sampled value gives one (only nulls, or refused values). */
  readonly type: string | undefined;
  readonly source: ColumnSource;
  /** The column takes null: every column floe adds does; a table's own may require a value. */
  readonly nullable: boolean;
  /** Sampled records in which the field is null or absent. */
  readonly nulls: number;
  /** Sampled records whose value the column refuses (they would be bad messages). */
  readonly misfits: number;
  /** A sampled value as JSON text, cut short; undefined when none, or hidden (`hidden`). */
  readonly example: string | undefined;
  /** The field's name says it holds a secret: no example is shown. */
  readonly hidden: boolean;
}

export interface DiscoveredBinding {
  readonly topic: string;
  /** `namespace.table`. */
  readonly table: string;
  readonly mode: "upsert" | "append";
  readonly tableExists: boolean;
  /** As Kafka's tools print it; undefined when the cluster gives none. */
  readonly topicId: string | undefined;
  readonly partitions: readonly DiscoveredPartition[];
  /** Sum over the partitions. */
  readonly retained: bigint;
  readonly sample: {
    readonly messages: number;
    readonly tombstones: number;
    /** Sampled messages that are not JSON objects, by reason. */
    readonly bad: Readonly<Record<string, number>>;
    /** The message fields' columns; floe's system columns (_kafka_key, ...) come on top. */
    readonly columns: readonly DiscoveredColumn[];
    /** The `columns:` to declare where the sample mixes types. */
    readonly proposedColumns: Readonly<Record<string, DeclarableType>>;
  };
}

export interface Discovery {
  readonly job: string;
  readonly namespace: string;
  /** The cluster as a user may see it (never a password). */
  readonly cluster: string;
  /** Named as the job file's `streams:` it proposes (and as `floe discover --json` prints it). */
  readonly streams: readonly DiscoveredBinding[];
  readonly skipped: readonly SkippedTopic[];
}

/** Discovers the job's bindings; reads the cluster and the catalog, writes nothing. */
export async function discoverBindings(
  job: Job,
  connections: DiscoveryConnections,
  options: DiscoveryOptions = {},
): Promise<Discovery> {
  const { source, catalog } = connections;
  const plan = await planSync(job, source, catalog);
  const samples = await sampleBindings(source, plan, {
    messagesPerTopic: options.sample ?? DEFAULT_DISCOVERY_SAMPLE,
    maxThreads: job.maxThreads,
    registry: job.source.schemaRegistry,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const streams = plan.bindings.map(({ binding, table }): DiscoveredBinding => {
    const partitions = plan.offsets.partitions
      .filter((p) => p.topic === binding.topic)
      .map((p) => ({
        partition: p.partition,
        logStartOffset: p.logStartOffset,
        highWatermark: p.highWatermark,
        retained: p.highWatermark - p.logStartOffset,
        toRead: p.stopOffset - p.startOffset,
      }));
    return {
      topic: binding.topic,
      table: `${job.namespace}.${binding.table}`,
      mode: binding.mode,
      tableExists: table !== undefined,
      topicId: plan.topicIds.get(binding.topic),
      partitions,
      retained: partitions.reduce((sum, p) => sum + p.retained, 0n),
      sample: discoveredSample(samples.get(binding.topic)),
    };
  });
  return { job: job.name, namespace: job.namespace, cluster: source.description, streams, skipped: plan.skipped };
}

function discoveredSample(sample: StreamSample | undefined): DiscoveredBinding["sample"] {
  if (sample === undefined) return { messages: 0, tombstones: 0, bad: {}, columns: [], proposedColumns: {} };
  const bad = Object.values(sample.bad).reduce((sum, n) => sum + n, 0);
  const records = sample.messages - sample.tombstones - bad;
  return {
    messages: sample.messages,
    tombstones: sample.tombstones,
    bad: { ...sample.bad },
    columns: sample.columns.map((c) => {
      const present = Object.entries(c.values).reduce((sum, [kind, n]) => (kind === "null" ? sum : sum + n), 0);
      const hidden = isSecretName(c.name);
      return {
        name: c.name,
        type: c.type,
        source: c.source,
        nullable: !c.required,
        nulls: records - present,
        misfits: c.misfits,
        example: hidden ? undefined : c.example,
        hidden,
      };
    }),
    proposedColumns: Object.fromEntries(sample.proposed),
  };
}

/** Words that name a secret, matched against a field's name split at _, -, . and camelCase. */
const SECRET_WORDS = new Set([
  "password",
  "passwd",
  "pwd",
  "secret",
  "token",
  "apikey",
  "credential",
  "credentials",
  "privatekey",
  "passphrase",
  "ssn",
]);

/** Does the field's name say it holds a secret (password, api_key, accessToken, client-secret, ...)? */
export function isSecretName(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "");
  for (let i = 0; i < words.length; i++) {
    if (SECRET_WORDS.has(words[i]!)) return true;
    // Two-word names: api key, private key.
    if (i + 1 < words.length && SECRET_WORDS.has(words[i]! + words[i + 1]!)) return true;
  }
  return false;
}

/**
 * Runs `work` with the job's cluster and, when it exists, its catalog, and closes them however
 * it ends. An embedded catalog whose database is not there yet is left uncreated.
 */
export async function withDiscoveryConnections<T>(
  job: Job,
  work: (connections: DiscoveryConnections) => Promise<T>,
): Promise<T> {
  const cluster = await KafkaCluster.connect(kafkaConnectionOptions(job.source));
  try {
    const catalog = embeddedCatalogMissing(job.destination)
      ? undefined
      : await loadCatalog(catalogConfig(job.destination), { fileIO: tableFileIO(job.destination.storage) });
    try {
      return await work({ source: new KafkaSource(cluster), catalog });
    } finally {
      await catalog?.close();
    }
  } finally {
    await cluster.close();
  }
}

/** The job's catalog is the embedded one and its database file does not exist: opening it would create it. */
function embeddedCatalogMissing(destination: Destination): boolean {
  const catalog = destination.catalog;
  if (catalog.type !== "sql") return false;
  if (catalog.uri !== undefined) return !existsSync(databasePath(catalog.uri));
  const remote = /^[a-z][a-z0-9+.-]*:\/\//i.test(catalog.warehouse) && !catalog.warehouse.startsWith("file:");
  // An object-store warehouse without a database is refused when it is opened, with the reason.
  return !remote && !existsSync(join(resolve(catalog.warehouse), "catalog.db"));
}
