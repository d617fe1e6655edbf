// The storage properties of one table, as a REST catalog hands them out (REST spec,
// LoadTableResult): the catalog's merged configuration, overridden by the table's `config`,
// overridden by the `storage-credentials` entry whose prefix is the longest match of the
// location ("clients must first check whether the respective credentials exist in the
// storage-credentials field before checking the config for credentials"). Catalogs differ in
// where they put vended keys (some in `config`, some only in `storage-credentials`, with or
// without an endpoint and region), so the layers merge key by key.
import type { StorageProperties } from "../io/file-io.ts";

export interface StorageCredential {
  readonly prefix: string;
  readonly config: Readonly<Record<string, string>>;
}

/** The storage credential for `location`: the longest prefix that it starts with wins. */
export function matchStorageCredential(
  location: string,
  credentials: readonly StorageCredential[],
): StorageCredential | undefined {
  let best: StorageCredential | undefined;
  for (const credential of credentials) {
    if (!location.startsWith(credential.prefix)) continue;
    if (best === undefined || credential.prefix.length > best.prefix.length) best = credential;
  }
  return best;
}

export function tableStorageProperties(
  location: string,
  catalogProperties: Readonly<Record<string, string>>,
  tableConfig: Readonly<Record<string, string>>,
  storageCredentials: readonly StorageCredential[],
): StorageProperties {
  const credential = matchStorageCredential(location, storageCredentials);
  const properties = { ...catalogProperties, ...tableConfig, ...credential?.config };
  let origin = "the catalog's configuration (GET /v1/config)";
  if (credential !== undefined && hasKeys(credential.config)) {
    origin = `storage-credentials for ${credential.prefix}`;
  } else if (hasKeys(tableConfig)) {
    origin = "the table's config";
  }
  return { properties, origin };
}

/** The storage-credentials of a LoadTableResult or LoadCredentialsResponse; malformed entries are dropped. */
export function parseStorageCredentials(value: unknown): StorageCredential[] {
  if (!Array.isArray(value)) return [];
  const credentials: StorageCredential[] = [];
  for (const entry of value) {
    if (typeof entry !== "object" || entry === null) continue;
    const { prefix, config } = entry as { prefix?: unknown; config?: unknown };
    if (typeof prefix !== "string" || typeof config !== "object" || config === null) continue;
    credentials.push({ prefix, config: stringValues(config as Record<string, unknown>) });
  }
  return credentials;
}

export function stringValues(record: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) {
    if (typeof value === "string") out[key] = value;
    else if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
      out[key] = String(value);
  }
  return out;
}

/** Whether a layer carries credentials of any store floe knows. */
function hasKeys(config: Readonly<Record<string, string>>): boolean {
  return Object.keys(config).some((key) => CREDENTIAL_KEYS.has(key) || key.startsWith("adls.sas-token."));
}

const CREDENTIAL_KEYS = new Set(["s3.access-key-id", "s3.secret-access-key", "s3.session-token", "gcs.oauth2.token"]);
