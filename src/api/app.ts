// The HTTP API and the built UI of `floe serve`, on Hono: security headers on every answer,
// the Host check of a loopback bind (against DNS rebinding), sessions or a bearer token where
// credentials are set, and CSRF protection of every state-changing request (a same-origin
// Origin, no cross-site Sec-Fetch-Site, and the caller's CSRF token in X-Floe-CSRF). The routes
// are thin: the config store validates and keeps the model, the run service runs the syncs,
// sync/ reads Kafka and the tables.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative } from "node:path";
import { getConnInfo } from "@hono/node-server/conninfo";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getCookie } from "hono/cookie";
import { secureHeaders } from "hono/secure-headers";
import type { UiRuns } from "../service/ui-runs.ts";
import type { ConfigStore } from "../state/config-store.ts";
import type { OutboundPolicy } from "../sync/outbound-policy.ts";
import type { Auth } from "./auth.ts";
import type { LoginLimiter } from "./login-limiter.ts";
import { mount, openApiDocument, reply } from "./route-table.ts";
import { apiRoutes } from "./routes.ts";

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
}

/** The largest request body: an imported job file (1 MB of YAML) in its JSON string, with room. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

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

const STATE_CHANGING = new Set(["POST", "PUT", "DELETE", "PATCH"]);
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
};

export function createApp(options: AppOptions): Hono {
  const app = new Hono();
  const { auth, listen } = options;
  const hosts = new Set(
    options.loopback
      ? [
          `127.0.0.1:${listen.port}`,
          `localhost:${listen.port}`,
          `[::1]:${listen.port}`,
          `${listen.host}:${listen.port}`,
        ]
      : [],
  );
  app.use(
    "*",
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        connectSrc: ["'self'"],
        frameAncestors: ["'none'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
      referrerPolicy: "no-referrer",
      crossOriginOpenerPolicy: "same-origin",
      crossOriginResourcePolicy: "same-origin",
      xFrameOptions: "DENY",
    }),
  );
  app.use(
    "*",
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) =>
        reply(c, {
          status: 413,
          body: { error: `the request body is larger than ${MAX_BODY_BYTES} bytes`, issues: [] },
        }),
    }),
  );
  app.use("*", async (c, next) => {
    const proxied = options.trustProxy && forwarded(c);
    // Behind a trusted proxy the browser's host is the proxy's: the Origin is compared with it.
    const host =
      (proxied ? c.req.header("x-forwarded-host")?.split(",")[0]?.trim() : undefined) ?? c.req.header("host") ?? "";
    if (!auth.required && forwarded(c)) {
      return reply(c, {
        status: 401,
        body: {
          error:
            "a request through a proxy needs a credential: floe serve --no-auth answers clients on this host only; set FLOE_UI_PASSWORD or FLOE_UI_TOKEN",
          issues: [],
        },
      });
    }
    if (options.loopback && !proxied && !hosts.has(host)) {
      return reply(c, {
        status: 421,
        body: { error: `unexpected Host ${host}: floe serve answers on ${listen.host}:${listen.port}`, issues: [] },
      });
    }
    if (STATE_CHANGING.has(c.req.method)) {
      const refused = crossSite(c.req.header("origin"), c.req.header("sec-fetch-site"), host);
      if (refused) return reply(c, { status: 403, body: { error: refused, issues: [] } });
    }
    return next();
  });
  const callerOf = (c: Parameters<Parameters<typeof app.use>[1]>[0]) =>
    auth.caller(c.req.header("authorization"), getCookie(c, "floe_session"));
  app.use("/api/*", async (c, next) => {
    if (!STATE_CHANGING.has(c.req.method) || c.req.path === "/api/login") return next();
    const caller = callerOf(c);
    if (caller?.csrf !== undefined && c.req.header("x-floe-csrf") !== caller.csrf) {
      return reply(c, {
        status: 403,
        body: { error: "missing or wrong X-Floe-CSRF token (GET /api/session gives it)", issues: [] },
      });
    }
    return next();
  });
  const routes = apiRoutes(options);
  const document = openApiDocument(routes, options.version);
  app.get("/api/openapi.json", (c) => reply(c, { body: document }));
  mount(app, routes, callerOf);
  app.all("/api/*", (c) =>
    reply(c, { status: 404, body: { error: `no API route ${c.req.method} ${c.req.path}`, issues: [] } }),
  );

  const files = builtFiles(options.uiDir);
  app.get("*", (c) => {
    const file = files.get(c.req.path) ?? files.get("/index.html");
    if (!file) return c.text("the UI is not built (ui/dist is missing)", 500);
    const immutable = c.req.path.startsWith("/assets/");
    return c.body(file.bytes as Uint8Array<ArrayBuffer>, 200, {
      "content-type": file.type,
      "cache-control": immutable ? "public, max-age=31536000, immutable" : "no-cache",
    });
  });
  return app;
}

/** Why a state-changing request is refused as cross-site; undefined when it is same-origin. */
function crossSite(origin: string | undefined, fetchSite: string | undefined, host: string): string | undefined {
  if (fetchSite !== undefined && fetchSite !== "same-origin" && fetchSite !== "none") {
    return `cross-site request refused (Sec-Fetch-Site: ${fetchSite})`;
  }
  if (origin !== undefined && origin !== "null") {
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return `cross-site request refused (Origin ${origin})`;
    }
    if (originHost !== host) return `cross-site request refused (Origin ${origin} is not ${host})`;
  } else if (origin === "null") {
    return "cross-site request refused (Origin null)";
  }
  return undefined;
}

/** The built UI, read once: only these paths are ever served. */
function builtFiles(dir: string): Map<string, { bytes: Uint8Array; type: string }> {
  const files = new Map<string, { bytes: Uint8Array; type: string }>();
  const walk = (folder: string) => {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        files.set(`/${relative(dir, path).split("\\").join("/")}`, {
          bytes: readFileSync(path),
          type: TYPES[extname(name)] ?? "application/octet-stream",
        });
      }
    }
  };
  walk(dir);
  return files;
}
