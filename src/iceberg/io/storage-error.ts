// What went wrong in an object store, said once: which operation, on which path, what the store
// (or the network) answered, and where the credentials came from. The kind is for callers that
// act on it (a refresh of vended credentials after an expired or unknown key).
import { type CredentialSource, describeCredentialSource } from "./s3-config.ts";

export type StorageErrorKind =
  | "access-denied"
  | "no-such-bucket"
  | "not-found"
  | "expired-credentials"
  | "invalid-credentials"
  | "wrong-region"
  | "unreachable"
  | "not-s3"
  | "failed";

export type StorageOperation = "write" | "read" | "read range" | "exists" | "delete" | "list";

export class StorageError extends Error {
  readonly kind: StorageErrorKind;
  readonly location: string;
  readonly operation: StorageOperation;

  constructor(
    kind: StorageErrorKind,
    operation: StorageOperation,
    location: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`${operation} ${location}: ${message}`, options);
    this.name = "StorageError";
    this.kind = kind;
    this.location = location;
    this.operation = operation;
  }
}

/** The parts of an AWS SDK v3 error (or a Node network error under it) that say what happened. */
export interface S3Failure {
  kind: StorageErrorKind;
  /** The S3 error code (AccessDenied), the HTTP status, or the network error code (ECONNREFUSED). */
  code: string;
  status: number | undefined;
  /** The store's own words, when it said any. */
  detail: string | undefined;
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "TimeoutError",
  "RequestTimeout",
]);

const CODES: Record<string, StorageErrorKind> = {
  AccessDenied: "access-denied",
  AllAccessDisabled: "access-denied",
  Forbidden: "access-denied",
  NoSuchBucket: "no-such-bucket",
  NoSuchKey: "not-found",
  NotFound: "not-found",
  ExpiredToken: "expired-credentials",
  TokenRefreshRequired: "expired-credentials",
  InvalidAccessKeyId: "invalid-credentials",
  // No credentials to sign with: the SDK's chain found none, or floe serve allows none.
  CredentialsProviderError: "invalid-credentials",
  InvalidToken: "invalid-credentials",
  SignatureDoesNotMatch: "invalid-credentials",
  AuthorizationHeaderMalformed: "wrong-region",
  PermanentRedirect: "wrong-region",
  IncorrectEndpoint: "wrong-region",
};

export function classifyS3Failure(error: unknown): S3Failure {
  const e = error as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    $metadata?: { httpStatusCode?: unknown };
    $response?: { statusCode?: unknown };
    cause?: unknown;
  };
  const status = typeof e?.$metadata?.httpStatusCode === "number" ? e.$metadata.httpStatusCode : undefined;
  const name = typeof e?.name === "string" ? e.name : "Error";
  const message = typeof e?.message === "string" ? e.message : String(error);
  const network = networkCode(error);
  if (network !== undefined && status === undefined) {
    return { kind: "unreachable", code: network, status, detail: undefined };
  }
  if (/region is missing/i.test(message)) return { kind: "wrong-region", code: "no region", status, detail: undefined };
  const known = CODES[name];
  if (known !== undefined) return { kind: known, code: name, status, detail: message };
  // A HEAD answer has no body: only its status says what it was.
  if (status === 403) {
    return {
      kind: "access-denied",
      code: "HTTP 403",
      status,
      detail: "an answer without a reason (HEAD); refused credentials answer so too",
    };
  }
  if (status === 404 && name === "NotFound") return { kind: "not-found", code: name, status, detail: undefined };
  // The SDK names the error after the body's Code; a body that is no S3 error (an HTML page, a
  // JSON API) leaves it with a generic name or a parse failure.
  if (name === "Unknown" || name === "UnknownError" || /deserializ|not expected|parse|xml/i.test(message)) {
    return { kind: "not-s3", code: status === undefined ? name : `HTTP ${status}`, status, detail: undefined };
  }
  return { kind: "failed", code: name, status, detail: message };
}

function networkCode(error: unknown): string | undefined {
  for (
    let e = error as { code?: unknown; name?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    depth++
  ) {
    if (typeof e.code === "string" && NETWORK_CODES.has(e.code)) return e.code;
    if (typeof e.name === "string" && NETWORK_CODES.has(e.name)) return e.name;
    e = e.cause as typeof e;
  }
  return undefined;
}

export interface StorageContext {
  readonly endpoint: string | undefined;
  readonly region: string | undefined;
  readonly bucket: string;
  readonly credentialSource: CredentialSource;
}

/** The message for a failure of `operation` on `location`: what the store said, and what to check. */
export function storageError(
  failure: S3Failure,
  operation: StorageOperation,
  location: string,
  context: StorageContext,
  cause: unknown,
): StorageError {
  const store = context.endpoint ?? `AWS S3${context.region ? ` (${context.region})` : ""}`;
  const credentials = describeCredentialSource(context.credentialSource);
  const said = failure.detail ? ` (${failure.code}: ${failure.detail})` : ` (${failure.code})`;
  let message: string;
  switch (failure.kind) {
    case "access-denied":
      message = `access denied${said} with ${credentials}: they do not allow this operation on this path`;
      break;
    case "no-such-bucket":
      message = `bucket ${context.bucket} does not exist at ${store}; check the table location and the S3 endpoint`;
      break;
    case "not-found":
      message = `no such object at ${store}`;
      break;
    case "expired-credentials":
      message = `the credentials have expired${said}: ${credentials}${expiredHint(context.credentialSource)}`;
      break;
    case "invalid-credentials":
      message =
        `${store} does not take the credentials${said}: ${credentials}; ` +
        "a key of another store or account, a wrong secret, or temporary keys that were revoked";
      break;
    case "wrong-region":
      message =
        context.region === undefined
          ? "no region given, by the job file, the catalog (client.region) or the environment (AWS_REGION); set destination.iceberg.storage.s3.region"
          : `${store} refused the region ${context.region}${said}; set the bucket's region (destination.iceberg.storage.s3.region)`;
      break;
    case "unreachable":
      message =
        `cannot reach the S3 endpoint ${store} (${failure.code}); check the endpoint ` +
        "(destination.iceberg.storage.s3.endpoint, or the catalog's s3.endpoint)";
      break;
    case "not-s3":
      message =
        `${store} answered ${failure.code} with something that is not an S3 response; ` +
        "check the S3 endpoint (destination.iceberg.storage.s3.endpoint, or the catalog's s3.endpoint)";
      break;
    case "failed":
      message = `the store failed the request${said}, using ${credentials}`;
      break;
  }
  return new StorageError(failure.kind, operation, location, message, { cause });
}

function expiredHint(source: CredentialSource): string {
  switch (source.kind) {
    case "catalog":
      return "; floe asked the catalog again and it handed out no fresh ones";
    case "job-file":
      return "; renew destination.iceberg.storage.s3.session_token";
    case "default-chain":
      return "; renew them where the SDK finds them (environment, ~/.aws)";
    case "none":
      return "";
  }
}
