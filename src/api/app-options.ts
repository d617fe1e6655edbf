// What `floe serve` hands the app (the stores, the run service, auth, the outbound policy), and
// what the routes read of a request's origin: whether it came through a proxy, from where, and
// over HTTPS.
import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";
import type { OutboundPolicy } from "../pipeline/outbound-policy.ts";
import type { Readiness } from "../runtime/health.ts";
import type { UiRuns } from "../runtime/ui-runs.ts";
import type { ConfigStore } from "../state/config-store.ts";
import type { Auth } from "./auth.ts";
import type { LoginLimiter } from "./login-limiter.ts";

export interface AppOptions {
  store: ConfigStore;
  runs: UiRuns;
  auth: Auth;
  /** host:port the server listens on: the Host and Origin a browser must send. */
  listen: { host: string; port: number };
  loopback: boolean;
  /** Folder of the built UI. */
  uiDir: string;
  version: string;
  /** Served over HTTPS (--tls-cert): cookies are Secure. */
  tls: boolean;
  /** --trust-proxy: X-Forwarded-Proto, -For and -Host of the proxy in front are believed. */
  trustProxy: boolean;
  limiter: LoginLimiter;
  policy: OutboundPolicy;
  /** Whether the server does its work, for /readyz (health.ts). */
  readiness: () => Readiness;
}

/** Headers a proxy adds: a request that carries one did not come from a client on this host directly. */
const FORWARDING_HEADERS = [
  "forwarded",
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-real-ip",
  "via",
];

/** Whether the request came through a proxy (it carries a forwarding header). */
export function forwarded(c: Context): boolean {
  return FORWARDING_HEADERS.some((h) => c.req.header(h) !== undefined);
}

/** The client's address: the socket's, or with --trust-proxy the last X-Forwarded-For entry (the one the proxy added). */
export function clientAddress(c: Context, trustProxy: boolean): string {
  const via = trustProxy ? c.req.header("x-forwarded-for")?.split(",").at(-1)?.trim() : undefined;
  if (via) return via;
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** Whether the browser reached the server over HTTPS: TLS here, or (with --trust-proxy) at the proxy. */
export function overHttps(c: Context, options: Pick<AppOptions, "tls" | "trustProxy">): boolean {
  if (options.tls) return true;
  return options.trustProxy && c.req.header("x-forwarded-proto")?.split(",")[0]?.trim() === "https";
}
