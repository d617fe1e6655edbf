// OAuth2 client credentials (RFC 6749 section 4.4), as Iceberg REST clients use it: POST
// grant_type=client_credentials, client_id, client_secret and scope as a form to the token
// endpoint (`oauth2-server-uri`, or the deprecated `<uri>/v1/oauth/tokens`), then send the
// access token as a bearer token. The token is cached and fetched anew shortly before it
// expires (expires_in, else the JWT's exp claim), and after a 401.
import { z } from "zod";
import { parseJson } from "../../lib/int64-json.ts";
import { describeValue, object, readJsonDocument, string } from "../spec/json.ts";
import type { AuthSession } from "./auth.ts";
import { redactSecrets } from "./auth.ts";
import { CatalogError, refused } from "./catalog.ts";
import { networkFailure, redactUrl, redirectTarget } from "./http.ts";

export interface ClientCredentialsOptions {
  tokenUri: string;
  clientId: string;
  clientSecret: string;
  scope: string;
  /** Extra headers for the token request. */
  headers?: Readonly<Record<string, string>>;
  requestTimeoutMs?: number;
  /** The clock, in ms; tests replace it. */
  now?: () => number;
}

interface Token {
  value: string;
  /** When to fetch a new one (ms); undefined: only after a 401. */
  refreshAt: number | undefined;
}

/** Refresh this long before expiry, so a token never expires between header and server. */
const maxRefreshMarginMs = 60_000;

export class OAuth2ClientCredentials implements AuthSession {
  readonly #options: ClientCredentialsOptions;
  readonly #now: () => number;
  #token: Token | undefined;
  /** One token request at a time: concurrent calls share it. */
  #pending: Promise<Token> | undefined;

  constructor(options: ClientCredentialsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  async authorization(call: string): Promise<string> {
    const token = this.#token;
    if (token && (token.refreshAt === undefined || this.#now() < token.refreshAt)) return `Bearer ${token.value}`;
    this.#pending ??= this.#fetchToken(call).finally(() => {
      this.#pending = undefined;
    });
    this.#token = await this.#pending;
    return `Bearer ${this.#token.value}`;
  }

  renew(): boolean {
    this.#token = undefined;
    return true;
  }

  redact(text: string): string {
    return redactSecrets(text, [this.#options.clientSecret, this.#token?.value]);
  }

  async #fetchToken(call: string): Promise<Token> {
    const { tokenUri, clientId, clientSecret, scope } = this.#options;
    const where = redactUrl(tokenUri);
    const requestedAt = this.#now();
    const timeoutMs = this.#options.requestTimeoutMs ?? 30_000;
    let response: Response;
    try {
      response = await fetch(tokenUri, {
        method: "POST",
        headers: {
          ...this.#options.headers,
          "content-type": "application/x-www-form-urlencoded",
          accept: "application/json",
        },
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: clientId,
          client_secret: clientSecret,
          scope,
        }).toString(),
        redirect: "manual",
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      const failure = networkFailure(error);
      if (!failure) throw error;
      const what =
        failure.code === "timeout"
          ? `the OAuth2 token endpoint ${where} did not answer within ${timeoutMs / 1000} s (request_timeout)`
          : `cannot reach the OAuth2 token endpoint ${where} (${failure.code})`;
      throw new CatalogError("io", call, `${what}; check \`oauth2-server-uri\` / \`uri\``);
    }
    const target = redirectTarget(response);
    if (target !== undefined) {
      await response.body?.cancel();
      throw refused(
        call,
        `the token endpoint ${where} answered a redirect (HTTP ${response.status}) to ${target}; floe does not send the client secret after it: set \`oauth2-server-uri\` to where it leads`,
        response.status,
      );
    }
    const text = this.redact(await response.text());
    if (!response.ok) {
      const detail = oauthErrorDetail(text);
      if (response.status === 400 || response.status === 401 || response.status === 403) {
        throw new CatalogError(
          "auth",
          call,
          `the token endpoint ${where} refused the client credentials (HTTP ${response.status}${detail}); ` +
            `check the client id and secret, and that scope "${scope}" is one the server grants`,
          { status: response.status },
        );
      }
      throw refused(call, `token endpoint ${where} failed${detail}`, response.status);
    }
    const body = readJsonDocument(tokenResponseJson, text, `${call}: the token endpoint's answer (${where})`);
    const lifetimeMs =
      typeof body.expires_in === "number" ? body.expires_in * 1000 : jwtLifetimeMs(body.access_token, requestedAt);
    return {
      value: body.access_token,
      refreshAt:
        lifetimeMs === undefined ? undefined : requestedAt + lifetimeMs - Math.min(maxRefreshMarginMs, lifetimeMs / 10),
    };
  }
}

/** RFC 6749 5.1: the access token response; floe uses the token and its lifetime. */
const tokenResponseJson = object({
  access_token: string.refine((token) => token !== "", { error: "expected a token, got an empty string" }),
  token_type: string.nullish(),
  expires_in: z
    .number({ error: (issue) => `expected a number of seconds, got ${describeValue(issue.input)}` })
    .nullish(),
});

/** RFC 6749 5.2: the error response. */
const tokenErrorJson = object({ error: string, error_description: string.nullish() });

/** The error response's fields, when the body is one; the status alone says enough otherwise. */
function oauthErrorDetail(text: string): string {
  let json: unknown;
  try {
    json = parseJson(text);
  } catch {
    return "";
  }
  const parsed = tokenErrorJson.safeParse(json);
  if (!parsed.success) return "";
  const { error, error_description: description } = parsed.data;
  return typeof description === "string" ? `: ${error}: ${description}` : `: ${error}`;
}

/** A JWT access token carries its expiry (exp, seconds since the epoch) in the payload. */
function jwtLifetimeMs(token: string, now: number): number | undefined {
  const payload = token.split(".")[1];
  if (payload === undefined) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { exp?: unknown }).exp;
    return typeof exp === "number" ? exp * 1000 - now : undefined;
  } catch {
    return undefined;
  }
}
