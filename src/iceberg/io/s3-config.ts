// How floe reaches S3 for one table: the catalog's properties for the table (Iceberg's names:
// s3.endpoint, s3.access-key-id, client.region, ...), merged with the job's static storage
// settings. Pure: the client is built from the result (s3-file-io.ts).
//
// Precedence:
//   credentials  the catalog's (vended for the table, or in its configuration), else the job
//                file's, else the AWS SDK's default chain (environment, ~/.aws, instance metadata)
//   endpoint, region, path-style addressing
//                the job file's, else the catalog's, else the defaults below: the job says how
//                floe's own machine reaches the store (a VPC endpoint, a local MinIO), the catalog
//                says who floe is there; catalogs differ in whether they vend an endpoint at all.

import { nonEmpty } from "./credential-source.ts";

/** The job's static S3 settings (destination.iceberg.storage.s3), secrets revealed. */
export interface S3StorageOptions {
  readonly endpoint?: string | undefined;
  readonly region?: string | undefined;
  readonly pathStyleAccess?: boolean | undefined;
  readonly credentials?: StaticS3Credentials | undefined;
  /** "when-required" for stores that refuse the SDK's default CRC checksums on every upload. */
  readonly requestChecksums?: "when-supported" | "when-required" | undefined;
  /** Files larger than this go up in parts (multipart upload). Default: twice the part size. */
  readonly multipartThresholdBytes?: number | undefined;
  readonly partSizeBytes?: number | undefined;
  /** Attempts per request, the first included (the SDK's standard retry strategy: backoff with jitter). */
  readonly maxAttempts?: number | undefined;
  /** false: no fallback to the machine's own credentials (floe serve without --ambient-credentials). Default true. */
  readonly ambientCredentials?: boolean | undefined;
}

export interface StaticS3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
}

export interface S3Credentials extends StaticS3Credentials {
  /** When the store stops taking them (s3.session-token-expires-at-ms); undefined: not known. */
  readonly expiresAtMs?: number | undefined;
}

/** Where the credentials of a table's IO came from, for messages. */
export type CredentialSource =
  | { readonly kind: "catalog"; readonly detail: string }
  | { readonly kind: "job-file" }
  | { readonly kind: "default-chain" }
  /** None vended, none in the job, and the SDK's chain not allowed (floe serve). */
  | { readonly kind: "none" };

export interface S3ClientConfig {
  readonly endpoint: string | undefined;
  readonly region: string | undefined;
  readonly forcePathStyle: boolean;
  /** Undefined: the AWS SDK's default credential chain. */
  readonly credentials: S3Credentials | undefined;
  readonly credentialSource: CredentialSource;
  readonly requestChecksumCalculation: "WHEN_SUPPORTED" | "WHEN_REQUIRED";
  readonly multipartThresholdBytes: number;
  readonly partSizeBytes: number;
  readonly maxAttempts: number;
}

/** Iceberg's property names (S3FileIOProperties, AwsClientProperties). */
export const S3_PROPERTIES = {
  endpoint: "s3.endpoint",
  pathStyleAccess: "s3.path-style-access",
  accessKeyId: "s3.access-key-id",
  secretAccessKey: "s3.secret-access-key",
  sessionToken: "s3.session-token",
  sessionTokenExpiresAtMs: "s3.session-token-expires-at-ms",
  clientRegion: "client.region",
  /** PyIceberg's spelling of the region. */
  region: "s3.region",
} as const;

/** S3's smallest part (except the last) is 5 MiB; 8 MiB parts keep a 128 MiB file at 16 parts. */
export const DEFAULT_PART_SIZE_BYTES = 8 * 1024 * 1024;
export const MIN_PART_SIZE_BYTES = 5 * 1024 * 1024;
export const DEFAULT_MAX_ATTEMPTS = 5;
/** What S3-compatible stores assume when a client names no region (MinIO, Ceph, R2's "auto" takes it too). */
export const DEFAULT_COMPATIBLE_REGION = "us-east-1";

/**
 * The client configuration for a table. `properties` are the catalog's for the table (its
 * configuration, overridden by the table's config and the matching storage credential);
 * `catalogOrigin` says which of those carried credentials, when any did.
 */
export function s3ClientConfig(
  properties: Readonly<Record<string, string>>,
  options: S3StorageOptions = {},
  catalogOrigin = "the catalog's properties",
): S3ClientConfig {
  const endpoint = normalizeEndpoint(options.endpoint ?? nonEmpty(properties[S3_PROPERTIES.endpoint]));
  const region =
    options.region ??
    nonEmpty(properties[S3_PROPERTIES.clientRegion]) ??
    nonEmpty(properties[S3_PROPERTIES.region]) ??
    (endpoint === undefined ? undefined : DEFAULT_COMPATIBLE_REGION);
  const pathStyleProperty = properties[S3_PROPERTIES.pathStyleAccess];
  // An S3-compatible store on its own host rarely has per-bucket DNS names: path style unless told.
  const forcePathStyle =
    options.pathStyleAccess ??
    (pathStyleProperty === undefined ? endpoint !== undefined : pathStyleProperty.toLowerCase() === "true");

  const vended = catalogCredentials(properties);
  let credentials: S3Credentials | undefined;
  let credentialSource: CredentialSource;
  if (vended !== undefined) {
    credentials = vended;
    credentialSource = { kind: "catalog", detail: catalogOrigin };
  } else if (options.credentials !== undefined) {
    credentials = { ...options.credentials };
    credentialSource = { kind: "job-file" };
  } else {
    credentials = undefined;
    credentialSource = options.ambientCredentials === false ? { kind: "none" } : { kind: "default-chain" };
  }

  const partSizeBytes = Math.max(options.partSizeBytes ?? DEFAULT_PART_SIZE_BYTES, MIN_PART_SIZE_BYTES);
  return {
    endpoint,
    region,
    forcePathStyle,
    credentials,
    credentialSource,
    // AWS S3 takes the SDK's CRC checksums; S3-compatible stores often refuse them (or their
    // aws-chunked encoding), so with an endpoint of its own a request carries one only where
    // the operation requires it.
    requestChecksumCalculation:
      (options.requestChecksums ?? (endpoint === undefined ? "when-supported" : "when-required")) === "when-required"
        ? "WHEN_REQUIRED"
        : "WHEN_SUPPORTED",
    multipartThresholdBytes: Math.max(options.multipartThresholdBytes ?? 2 * partSizeBytes, partSizeBytes),
    partSizeBytes,
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
  };
}

/** The key pair (and token, and expiry) of the catalog's properties; undefined unless both keys are there. */
export function catalogCredentials(properties: Readonly<Record<string, string>>): S3Credentials | undefined {
  const accessKeyId = nonEmpty(properties[S3_PROPERTIES.accessKeyId]);
  const secretAccessKey = nonEmpty(properties[S3_PROPERTIES.secretAccessKey]);
  if (accessKeyId === undefined || secretAccessKey === undefined) return undefined;
  const sessionToken = nonEmpty(properties[S3_PROPERTIES.sessionToken]);
  const expiresAt = nonEmpty(properties[S3_PROPERTIES.sessionTokenExpiresAtMs]);
  const expiresAtMs = expiresAt === undefined ? undefined : Number(expiresAt);
  return {
    accessKeyId,
    secretAccessKey,
    ...(sessionToken === undefined ? {} : { sessionToken }),
    ...(expiresAtMs === undefined || !Number.isFinite(expiresAtMs) ? {} : { expiresAtMs }),
  };
}

export function describeCredentialSource(source: CredentialSource): string {
  switch (source.kind) {
    case "catalog":
      return `credentials vended by the catalog (${source.detail})`;
    case "job-file":
      return "static credentials of the job file (destination.iceberg.storage.s3)";
    case "default-chain":
      return "the AWS SDK's default credentials (AWS_* environment variables, ~/.aws, web identity, instance metadata)";
    case "none":
      return "no credentials (none vended by the catalog, none in destination.iceberg.storage.s3; floe serve uses its own AWS credentials only with --ambient-credentials)";
  }
}

/** A scheme-less endpoint ("minio:9000") is taken as https, as the AWS SDKs do. */
function normalizeEndpoint(endpoint: string | undefined): string | undefined {
  if (endpoint === undefined) return undefined;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `https://${endpoint}`;
  return withScheme.replace(/\/+$/, "");
}
