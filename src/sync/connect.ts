// The one mapping from a job onto the option types of kafka/ and iceberg/: its source becomes
// the Kafka connection options, its destination the catalog config. The job keeps secrets
// wrapped (config/secret.ts): Kafka's password stays a Secret that the client reveals when it
// authenticates; the catalog's credentials are revealed here, for the client that sends them.
import type { Destination } from "../config/destination.ts";
import { unseal } from "../config/secret.ts";
import type { Source } from "../config/source.ts";
import type { CatalogConfig } from "../iceberg/catalog/load-catalog.ts";
import type { RestCredential } from "../iceberg/catalog/rest-catalog.ts";
import type { UnityCredential } from "../iceberg/catalog/unity.ts";
import type { KafkaConnectionOptions } from "../kafka/connection.ts";

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
      return { type: "sql", name: SQL_CATALOG_NAME, warehouse: settings.warehouse };
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
