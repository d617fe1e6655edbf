// The one mapping from a job onto the option types of kafka/ and iceberg/: its source becomes
// the Kafka connection options, its destination the catalog config; and the connections a sync
// takes, opened from them. The job keeps secrets wrapped (job/secret.ts): Kafka's password
// stays a Secret that the client reveals when it authenticates; the catalog's credentials are
// revealed here, for the client that sends them.

import type { Catalog } from "../iceberg/catalog/catalog.ts";
import { type CatalogConfig, loadCatalog } from "../iceberg/catalog/load-catalog.ts";
import type { RestCredential } from "../iceberg/catalog/rest-catalog.ts";
import type { UnityCredential } from "../iceberg/catalog/unity.ts";
import type { FileIOFactory } from "../iceberg/io/file-io.ts";
import { storageFileIO } from "../iceberg/io/storage-file-io.ts";
import type { Destination } from "../job/destination.ts";
import type { Job } from "../job/job.ts";
import { unseal } from "../job/secret.ts";
import type { Source } from "../job/source.ts";
import type { StorageSettings } from "../job/storage.ts";
import { KafkaCluster, type KafkaConnectionOptions } from "../kafka/connection.ts";
import { KafkaSource } from "../kafka/kafka-source.ts";
import { cloudStorageOptions } from "./cloud-storage.ts";
import type { SyncSource } from "./source.ts";

/** How the embedded catalog is named in messages. */
const SQL_CATALOG_NAME = "floe";

export function kafkaConnectionOptions(source: Source): KafkaConnectionOptions {
  return {
    bootstrapServers: source.bootstrapServers,
    security: source.security,
    connectTimeoutMs: source.connectTimeoutMs,
    requestTimeoutMs: source.requestTimeoutMs,
  };
}

export function catalogConfig(destination: Destination): CatalogConfig {
  const settings = destination.catalog;
  switch (settings.type) {
    case "sql":
      return {
        type: "sql",
        name: SQL_CATALOG_NAME,
        warehouse: settings.warehouse,
        ...(settings.uri === undefined ? {} : { uri: settings.uri }),
      };
    case "rest":
      return {
        type: "rest",
        uri: settings.uri,
        requestTimeoutMs: settings.requestTimeoutMs,
        ...(settings.warehouse === undefined ? {} : { warehouse: settings.warehouse }),
        ...(settings.credential === undefined ? {} : { credential: unseal<RestCredential>(settings.credential) }),
      };
    case "unity":
      return {
        type: "unity",
        workspaceUrl: settings.workspaceUrl,
        catalog: settings.catalog,
        requestTimeoutMs: settings.requestTimeoutMs,
        credential: unseal<UnityCredential>(settings.credential),
      };
  }
}

/** A job's cluster and catalog, connected; close them when done. */
export interface JobConnections {
  readonly source: KafkaSource;
  readonly catalog: Catalog;
  close(): Promise<void>;
}

/** Connects to the job's cluster, then to its catalog, so that a wrong address or credential fails here. */
export async function openConnections(job: Job): Promise<JobConnections> {
  const cluster = await KafkaCluster.connect(kafkaConnectionOptions(job.source));
  let catalog: Catalog;
  try {
    catalog = await loadCatalog(catalogConfig(job.destination), { fileIO: tableFileIO(job.destination.storage) });
  } catch (error) {
    await cluster.close().catch(() => {});
    throw error;
  }
  return {
    source: new KafkaSource(cluster) satisfies SyncSource,
    catalog,
    async close() {
      try {
        await catalog.close();
      } finally {
        await cluster.close();
      }
    },
  };
}

/** Runs `work` with the job's connections, and closes them however it ends. */
export async function withConnections<T>(job: Job, work: (connections: JobConnections) => Promise<T>): Promise<T> {
  const connections = await openConnections(job);
  try {
    return await work(connections);
  } finally {
    await connections.close();
  }
}

/** The tables' FileIO, by location scheme, with the job's static storage settings (secrets revealed here). */
export function tableFileIO(storage: StorageSettings | undefined): FileIOFactory {
  const s3 = storage?.s3;
  const credentials = s3?.credentials;
  const ambient = storage?.ambientCredentials === false ? { ambientCredentials: false } : {};
  return storageFileIO({
    ...(s3 === undefined
      ? { s3: ambient }
      : {
          s3: {
            endpoint: s3.endpoint,
            region: s3.region,
            pathStyleAccess: s3.pathStyleAccess,
            requestChecksums: s3.requestChecksums,
            partSizeBytes: s3.partSizeBytes,
            ...ambient,
            credentials:
              credentials === undefined
                ? undefined
                : {
                    accessKeyId: credentials.accessKeyId,
                    secretAccessKey: credentials.secretAccessKey.reveal(),
                    sessionToken: credentials.sessionToken?.reveal(),
                  },
          },
        }),
    ...cloudStorageOptions(storage),
  });
}

/** Runs `work` with the destination's catalog alone (looking at tables needs no cluster). */
export async function withCatalog<T>(destination: Destination, work: (catalog: Catalog) => Promise<T>): Promise<T> {
  const catalog = await loadCatalog(catalogConfig(destination), { fileIO: tableFileIO(destination.storage) });
  try {
    return await work(catalog);
  } finally {
    await catalog.close();
  }
}
