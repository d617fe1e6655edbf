// From the job file's settings to the Kafka cluster and the Iceberg catalog they name. The job
// keeps secrets wrapped (config/secret.ts); they are revealed here, at the last moment, and
// only to the client that sends them.
import type { CatalogSettings, KafkaSource } from "../config/job-config.ts";
import type { StorageSettings } from "../config/storage.ts";
import type { CatalogConfig } from "../iceberg/catalog/load-catalog.ts";
import type { FileIOFactory } from "../iceberg/io/file-io.ts";
import { storageFileIO } from "../iceberg/io/storage-file-io.ts";
import type { KafkaConnectionConfig } from "../kafka/connection.ts";
import { cloudStorageOptions } from "./cloud-storage.ts";

export function kafkaConnection(source: KafkaSource): KafkaConnectionConfig {
  const security = source.security;
  return {
    bootstrapServers: [...source.bootstrapServers],
    connectTimeoutMs: source.connectTimeoutMs,
    requestTimeoutMs: source.requestTimeoutMs,
    security: {
      protocol: security.protocol,
      ...("sasl" in security ? { sasl: { ...security.sasl } } : {}),
      ...("tls" in security
        ? {
            tls: {
              ...(security.tls.ca === undefined ? {} : { ca: security.tls.ca }),
              ...(security.tls.clientCertificate ?? {}),
              insecureSkipVerify: security.tls.insecureSkipVerify,
            },
          }
        : {}),
    },
  };
}

export function catalogConfig(settings: CatalogSettings): CatalogConfig {
  switch (settings.type) {
    case "sql":
      return {
        type: "sql",
        name: "floe",
        warehouse: settings.warehouse,
        ...(settings.uri === undefined ? {} : { uri: settings.uri }),
      };
    case "rest": {
      const credential = settings.credential;
      return {
        type: "rest",
        uri: settings.uri,
        requestTimeoutMs: settings.requestTimeoutMs,
        ...(settings.warehouse === undefined ? {} : { warehouse: settings.warehouse }),
        ...(credential === undefined
          ? {}
          : "token" in credential
            ? { credential: { token: credential.token.reveal() } }
            : {
                credential: {
                  clientId: credential.clientId,
                  clientSecret: credential.clientSecret.reveal(),
                  ...(credential.scope === undefined ? {} : { scope: credential.scope }),
                  ...(credential.oauth2ServerUri === undefined ? {} : { oauth2ServerUri: credential.oauth2ServerUri }),
                },
              }),
      };
    }
    case "unity": {
      const credential = settings.credential;
      return {
        type: "unity",
        workspaceUrl: settings.workspaceUrl,
        catalog: settings.catalog,
        requestTimeoutMs: settings.requestTimeoutMs,
        ...("token" in credential
          ? { token: credential.token.reveal() }
          : { clientId: credential.clientId, clientSecret: credential.clientSecret.reveal() }),
      };
    }
  }
}

/** The tables' FileIO, by location scheme, with the job's static storage settings (secrets revealed here). */
export function tableFileIO(storage: StorageSettings | undefined): FileIOFactory {
  const s3 = storage?.s3;
  const credentials = s3?.credentials;
  return storageFileIO({
    ...(s3 === undefined
      ? {}
      : {
          s3: {
            endpoint: s3.endpoint,
            region: s3.region,
            pathStyleAccess: s3.pathStyleAccess,
            requestChecksums: s3.requestChecksums,
            partSizeBytes: s3.partSizeBytes,
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
