// The HTTP API and the built UI of `floe serve`, on Hono: security headers on every answer,
// the Host check of a loopback bind (against DNS rebinding), sessions or a bearer token where
// credentials are set, and CSRF protection of every state-changing request (a same-origin
// Origin, no cross-site Sec-Fetch-Site, and the caller's CSRF token in X-Floe-CSRF). The routes
// are thin (one file per resource in routes/): the config store validates and keeps the model,
// the run service runs the syncs, inspect/ reads Kafka and the tables. `AppType` is the API's
// type, for the UI's client (hono's `hc`): its requests and answers are the routes' schemas.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative } from "node:path";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getCookie } from "hono/cookie";
import { secureHeaders } from "hono/secure-headers";
import { healthAnswer, LIVENESS_PATH, READINESS_PATH } from "../runtime/health.ts";
import { type AppOptions, forwarded } from "./app-options.ts";
import { type ApiEnv, errorAnswer, routes, sendError } from "./openapi.ts";
import { auditRoutes } from "./routes/audit.ts";
import { choiceRoutes } from "./routes/choices.ts";
import { destinationRoutes } from "./routes/destinations.ts";
import { groupRoutes } from "./routes/group.ts";
import { jobRoutes } from "./routes/jobs.ts";
import { runRoutes } from "./routes/runs.ts";
import { sessionRoutes } from "./routes/session.ts";
import { sourceRoutes } from "./routes/sources.ts";
import { tableRoutes } from "./routes/tables.ts";

export type { AppOptions } from "./app-options.ts";

/** The largest request body: an imported job file (1 MB of YAML) in its JSON string, with room. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

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

/**
 * The API's routes, one group per resource: each declares its schemas once (openapi.ts), and
 * the group's type carries every route's request and answers.
 */
export function apiRoutes(options: AppOptions) {
  return routes()
    .route("/", sessionRoutes(options))
    .route("/", sourceRoutes(options))
    .route("/", destinationRoutes(options))
    .route("/", choiceRoutes())
    .route("/", jobRoutes(options))
    .route("/", runRoutes(options))
    .route("/", tableRoutes(options))
    .route("/", groupRoutes(options))
    .route("/", auditRoutes(options));
}

/** The API's type: `hc<AppType>` is a client typed by the routes' schemas. */
export type AppType = ReturnType<typeof apiRoutes>;

export function createApp(options: AppOptions): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
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
      onError: (c) => sendError(c, 413, `the request body is larger than ${MAX_BODY_BYTES} bytes`),
    }),
  );
  app.use("*", async (c, next) => {
    const proxied = options.trustProxy && forwarded(c);
    // Behind a trusted proxy the browser's host is the proxy's: the Origin is compared with it.
    const host =
      (proxied ? c.req.header("x-forwarded-host")?.split(",")[0]?.trim() : undefined) ?? c.req.header("host") ?? "";
    if (!auth.required && forwarded(c)) {
      return sendError(
        c,
        401,
        "a request through a proxy needs a credential: floe serve --no-auth answers clients on this host only; set FLOE_UI_PASSWORD or FLOE_UI_TOKEN",
      );
    }
    if (options.loopback && !proxied && !hosts.has(host)) {
      return sendError(c, 421, `unexpected Host ${host}: floe serve answers on ${listen.host}:${listen.port}`);
    }
    if (STATE_CHANGING.has(c.req.method)) {
      const refused = crossSite(c.req.header("origin"), c.req.header("sec-fetch-site"), host);
      if (refused) return sendError(c, 403, refused);
    }
    return next();
  });
  app.use("/api/*", async (c, next) => {
    const caller = auth.caller(c.req.header("authorization"), getCookie(c, "floe_session"));
    c.set("caller", caller);
    if (!STATE_CHANGING.has(c.req.method) || c.req.path === "/api/login") return next();
    if (caller?.csrf !== undefined && c.req.header("x-floe-csrf") !== caller.csrf) {
      return sendError(c, 403, "missing or wrong X-Floe-CSRF token (GET /api/session gives it)");
    }
    return next();
  });
  const api = apiRoutes(options);
  api.openAPIRegistry.registerComponent("securitySchemes", "session", {
    type: "apiKey",
    in: "cookie",
    name: "floe_session",
  });
  api.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
  const document = api.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "floe API",
      version: options.version,
      description: "Sources, destinations, jobs, runs and tables of floe serve.",
    },
    security: [{ session: [] }, { bearer: [] }, {}],
  });
  app.get("/api/openapi.json", (c) => c.json(document, 200, { "cache-control": "no-store" }));
  app.route("/", api);
  app.all("/api/*", (c) => sendError(c, 404, `no API route ${c.req.method} ${c.req.path}`));
  app.onError((error, c) => {
    const { status, error: message, issues } = errorAnswer(error);
    return sendError(c, status, message, issues);
  });

  // The probes answer without a credential, and say nothing but ok or why not ready.
  for (const path of [LIVENESS_PATH, READINESS_PATH]) {
    app.get(path, (c) => {
      const probe = healthAnswer(path, options.readiness)!;
      return c.json(probe.body, probe.status, { "cache-control": "no-store" });
    });
  }

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
