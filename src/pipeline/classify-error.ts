// What kind of failure ended a sync, and whether running it again unchanged may succeed: the
// `failed` event's error, from which the CLI picks its exit code and a scheduler its retries.
// Decided from the error's class, in this one function.

import { DeclaredColumnError } from "../decode/infer-schema.ts";
import { SchemaEvolutionError } from "../decode/registry-schema.ts";
import { CommitConflictError } from "../iceberg/catalog/catalog.ts";
import { ValidationError } from "../iceberg/commit/validation-error.ts";
import { IcebergError } from "../iceberg/errors.ts";
import { StorageError } from "../iceberg/io/storage-error.ts";
import { ConfigError } from "../job/config-error.ts";
import { TopicSelectionError } from "../job/topics.ts";
import { ConsumerGroupActiveError } from "../kafka/commit-offsets.ts";
import { KafkaAuthorizationError, KafkaConnectionError, KafkaError } from "../kafka/errors.ts";
import { MessagesLostError, OffsetsAheadError } from "../kafka/plan.ts";
import { RegistryError } from "../registry/client.ts";
import { BadMessageError } from "./binding-batch.ts";
import { ConcurrentSyncError } from "./offset-claim.ts";
import { OutboundRefusedError } from "./outbound-policy.ts";
import { PositionUnknownError } from "./snapshot-offsets.ts";

export type SyncErrorKind =
  /** The job does not fit what it finds (no topic selected, two topics on one table), or the job file is wrong. */
  | "config"
  /** A declared column, or a new version of a registry schema, contradicts the table's column. */
  | "table-schema"
  /** Messages expired unread (retention); going on needs the user's consent. */
  | "data-loss"
  /** Offsets beyond the end of the log: the partition is not the one that was read. */
  | "offsets-ahead"
  /** A table holds rows but no Kafka position floe can trust; the user says where to resume (--resume-from). */
  | "position-unknown"
  /** A bad message in a binding with on_error: fail. */
  | "bad-message"
  /** Another writer committed this job's messages meanwhile. */
  | "concurrent-sync"
  /** Another consumer is a member of the job's consumer group. */
  | "consumer-group-active"
  /** Kafka or the catalog could not be reached, or did not answer. */
  | "connection"
  /**
   * Kafka or the catalog refused the credentials or the privileges: a wrong password, a SASL
   * mechanism the listener does not offer, a certificate refused either way, a missing ACL.
   */
  | "auth"
  /** The table moved under every commit attempt, or a concurrent change conflicts with this one. */
  | "commit-conflict"
  /** The catalog may or may not have applied a commit; the next sync finds out from the table. */
  | "commit-state-unknown"
  /** Any other failure Kafka reported. */
  | "kafka"
  /** Any other failure the catalog or a table's files reported (not found, corrupt, unsupported, refused). */
  | "catalog"
  /** The object store refused the credentials or the operation: a wrong secret, expired keys, a missing grant. */
  | "storage-auth"
  /** No such bucket or object in the object store (the table's location, the endpoint). */
  | "storage-not-found"
  /** The object store could not be reached, or answered 5xx / throttled: a network blip or an outage. */
  | "storage-connection"
  /** Any other failure the object store reported. */
  | "storage"
  /** Anything else: a failure floe did not foresee. */
  | "internal";

export interface SyncError {
  readonly kind: SyncErrorKind;
  /** Running the sync again, unchanged, may succeed (later: once the other writer is done, the server is back). */
  readonly retryable: boolean;
  /** The error's class. */
  readonly name: string;
  readonly message: string;
}

const RETRYABLE: Readonly<Record<SyncErrorKind, boolean>> = {
  config: false,
  "table-schema": false,
  "data-loss": false,
  "offsets-ahead": false,
  "position-unknown": false,
  "bad-message": false,
  "concurrent-sync": true,
  "consumer-group-active": false,
  connection: true,
  auth: false,
  "commit-conflict": true,
  "commit-state-unknown": true,
  kafka: true,
  catalog: false,
  "storage-auth": false,
  "storage-not-found": false,
  "storage-connection": true,
  storage: false,
  internal: false,
};

export function classifyError(error: unknown): SyncError {
  const kind = kindOf(error);
  return {
    kind,
    retryable: RETRYABLE[kind],
    name: error instanceof Error ? error.name : typeof error,
    message: error instanceof Error ? error.message : String(error),
  };
}

function kindOf(error: unknown): SyncErrorKind {
  if (error instanceof ConfigError || error instanceof TopicSelectionError) return "config";
  // A host floe serve's outbound policy refuses: the record must change.
  if (error instanceof OutboundRefusedError) return "config";
  if (error instanceof StorageError) return storageKind(error);
  if (error instanceof DeclaredColumnError || error instanceof SchemaEvolutionError) return "table-schema";
  if (error instanceof RegistryError) {
    if (error.kind === "auth") return "auth";
    // not-found and protocol: the URL names no registry; tls: its certificate is not trusted.
    return error.kind === "connection" ? "connection" : "config";
  }
  if (error instanceof MessagesLostError) return "data-loss";
  if (error instanceof OffsetsAheadError) return "offsets-ahead";
  if (error instanceof PositionUnknownError) return "position-unknown";
  if (error instanceof BadMessageError) return "bad-message";
  if (error instanceof ConcurrentSyncError) return "concurrent-sync";
  if (error instanceof ConsumerGroupActiveError) return "consumer-group-active";
  if (error instanceof KafkaAuthorizationError) return "auth";
  // A read that failed for want of an ACL carries the refusal as its cause.
  if (error instanceof KafkaError && error.cause instanceof KafkaAuthorizationError) return "auth";
  if (error instanceof KafkaConnectionError) return error.isAuthentication ? "auth" : "connection";
  if (error instanceof CommitConflictError || error instanceof ValidationError) return "commit-conflict";
  if (error instanceof KafkaError) return "kafka";
  // Any other Iceberg failure (a catalog, a file, a table's content), by the kind it carries.
  if (error instanceof IcebergError) {
    switch (error.kind) {
      case "io":
        return "connection";
      case "auth":
        return "auth";
      case "conflict":
        return "commit-conflict";
      case "commit-state-unknown":
        return "commit-state-unknown";
      default:
        return "catalog";
    }
  }
  // A storage failure under another error (a writer's, a reader's): the store's kind.
  for (let e = (error as { cause?: unknown } | undefined)?.cause, depth = 0; e && depth < 5; depth++) {
    if (e instanceof StorageError) return storageKind(e);
    e = (e as { cause?: unknown }).cause;
  }
  return "internal";
}

function storageKind(error: StorageError): SyncErrorKind {
  switch (error.kind) {
    case "access-denied":
    case "invalid-credentials":
    case "expired-credentials":
      return "storage-auth";
    case "no-such-bucket":
    case "not-found":
      return "storage-not-found";
    case "unreachable":
      return "storage-connection";
    case "wrong-region":
    case "not-s3":
      // The endpoint or the region of the job is wrong.
      return "config";
    case "failed": {
      // 5xx and throttling outlived the SDK's own retries: a later run may succeed.
      const status = (error.cause as { $metadata?: { httpStatusCode?: unknown } } | undefined)?.$metadata
        ?.httpStatusCode;
      return typeof status === "number" && (status >= 500 || status === 429) ? "storage-connection" : "storage";
    }
  }
}
