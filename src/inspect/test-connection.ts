// "Test connection" of a source or a destination: connect as a sync would (connect.ts) and say
// what is wrong in the words `floe check` uses, the sync's one classification of errors
// (classify-error.ts), and for Kafka the diagnosis `floe check` prints (kafka/diagnose.ts:
// refused, unreachable, advertised listeners, credentials or mechanism refused, TLS).

import { loadCatalog } from "../iceberg/catalog/load-catalog.ts";
import type { Destination } from "../job/destination.ts";
import type { Source } from "../job/source.ts";
import { KafkaCluster } from "../kafka/connection.ts";
import { listTopics } from "../kafka/discover.ts";
import { type ConnectionFailure, KafkaConnectionError } from "../kafka/errors.ts";
import { classifyError, type SyncErrorKind } from "../pipeline/classify-error.ts";
import { catalogConfig, kafkaConnectionOptions, tableFileIO } from "../pipeline/connect.ts";

export interface Diagnosis {
  ok: boolean;
  /** What was reached, or what failed and why. */
  message: string;
  kind?: SyncErrorKind;
  retryable?: boolean;
  /** For Kafka, the diagnosis of the refusal (kafka/diagnose.ts): what failed, and what to check. */
  reason?: ConnectionFailure;
  hint?: string;
  durationMs: number;
}

async function diagnose(work: () => Promise<string>): Promise<Diagnosis> {
  const started = performance.now();
  try {
    const message = await work();
    return { ok: true, message, durationMs: Math.round(performance.now() - started) };
  } catch (error) {
    const { kind, retryable, message } = classifyError(error);
    const kafka = error instanceof KafkaConnectionError ? { reason: error.reason, hint: error.hint } : {};
    return { ok: false, message, kind, retryable, ...kafka, durationMs: Math.round(performance.now() - started) };
  }
}

export function testSource(source: Source): Promise<Diagnosis> {
  return diagnose(async () => {
    const cluster = await KafkaCluster.connect(kafkaConnectionOptions(source));
    try {
      const topics = await listTopics(cluster);
      return `connected to ${cluster.description}: ${topics.length} topic(s)`;
    } finally {
      await cluster.close();
    }
  });
}

export function testDestination(destination: Destination): Promise<Diagnosis> {
  return diagnose(async () => {
    const catalog = await loadCatalog(catalogConfig(destination), { fileIO: tableFileIO(destination.storage) });
    try {
      const namespaces = await catalog.listNamespaces();
      return `connected to the ${destination.catalog.type} catalog: ${namespaces.length} namespace(s)`;
    } finally {
      await catalog.close();
    }
  });
}
