// `floe serve` as a function: the config store, the run service (its scheduler starts with
// it) and the HTTP server in one process; tests start it on port 0.
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";
import { UiRuns } from "../service/ui-runs.ts";
import { ConfigStore } from "../state/config-store.ts";
import { SecretBox } from "../state/secret-box.ts";
import { createApp } from "./app.ts";
import { Auth, isLoopback } from "./auth.ts";

export interface ServeOptions {
  stateDir: string;
  host: string;
  /** 0: any free port. */
  port: number;
  env?: Readonly<Record<string, string | undefined>>;
  /** The service's log lines on stdout: pretty, json, or none (the run store keeps them either way). Default: pretty on a TTY, else json. */
  logFormat?: "pretty" | "json" | "none";
}

export interface Server {
  /** http://host:port/ */
  url: string;
  store: ConfigStore;
  runs: UiRuns;
  close(): Promise<void>;
}

const UI_DIR = fileURLToPath(new URL("../../ui/dist", import.meta.url));
const VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

/** Starts serving; throws AuthSetupError before binding when a non-loopback address has no credential. */
export async function startServer(options: ServeOptions): Promise<Server> {
  const env = options.env ?? process.env;
  const auth = Auth.setUp(options.stateDir, options.host, env);
  const store = new ConfigStore(options.stateDir, SecretBox.open(options.stateDir, env));
  const runs = await UiRuns.open(
    options.stateDir,
    store,
    options.logFormat ?? (process.stdout.isTTY ? "pretty" : "json"),
  );
  const loopback = isLoopback(options.host);
  let port = options.port;
  // The app needs the bound port for its Host check; with port 0 it is known once bound.
  const appRef: { fetch: (request: Request) => Response | Promise<Response> } = {
    fetch: () => new Response(null, { status: 503 }),
  };
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: (request) => appRef.fetch(request), hostname: options.host, port: options.port }, () =>
      resolve(s),
    );
    s.once("error", reject);
  });
  port = (server.address() as AddressInfo).port;
  const app = createApp({
    store,
    runs,
    auth,
    listen: { host: options.host, port },
    loopback,
    uiDir: UI_DIR,
    version: VERSION,
  });
  appRef.fetch = (request) => app.fetch(request);
  const hostInUrl = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${hostInUrl}:${port}/`,
    store,
    runs,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runs.close();
      store.close();
    },
  };
}
