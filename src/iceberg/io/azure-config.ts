// How floe reaches Azure Storage for one table: the catalog's properties for the table
// (Iceberg's names: adls.sas-token.<account>, with or without the host suffix), merged with the
// job's static settings (destination.iceberg.storage.azure). Pure: azure-file-io.ts builds on it.
//
// Precedence:
//   credentials  the SAS the catalog vends for the account, else the job file's SAS token, else
//                its account key, else AZURE_STORAGE_SAS_TOKEN, else AZURE_STORAGE_KEY. No
//                Entra ID (managed identity) lookups: they would reach an instance metadata address.
//   endpoint     the job file's account URL (an emulator, a private endpoint), else the
//                location's own: https://<account>.blob.<suffix>.
import type { AzureLocation } from "./azure-location.ts";
import {
  type CredentialSource,
  chooseCredentials,
  type ExpiringToken,
  nonEmpty,
  type StoreOptions,
} from "./credential-source.ts";

/** `endpoint`: the Blob service URL of the account, e.g. http://127.0.0.1:10000/devstoreaccount1 for Azurite. */
export interface AzureStorageOptions extends StoreOptions {
  readonly sasToken?: string | undefined;
  readonly accountKey?: string | undefined;
  /** Files larger than this go up as staged blocks committed at the end. */
  readonly singleUploadThresholdBytes?: number | undefined;
  readonly blockSizeBytes?: number | undefined;
}

/** A SAS: its token is the query string, without a leading "?". */
export type AzureSas = ExpiringToken;

export type AzureCredentials =
  | { readonly kind: "sas"; readonly sas: AzureSas }
  | { readonly kind: "account-key"; readonly account: string; readonly key: string };

export interface AzureClientConfig {
  readonly accountUrl: string;
  readonly credentials: AzureCredentials | undefined;
  readonly credentialSource: CredentialSource;
  readonly singleUploadThresholdBytes: number;
  readonly blockSizeBytes: number;
  readonly maxAttempts: number;
}

export const ADLS_SAS_TOKEN_PREFIX = "adls.sas-token.";
export const ADLS_SAS_TOKEN_EXPIRES_AT_PREFIX = "adls.sas-token-expires-at-ms.";
const DEFAULT_BLOCK_BYTES = 8 * 1024 * 1024;

export function azureClientConfig(
  location: AzureLocation,
  properties: Readonly<Record<string, string>>,
  options: AzureStorageOptions = {},
  catalogOrigin = "the catalog's properties",
  env: Readonly<Record<string, string | undefined>> = process.env,
): AzureClientConfig {
  const accountUrl = (options.endpoint ?? location.blobAccountUrl).replace(/\/+$/, "");
  const withSas = (token: string | undefined): AzureCredentials | undefined =>
    token === undefined ? undefined : { kind: "sas", sas: sas(token) };
  const withKey = (key: string | undefined): AzureCredentials | undefined =>
    key === undefined ? undefined : { kind: "account-key", account: location.account, key };
  const vended = catalogSas(location, properties);
  const { credentials, credentialSource } = chooseCredentials<AzureCredentials>({
    catalog: vended === undefined ? undefined : { kind: "sas", sas: vended },
    catalogOrigin,
    jobFile: [withSas(options.sasToken), withKey(options.accountKey)],
    environment: () => [withSas(nonEmpty(env.AZURE_STORAGE_SAS_TOKEN)), withKey(nonEmpty(env.AZURE_STORAGE_KEY))],
    ambientCredentials: options.ambientCredentials,
  });
  const blockSizeBytes = options.blockSizeBytes ?? DEFAULT_BLOCK_BYTES;
  return {
    accountUrl,
    credentials,
    credentialSource,
    singleUploadThresholdBytes: options.singleUploadThresholdBytes ?? blockSizeBytes,
    blockSizeBytes,
    maxAttempts: options.maxAttempts ?? 5,
  };
}

/**
 * The SAS the catalog vends for the location's account: adls.sas-token.<host> (Iceberg Java keys
 * it by the location's host), else adls.sas-token.<account>. Its expiry is
 * adls.sas-token-expires-at-ms.<same key>, else the token's own `se` (signed expiry).
 */
export function catalogSas(
  location: AzureLocation,
  properties: Readonly<Record<string, string>>,
): AzureSas | undefined {
  for (const key of [location.host, location.account]) {
    const token = nonEmpty(properties[`${ADLS_SAS_TOKEN_PREFIX}${key}`]);
    if (token === undefined) continue;
    const expiresAt = Number(nonEmpty(properties[`${ADLS_SAS_TOKEN_EXPIRES_AT_PREFIX}${key}`]));
    const parsed = sas(token);
    return Number.isFinite(expiresAt) ? { ...parsed, expiresAtMs: expiresAt } : parsed;
  }
  return undefined;
}

/** A SAS token as given (with or without "?"), its expiry read from its `se` parameter. */
export function sas(token: string): AzureSas {
  const bare = token.replace(/^\?/, "");
  const se = new URLSearchParams(bare).get("se");
  const expiresAtMs = se === null ? Number.NaN : Date.parse(se);
  return Number.isFinite(expiresAtMs) ? { token: bare, expiresAtMs } : { token: bare };
}

export function describeAzureCredentialSource(source: CredentialSource): string {
  switch (source.kind) {
    case "catalog":
      return `a SAS token vended by the catalog (${source.detail})`;
    case "job-file":
      return "the job file's credentials (destination.iceberg.storage.azure)";
    case "environment":
      return "the environment (AZURE_STORAGE_SAS_TOKEN or AZURE_STORAGE_KEY)";
    case "none":
      return "no credentials (no SAS vended by the catalog, none in destination.iceberg.storage.azure, no AZURE_STORAGE_SAS_TOKEN or AZURE_STORAGE_KEY)";
  }
}
