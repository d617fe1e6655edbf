// How the REST client authenticates (REST spec "security": OAuth2 or a bearer token). The
// session hands out the Authorization header, renews it after a 401, and scrubs its secrets
// from any text that goes into an error message.

export interface AuthSession {
  /** The Authorization header value, fetching or refreshing a token first if needed. `call` names the catalog call. */
  authorization(call: string): Promise<string | undefined>;
  /** After a 401 or 419: drops the cached token. True when asking again may succeed. */
  renew(): boolean;
  /** Removes this session's secrets from `text`. */
  redact(text: string): string;
}

export const anonymous: AuthSession = {
  authorization: async () => undefined,
  renew: () => false,
  redact: (text) => text,
};

/** A fixed bearer token (a Databricks personal access token, a Polaris/Lakekeeper token). */
export function bearerToken(token: string): AuthSession {
  return {
    authorization: async () => `Bearer ${token}`,
    // The same token would be refused again.
    renew: () => false,
    redact: (text) => redactSecrets(text, [token]),
  };
}

export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret) out = out.replaceAll(secret, "***");
  }
  return out;
}
