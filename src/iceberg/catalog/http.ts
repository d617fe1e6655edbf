// HTTP plumbing shared by the REST catalog client and the OAuth2 token endpoint: telling a
// request that never left (refused, unknown host, TLS) from one that broke in flight, which
// decides whether a failed commit is "not applied" or "state unknown"; and redirects, which are
// not followed (fetch would resend a commit's body or the client secret to wherever one points,
// a host no one checked: floe serve's outbound policy checks the configured ones only).

/** Codes of failures that happen before the request is sent: the server cannot have acted on it. */
const connectCodes = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);

export interface NetworkFailure {
  /** ECONNREFUSED, ENOTFOUND, CERT_HAS_EXPIRED, ECONNRESET, TimeoutError, ... */
  code: string;
  /** True when the request never reached the server (connect, DNS or TLS handshake failed). */
  beforeRequest: boolean;
}

/** Classifies what fetch threw; undefined when it is not a network failure. */
export function networkFailure(error: unknown): NetworkFailure | undefined {
  if (error instanceof DOMException && error.name === "TimeoutError") {
    return { code: "timeout", beforeRequest: false };
  }
  // fetch reports network failures as TypeError("fetch failed") with the socket error as cause;
  // a TypeError without a cause is a bad request (a malformed URL), not the network.
  if (!(error instanceof TypeError) || error.cause === undefined) return undefined;
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  const code = typeof cause?.code === "string" ? cause.code : String(cause?.message ?? error.message);
  // fetch itself refuses the ports of other protocols (6000, 5060, ...) before connecting.
  const refusedByFetch = code === "bad port";
  return { code, beforeRequest: connectCodes.has(code) || /CERT|TLS|SSL/.test(code) || refusedByFetch };
}

/** The URL as it may appear in an error: without user info, which can carry a password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    return u.toString();
  } catch {
    return "<malformed URL>";
  }
}

/** Where a redirect answer points (its Location's host), or undefined for any other answer. */
export function redirectTarget(response: Response): string | undefined {
  if (response.status < 300 || response.status > 399) return undefined;
  const location = response.headers.get("location") ?? "";
  try {
    return new URL(location, response.url).host;
  } catch {
    return "<malformed Location>";
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
