// OAuth2 access tokens for a Google service account, from its key file: a JWT signed with the
// account's private key (RS256) traded at the key's token_uri for a token of an hour (RFC 7523,
// Google's "OAuth 2.0 for server to server applications"). Renewed before it expires.
import { createSign } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { GcsToken } from "./gcs-config.ts";
import { renewTime } from "./refreshing-credentials.ts";

const SCOPE = "https://www.googleapis.com/auth/devstorage.read_write";
const DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token";
const LIFETIME_S = 3600;

export interface ServiceAccountKey {
  readonly clientEmail: string;
  readonly privateKey: string;
  readonly tokenUri: string;
}

/** The parts of a key file floe uses; a file that is no service-account key is named as such. */
export function parseServiceAccountKey(text: string, file: string): ServiceAccountKey {
  let json: { type?: unknown; client_email?: unknown; private_key?: unknown; token_uri?: unknown };
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON.parse's message: it quotes the file's first characters, and the file may be anything.
    throw new Error(`${file}: not a service-account key file (not JSON)`);
  }
  if (typeof json.client_email !== "string" || typeof json.private_key !== "string") {
    throw new Error(`${file}: not a service-account key file (no client_email and private_key)`);
  }
  return {
    clientEmail: json.client_email,
    privateKey: json.private_key,
    tokenUri: typeof json.token_uri === "string" ? json.token_uri : DEFAULT_TOKEN_URI,
  };
}

/** The signed assertion of RFC 7523 section 2.1 for `key`, issued at `nowS` (seconds). */
export function serviceAccountAssertion(key: ServiceAccountKey, nowS: number): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${encode({ alg: "RS256", typ: "JWT" })}.${encode({
    iss: key.clientEmail,
    scope: SCOPE,
    aud: key.tokenUri,
    iat: nowS,
    exp: nowS + LIFETIME_S,
  })}`;
  const signature = createSign("RSA-SHA256").update(unsigned).sign(key.privateKey).toString("base64url");
  return `${unsigned}.${signature}`;
}

export class ServiceAccountTokens {
  readonly #keyFile: string;
  readonly #now: () => number;
  #current: GcsToken | undefined;
  #pending: Promise<GcsToken> | undefined;

  constructor(keyFile: string, now: () => number = Date.now) {
    this.#keyFile = keyFile;
    this.#now = now;
  }

  readonly renewable = true;

  async get(): Promise<string> {
    const current = this.#current;
    if (current !== undefined && this.#now() < renewTime(current, this.#now())) return current.token;
    return (await this.#fetch()).token;
  }

  async renew(): Promise<void> {
    await this.#fetch();
  }

  #fetch(): Promise<GcsToken> {
    this.#pending ??= this.#exchange().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #exchange(): Promise<GcsToken> {
    const key = parseServiceAccountKey(await readFile(this.#keyFile, "utf8"), this.#keyFile);
    const assertion = serviceAccountAssertion(key, Math.floor(this.#now() / 1000));
    const response = await fetch(key.tokenUri, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (!response.ok) {
      throw new Error(
        `${key.tokenUri} refused the service account ${key.clientEmail} of ${this.#keyFile}: HTTP ${response.status}${oauthReason(text)}`,
      );
    }
    const body = JSON.parse(text) as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== "string") {
      throw new Error(`${key.tokenUri} answered without an access_token for ${key.clientEmail}`);
    }
    const expiresIn = typeof body.expires_in === "number" ? body.expires_in : LIFETIME_S;
    this.#current = { token: body.access_token, expiresAtMs: this.#now() + expiresIn * 1000 };
    return this.#current;
  }
}

/** The OAuth2 error code of a token endpoint's answer (RFC 6749 5.2), never the rest of its body. */
function oauthReason(text: string): string {
  try {
    const code = (JSON.parse(text) as { error?: unknown }).error;
    return typeof code === "string" && /^[\w.-]{1,64}$/.test(code) ? ` (${code})` : "";
  } catch {
    return "";
  }
}
