// Which credentials a table's IO uses on GCS and Azure Storage, in the one precedence both
// follow: those the catalog vends for the table, else the job file's, else the machine's own
// (environment variables naming a key), unless ambient credentials are off (floe serve without
// --ambient-credentials), else none. S3 follows the same order but ends in the AWS SDK's own
// chain rather than credentials floe reads (s3-config.ts).

/** Where the credentials of a table's IO came from, for messages. */
export type CredentialSource =
  | { readonly kind: "catalog"; readonly detail: string }
  | { readonly kind: "job-file" }
  | { readonly kind: "environment" }
  | { readonly kind: "none" };

/** A bearer credential and when the store stops taking it (a GCS OAuth2 token, an Azure SAS). */
export interface ExpiringToken {
  readonly token: string;
  /** Epoch milliseconds; undefined: not known. */
  readonly expiresAtMs?: number | undefined;
}

/** The job file's settings every store's options share. */
export interface StoreOptions {
  /** The store's root URL, e.g. an emulator's or a private endpoint. */
  readonly endpoint?: string | undefined;
  /** Attempts per request, the first included. */
  readonly maxAttempts?: number | undefined;
  /** false: no fallback to the machine's own credentials (floe serve without --ambient-credentials). Default true. */
  readonly ambientCredentials?: boolean | undefined;
}

export interface ChosenCredentials<C> {
  readonly credentials: C | undefined;
  readonly credentialSource: CredentialSource;
}

/** The first credentials found, in the order above; `catalogOrigin` says which catalog properties vended them. */
export function chooseCredentials<C>(candidates: {
  readonly catalog: C | undefined;
  readonly catalogOrigin: string;
  /** The job file's, in the store's order of preference. */
  readonly jobFile: readonly (C | undefined)[];
  /** The environment's, read only when ambient credentials are allowed. */
  readonly environment: () => readonly (C | undefined)[];
  readonly ambientCredentials: boolean | undefined;
}): ChosenCredentials<C> {
  if (candidates.catalog !== undefined) {
    return { credentials: candidates.catalog, credentialSource: { kind: "catalog", detail: candidates.catalogOrigin } };
  }
  const fromJob = candidates.jobFile.find((c) => c !== undefined);
  if (fromJob !== undefined) return { credentials: fromJob, credentialSource: { kind: "job-file" } };
  if (candidates.ambientCredentials !== false) {
    const fromEnvironment = candidates.environment().find((c) => c !== undefined);
    if (fromEnvironment !== undefined)
      return { credentials: fromEnvironment, credentialSource: { kind: "environment" } };
  }
  return { credentials: undefined, credentialSource: { kind: "none" } };
}

/** A property or variable that is set to something other than blanks. */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}
