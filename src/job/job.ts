// The job, as the rest of floe sees it once the job file is loaded: a name, a source (the Kafka
// cluster), a destination (the Iceberg catalog), and what to read from one into the other.
// Camel-cased, defaults filled in, relative paths resolved against the job file's folder,
// secrets wrapped. The unions say which settings go together (an upsert binding has dedup
// keys), so a consumer never checks a combination the loader has checked.
//
// A binding is one topic to one table: its mode, dedup keys, format and the rest. The job file
// writes them under `streams:` (per topic) and `default_stream:` (for the topics a pattern
// selects); the file's keys keep those names, the model calls them bindings.

import type { CdcEnvelope } from "../decode/cdc-envelope.ts";
import type { DeclaredColumns } from "../decode/declared-columns.ts";
import type { UnboundPartitionField } from "../iceberg/commit/update-partition-spec.ts";
import type { ClusterSettings } from "./cluster.ts";
import type { CommitPolicy } from "./commit-policy.ts";
import type { DedupKey } from "./dedup-key.ts";
import type { Destination } from "./destination.ts";
import type { MaintenancePolicy } from "./maintenance.ts";
import type { Schedule } from "./schedule.ts";
import type { Secret } from "./secret.ts";
import type { Source } from "./source.ts";

export interface Job {
  /** Names the default namespace (`<name>_topics`) and the default consumer group (`floe_<name>`). */
  readonly name: string;
  readonly source: Source;
  readonly destination: Destination;
  /** The consumer group the job's offsets are committed to (joined only under `cluster:`). */
  readonly consumerGroup: string;
  /** As written; matched against the whole topic name. Undefined: the topics are exactly those under `streams`. */
  readonly topicPattern: string | undefined;
  /** Partitions read in parallel. */
  readonly maxThreads: number;
  /** The namespace of the job's tables in the destination's catalog. */
  readonly namespace: string;
  /** Topic name -> its binding, as listed under `streams`. */
  readonly bindings: ReadonlyMap<string, Binding>;
  /** For a topic that topic_pattern selects and `streams` does not list (the file's `default_stream`). */
  readonly defaultBinding: BindingSettings;
  /** When `floe run` syncs the job; undefined: only `floe sync` (and a run's first tick) does. */
  readonly schedule: Schedule | undefined;
  /** Where alerts go; the webhook URL is a Secret (a Slack URL carries its token). */
  readonly alerts: { readonly webhook: Secret | undefined };
  /** Days the run store keeps the job's runs and logs. */
  readonly historyDays: number;
  /** What `floe maintain` and the scheduler's passes do to the job's tables. */
  readonly maintenance: MaintenancePolicy;
  /** When a sync that is still reading commits what it has read so far. */
  readonly commit: CommitPolicy;
  /**
   * Present: every `floe run` of the job joins its consumer group and lands only the partitions
   * assigned to it. Absent: one process lands every partition and only stores offsets in the group.
   */
  readonly cluster: ClusterSettings | undefined;
}

export const BINDING_MODES = ["upsert", "append"] as const;
/**
 * How a binding's values are encoded: JSON text, or Avro / Protobuf / JSON (JSON Schema) in the
 * Confluent wire format.
 */
export const VALUE_FORMATS = ["json", "avro", "protobuf", "json_schema"] as const;
export type ValueFormat = (typeof VALUE_FORMATS)[number];
/** How a binding's keys are read: as bytes (`_kafka_key`, always), and also decoded when framed. */
export const KEY_FORMATS = ["bytes", "avro", "protobuf", "json_schema"] as const;
export type KeyFormat = (typeof KEY_FORMATS)[number];
/** What a bad message does: a row of the dead-letter table, a failed sync, or a count. */
export const ON_ERROR = ["dlq", "fail", "skip"] as const;
export type OnError = (typeof ON_ERROR)[number];
/** What a binding that leaves out on_error, format or key_format gets (the job file's defaults). */
export const BINDING_DEFAULTS: { on_error: OnError; format: ValueFormat; key_format: KeyFormat } = {
  on_error: "dlq",
  format: "json",
  key_format: "bytes",
};

/** What orders the messages of a key in an upsert: the Kafka timestamp, then partition, then offset. */
export const WINNER_ORDERS = ["_kafka_timestamp"] as const;
export type WinnerOrder = (typeof WINNER_ORDERS)[number];

/** upsert: one row per key (deletion vectors retire the old row). append: one row per message. */
export type BindingSettings =
  | {
      readonly mode: "upsert";
      readonly dedupKeys: readonly [DedupKey, ...DedupKey[]];
      /** The values are change events in this envelope (format debezium, or envelope:); JSON only. */
      readonly envelope: CdcEnvelope | undefined;
      /**
       * `order_by`: which of a key's messages wins, across partitions and rounds (change-order.ts);
       * absent: the latest offset (of a change stream: its source position).
       */
      readonly orderBy?: WinnerOrder;
      readonly onError: OnError;
      /** Declared column types, in the order of the job file; empty when none. */
      readonly columns: DeclaredColumns;
      readonly format: ValueFormat;
      /** avro, protobuf: dedup keys may name the key's fields as `_kafka_key.<field>`. */
      readonly keyFormat: KeyFormat;
      /** Fields of the key (JSON, or framed with keyFormat) -> the column each fills when the value lacks it; empty when none. */
      readonly keyColumns: ReadonlyMap<string, string>;
      /**
       * The table's partition spec (`partition_by`), by column name; empty: unpartitioned. Absent:
       * a new table is unpartitioned and an existing one keeps its spec.
       */
      readonly partitionBy?: readonly UnboundPartitionField[];
    }
  | {
      readonly mode: "append";
      /** Optional in append mode: when given, `_floe_id` hashes them; else `_floe_id` is null. */
      readonly dedupKeys: readonly DedupKey[];
      /** A change stream is an upsert stream. */
      readonly envelope?: undefined;
      readonly onError: OnError;
      readonly columns: DeclaredColumns;
      readonly format: ValueFormat;
      /** avro, protobuf: dedup keys may name the key's fields as `_kafka_key.<field>`. */
      readonly keyFormat: KeyFormat;
      /** Fields of the key (JSON, or framed with keyFormat) -> the column each fills when the value lacks it; empty when none. */
      readonly keyColumns: ReadonlyMap<string, string>;
      /**
       * The table's partition spec (`partition_by`), by column name; empty: unpartitioned. Absent:
       * a new table is unpartitioned and an existing one keeps its spec.
       */
      readonly partitionBy?: readonly UnboundPartitionField[];
    };

/** One topic to one table: the topic, the table it lands in, and its settings. */
export type Binding = BindingSettings & {
  /** The Kafka topic. */
  readonly topic: string;
  /** The table name: `table` if given, else the topic name made an identifier (tableNameFor). */
  readonly table: string;
};
