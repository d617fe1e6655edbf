// How floe reaches GCS for one table: the catalog's properties for the table (Iceberg's names:
// gcs.oauth2.token, gcs.oauth2.token-expires-at, gcs.service.host), merged with the job's
// static settings (destination.iceberg.storage.gcs). Pure: gcs-file-io.ts builds on the result.
//
// Precedence:
//   credentials  the token the catalog vends for the table, else the job file's token, else the
//                job file's service-account key file, else GOOGLE_APPLICATION_CREDENTIALS (a
//                service-account key file). No metadata-server lookup: off Google Cloud it
//                would wait on an address floe has no business reaching.
//   endpoint     the job file's, else the catalog's gcs.service.host, else storage.googleapis.com.
import {
  type CredentialSource,
  chooseCredentials,
  type ExpiringToken,
  nonEmpty,
  type StoreOptions,
} from "./credential-source.ts";

/** `endpoint`: the JSON API's root, e.g. http://127.0.0.1:4443 for fake-gcs-server. */
export interface GcsStorageOptions extends StoreOptions {
  /** A static OAuth2 access token. */
  readonly oauth2Token?: string | undefined;
  /** A service-account key file (JSON, as the Cloud console hands it out). */
  readonly serviceAccountKeyFile?: string | undefined;
  /** Files larger than this go up in a resumable upload, in chunks of chunkSizeBytes. */
  readonly resumableThresholdBytes?: number | undefined;
  readonly chunkSizeBytes?: number | undefined;
}

export type GcsToken = ExpiringToken;

export type GcsCredentials =
  | { readonly kind: "token"; readonly token: GcsToken }
  | { readonly kind: "service-account"; readonly keyFile: string };

export interface GcsClientConfig {
  readonly endpoint: string;
  readonly credentials: GcsCredentials | undefined;
  readonly credentialSource: CredentialSource;
  readonly resumableThresholdBytes: number;
  readonly chunkSizeBytes: number;
  readonly maxAttempts: number;
}

export const GCS_PROPERTIES = {
  token: "gcs.oauth2.token",
  tokenExpiresAt: "gcs.oauth2.token-expires-at",
  serviceHost: "gcs.service.host",
} as const;

export const DEFAULT_GCS_ENDPOINT = "https://storage.googleapis.com";
/** Resumable upload chunks must be multiples of 256 KiB. */
export const GCS_CHUNK_QUANTUM = 256 * 1024;
export const DEFAULT_GCS_CHUNK_BYTES = 8 * 1024 * 1024;

export function gcsClientConfig(
  properties: Readonly<Record<string, string>>,
  options: GcsStorageOptions = {},
  catalogOrigin = "the catalog's properties",
  env: Readonly<Record<string, string | undefined>> = process.env,
): GcsClientConfig {
  const endpoint = (
    options.endpoint ??
    nonEmpty(properties[GCS_PROPERTIES.serviceHost]) ??
    DEFAULT_GCS_ENDPOINT
  ).replace(/\/+$/, "");
  const keyFile = (file: string | undefined): GcsCredentials | undefined =>
    file === undefined ? undefined : { kind: "service-account", keyFile: file };
  const vended = catalogToken(properties);
  const { credentials, credentialSource } = chooseCredentials<GcsCredentials>({
    catalog: vended === undefined ? undefined : { kind: "token", token: vended },
    catalogOrigin,
    jobFile: [
      options.oauth2Token === undefined ? undefined : { kind: "token", token: { token: options.oauth2Token } },
      keyFile(options.serviceAccountKeyFile),
    ],
    environment: () => [keyFile(nonEmpty(env.GOOGLE_APPLICATION_CREDENTIALS))],
    ambientCredentials: options.ambientCredentials,
  });
  const chunk = options.chunkSizeBytes ?? DEFAULT_GCS_CHUNK_BYTES;
  const chunkSizeBytes = Math.max(GCS_CHUNK_QUANTUM, Math.floor(chunk / GCS_CHUNK_QUANTUM) * GCS_CHUNK_QUANTUM);
  return {
    endpoint,
    credentials,
    credentialSource,
    resumableThresholdBytes: Math.max(options.resumableThresholdBytes ?? chunkSizeBytes, 1),
    chunkSizeBytes,
    maxAttempts: options.maxAttempts ?? 5,
  };
}

/** The token of the catalog's properties (and its expiry, epoch milliseconds). */
export function catalogToken(properties: Readonly<Record<string, string>>): GcsToken | undefined {
  const token = nonEmpty(properties[GCS_PROPERTIES.token]);
  if (token === undefined) return undefined;
  const expiresAt = Number(nonEmpty(properties[GCS_PROPERTIES.tokenExpiresAt]));
  return Number.isFinite(expiresAt) ? { token, expiresAtMs: expiresAt } : { token };
}

export function describeGcsCredentialSource(source: CredentialSource): string {
  switch (source.kind) {
    case "catalog":
      return `a token vended by the catalog (${source.detail})`;
    case "job-file":
      return "the job file's credentials (destination.iceberg.storage.gcs)";
    case "environment":
      return "the service-account key file of GOOGLE_APPLICATION_CREDENTIALS";
    case "none":
      return "no credentials (none vended by the catalog, none in destination.iceberg.storage.gcs, no GOOGLE_APPLICATION_CREDENTIALS)";
  }
}
