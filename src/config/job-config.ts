// The job, as the rest of floe sees it once the job file is loaded: camel-cased, defaults
// filled in, relative paths resolved against the job file's folder, secrets wrapped. The
// unions say which settings go together (a SASL protocol has SASL credentials, an upsert
// stream has dedup keys), so a consumer never checks a combination the loader has checked.
import type { DeclaredColumns } from "../decode/declared-columns.ts";
import type { Secret } from "./secret.ts";
import type { StorageSettings } from "./storage.ts";
import type { TargetEngine } from "./target-engines.ts";

export interface JobConfig {
  /** Names the default namespace (`<name>_topics`) and the default consumer group (`floe_<name>`). */
  readonly name: string;
  readonly kafka: KafkaSource;
  readonly iceberg: IcebergDestination;
  /** Topic name -> its stream settings, as listed under `streams`. */
  readonly streams: ReadonlyMap<string, StreamConfig>;
  /** For a topic that topic_pattern selects and `streams` does not list. */
  readonly defaultStream: StreamSettings;
}

export interface KafkaSource {
  readonly bootstrapServers: readonly string[];
  readonly consumerGroup: string;
  /** As written; matched against the whole topic name. Undefined: the topics are exactly those under `streams`. */
  readonly topicPattern: string | undefined;
  readonly security: KafkaSecurity;
  /** Partitions read in parallel. */
  readonly maxThreads: number;
  /** Connecting to a broker (TCP, TLS, SASL). */
  readonly connectTimeoutMs: number;
  /** Waiting for a broker's answer to one request. */
  readonly requestTimeoutMs: number;
}

export type KafkaSecurity =
  | { readonly protocol: "PLAINTEXT" }
  | { readonly protocol: "SASL_PLAINTEXT"; readonly sasl: SaslCredentials }
  | { readonly protocol: "SSL"; readonly tls: TlsSettings }
  | { readonly protocol: "SASL_SSL"; readonly sasl: SaslCredentials; readonly tls: TlsSettings };

export type SaslMechanism = "PLAIN" | "SCRAM-SHA-256" | "SCRAM-SHA-512";

export interface SaslCredentials {
  readonly mechanism: SaslMechanism;
  readonly username: string;
  readonly password: Secret;
}

/** PEM files (absolute paths). No `ca`: the system's trusted CAs. `cert` and `key` come together (mutual TLS). */
export interface TlsSettings {
  readonly ca: string | undefined;
  readonly clientCertificate: { readonly cert: string; readonly key: string } | undefined;
  readonly insecureSkipVerify: boolean;
}

export interface IcebergDestination {
  readonly catalog: CatalogSettings;
  readonly namespace: string;
  readonly targetEngines: readonly TargetEngine[];
  readonly targetFileSizeBytes: number;
  readonly compression: ParquetCompression;
  /** How floe reaches the object store; absent: vended credentials or the store's SDK chain. */
  readonly storage?: StorageSettings;
}

export type ParquetCompression = "zstd" | "snappy" | "gzip" | "uncompressed";

export type CatalogSettings =
  | {
      readonly type: "rest";
      readonly uri: string;
      readonly warehouse: string | undefined;
      readonly credential: RestCredential | undefined;
      /** Waiting for the catalog's answer to one request, connecting included. */
      readonly requestTimeoutMs: number;
    }
  | {
      readonly type: "unity";
      readonly workspaceUrl: string;
      readonly catalog: string;
      readonly credential: TokenCredential | ClientCredential;
      readonly requestTimeoutMs: number;
    }
  /** The embedded catalog: SQLite in the warehouse folder (an absolute path, or a URI such as s3://). */
  | { readonly type: "sql"; readonly warehouse: string; readonly uri?: string | undefined };

export interface TokenCredential {
  readonly token: Secret;
}

/** OAuth2 client credentials (a Databricks service principal for unity). */
export interface ClientCredential {
  readonly clientId: string;
  readonly clientSecret: Secret;
}

export type RestCredential =
  | TokenCredential
  | (ClientCredential & { readonly scope: string | undefined; readonly oauth2ServerUri: string | undefined });

export type StreamMode = "upsert" | "append";
export type OnError = "dlq" | "fail" | "skip";

/** upsert: one row per key (deletion vectors retire the old row). append: one row per message. */
export type StreamSettings =
  | {
      readonly mode: "upsert";
      readonly dedupKeys: readonly [string, ...string[]];
      readonly onError: OnError;
      /** Declared column types, in the order of the job file; empty when none. */
      readonly columns: DeclaredColumns;
    }
  | {
      readonly mode: "append";
      /** Optional in append mode: when given, `_floe_id` hashes them; else `_floe_id` is null. */
      readonly dedupKeys: readonly string[];
      readonly onError: OnError;
      readonly columns: DeclaredColumns;
    };

/** A stream listed under `streams`: its settings and the table it lands in. */
export type StreamConfig = StreamSettings & {
  /** The table name: `table` if given, else the topic name made an identifier (tableNameFor). */
  readonly table: string;
};
