// `floe serve` as a function: the config store, the run service (its scheduler starts with
// it) and the HTTP(S) server in one process; tests start it on port 0.
import { readFileSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { OutboundPolicy } from "../pipeline/outbound-policy.ts";
import { UiRuns } from "../runtime/ui-runs.ts";
import { ConfigStore, type ServeEnvironment } from "../state/config-store.ts";
import { SecretBox } from "../state/secret-box.ts";
import { createApp } from "./app.ts";
import { Auth, AuthSetupError, isLoopback } from "./auth.ts";
import { LoginLimiter } from "./login-limiter.ts";

export interface ServeOptions {
  stateDir: string;
  host: string;
  /** 0: any free port. */
  port: number;
  env?: Readonly<Record<string, string | undefined>>;
  /** The service's log lines on stdout: pretty, json, or none (the run store keeps them either way). Default: pretty on a TTY, else json. */
  logFormat?: "pretty" | "json" | "none";
  /** `--no-auth`: no credential on a loopback address (direct clients only). */
  noAuth?: boolean;
  /** `--tls-cert` and `--tls-key`: PEM files; HTTPS, and Secure cookies. */
  tls?: { certFile: string; keyFile: string };
  /** `--trust-proxy`: a reverse proxy in front; its X-Forwarded-Proto/-For/-Host are believed. */
  trustProxy?: boolean;
  /** `--allow-env`: the environment variables that the UI's records may reference as ${NAME}. */
  allowEnv?: readonly string[];
  /** `--allow-hosts`: the only hosts the server connects to for the UI's records; empty: any but link-local and metadata. */
  allowHosts?: readonly string[];
  /** `--ambient-credentials`: object stores may fall back to the server's own credentials (AWS chain, GOOGLE_APPLICATION_CREDENTIALS, AZURE_*). */
  ambientCredentials?: boolean;
}

export interface Server {
  /** http(s)://host:port/ */
  url: string;
  store: ConfigStore;
  runs: UiRuns;
  close(): Promise<void>;
}

const UI_DIR = fileURLToPath(new URL("../../ui/dist", import.meta.url));
const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/** The variables the UI's records may never read, whatever --allow-env says: the server's own keys. */
const NEVER_ALLOWED = new Set(["FLOE_SECRET_KEY", "FLOE_UI_PASSWORD", "FLOE_UI_TOKEN"]);

/** Starts serving; throws AuthSetupError before binding when no credential is set (and --no-auth is not given on loopback). */
export async function startServer(options: ServeOptions): Promise<Server> {
  const env = options.env ?? process.env;
  const auth = await Auth.setUp(options.stateDir, options.host, env, { noAuth: options.noAuth ?? false });
  const allowEnv = [...(options.allowEnv ?? []), ...splitList(env["FLOE_SERVE_ALLOW_ENV"])];
  for (const name of allowEnv) {
    if (NEVER_ALLOWED.has(name))
      throw new AuthSetupError(`--allow-env ${name}: the server's own secret is never given to the UI's records`);
  }
  const serveEnv: ServeEnvironment = {
    env,
    allowed: new Set(allowEnv),
    ambientCredentials: options.ambientCredentials ?? false,
  };
  const policy = new OutboundPolicy(options.allowHosts ?? []);
  const tls = options.tls && {
    cert: readFileSync(options.tls.certFile),
    key: readFileSync(options.tls.keyFile),
  };
  const store = new ConfigStore(options.stateDir, SecretBox.open(options.stateDir, env), serveEnv);
  const runs = await UiRuns.open(
    options.stateDir,
    store,
    options.logFormat ?? (process.stdout.isTTY ? "pretty" : "json"),
    policy,
  );
  const loopback = isLoopback(options.host);
  let port = options.port;
  // The app needs the bound port for its Host check; with port 0 it is known once bound.
  const appRef: { fetch: (request: Request, env: unknown) => Response | Promise<Response> } = {
    fetch: () => new Response(null, { status: 503 }),
  };
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve(
      {
        fetch: (request, env) => appRef.fetch(request, env),
        hostname: options.host,
        port: options.port,
        ...(tls ? { createServer: createHttpsServer, serverOptions: tls } : {}),
      },
      () => resolve(s),
    );
    s.once("error", reject);
  });
  port = (server.address() as AddressInfo).port;
  let closing = false;
  const app = createApp({
    store,
    runs,
    auth,
    listen: { host: options.host, port },
    loopback,
    uiDir: UI_DIR,
    version: VERSION,
    tls: tls !== undefined,
    trustProxy: options.trustProxy ?? false,
    limiter: new LoginLimiter(),
    policy,
    readiness: () => (closing ? { ready: false, reason: "stopping" } : { ready: true }),
  });
  appRef.fetch = (request, env) => app.fetch(request, env);
  const hostInUrl = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `${tls ? "https" : "http"}://${hostInUrl}:${port}/`,
    store,
    runs,
    async close() {
      closing = true;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runs.close();
      store.close();
    },
  };
}

function splitList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}
