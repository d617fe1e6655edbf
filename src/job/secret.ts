// Passwords, tokens and client secrets from the job file. A Secret prints as `***` wherever the
// config goes (console.log, util.inspect, JSON.stringify, template strings): only an explicit
// reveal() gives the value, at the one place that hands it to a client.
import { inspect } from "node:util";

export const REDACTED = "***";

/** The job file's keys whose values are secrets (wrapped in Secret, never printed, write-only where stored). */
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  "password",
  "token",
  "client_secret",
  "secret_access_key",
  "session_token",
  "oauth2_token",
  "sas_token",
  "account_key",
  "webhook",
]);

/**
 * Whether the value at `path` of a job file (or of a stored record) is a secret: a key of
 * SECRET_KEYS, or a TLS private key (`tls.key`, as PEM text or a file path). Only under `tls`:
 * elsewhere `key` may be a column's or a field's name.
 */
export function isSecretPath(path: readonly (string | number)[]): boolean {
  const key = String(path.at(-1));
  return SECRET_KEYS.has(key) || (key === "key" && path.at(-2) === "tls");
}

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}

/** The fields of the libraries' credential types that hold a secret. */
type SecretField = "token" | "clientSecret" | "password";

/**
 * A library's credential type as the job keeps it: the same fields, each secret one a Secret
 * until sync/ hands the credential to the client (`{token: string}` -> `{token: Secret}`).
 */
export type Sealed<T> = T extends unknown ? { readonly [K in keyof T]: K extends SecretField ? Secret : T[K] } : never;

/** The credential with its Secrets revealed, for the client that sends it. */
export function unseal<T>(credential: Sealed<T>): T {
  return Object.fromEntries(
    Object.entries(credential as object).map(([key, value]) => [key, value instanceof Secret ? value.reveal() : value]),
  ) as T;
}
