// The API's routes as data: method, path, the zod schemas of what comes in and goes out, and
// the handler. The same table mounts the routes on Hono, validates each request body and query
// with its schema (a 400 naming the field, never a 500), and becomes the OpenAPI 3.1 document
// (the schemas through zod's JSON Schema), so that the document cannot drift from the code.
import type { Context, Hono } from "hono";
import { z } from "zod";
import { describeIssue } from "../config/load-job.ts";
import { stringifyJson } from "../iceberg/spec/json.ts";
import { classifyError } from "../sync/classify-error.ts";
import type { Caller } from "./auth.ts";

export type Method = "get" | "post" | "put" | "delete";

export interface Reply {
  status?: number;
  /** JSON unless `text` is given. */
  body?: unknown;
  text?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface Request<B, Q> {
  params: Record<string, string>;
  body: B;
  query: Q;
  caller: Caller;
  context: Context;
}

export interface Route<B = unknown, Q = unknown> {
  method: Method;
  path: string;
  summary: string;
  tag: string;
  /** Validated before the handler runs; absent: no body. */
  body?: z.ZodType<B>;
  /** The body's schema in the document when the handler's layer validates it (the config store, which keeps stored secrets). */
  bodyDoc?: z.ZodType;
  query?: z.ZodType<Q>;
  /** Status -> schema of the JSON body (undefined: no JSON body). */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
  /** No session needed (the session and login routes, the document itself). */
  open?: boolean;
  handler: (request: Request<B, Q>) => Promise<Reply> | Reply;
}

/** A refused request: status and the fields that are wrong. */
export class ApiError extends Error {
  readonly status: number;
  readonly issues: readonly { path: string; message: string }[];

  constructor(status: number, message: string, issues: readonly { path: string; message: string }[] = []) {
    super(message);
    this.status = status;
    this.issues = issues;
  }
}

export const errorSchema = z.object({
  error: z.string(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })),
});

// biome-ignore lint/suspicious/noExplicitAny: a table of routes holds routes of every body and query type
export type AnyRoute = Route<any, any>;

export function defineRoute<B, Q>(route: Route<B, Q>): Route<B, Q> {
  return route;
}

export function json(body: unknown, status = 200): Reply {
  return { status, body };
}

function zodIssues(error: z.ZodError, prefix: string): { path: string; message: string }[] {
  return error.issues
    .flatMap((i) => describeIssue(i, prefix === "" ? [] : [prefix]))
    .map((i) => ({ path: i.path.join("."), message: i.message }));
}

export function reply(c: Context, r: Reply): Response {
  const headers: Record<string, string> = { "cache-control": "no-store", ...r.headers };
  if (r.text !== undefined) {
    return c.body(r.text, (r.status ?? 200) as 200, {
      ...headers,
      "content-type": r.contentType ?? "text/plain; charset=utf-8",
    });
  }
  if (r.body === undefined) return c.body(null, (r.status ?? 204) as 204, headers);
  return c.body(stringifyJson(r.body, { bigints: "strings" }), (r.status ?? 200) as 200, {
    ...headers,
    "content-type": "application/json; charset=utf-8",
  });
}

export function mount(app: Hono, routes: readonly AnyRoute[], callerOf: (c: Context) => Caller | undefined): void {
  for (const route of routes) {
    app.on(route.method.toUpperCase(), route.path, async (c) => {
      const caller = callerOf(c);
      if (caller === undefined && !route.open) {
        return reply(c, json({ error: "log in first", issues: [] }, 401));
      }
      let body: unknown;
      if (route.body) {
        let raw: unknown;
        try {
          raw = await c.req.json();
        } catch {
          return reply(
            c,
            json(
              { error: "the request body is not JSON", issues: [{ path: "", message: "expected a JSON body" }] },
              400,
            ),
          );
        }
        const parsed = route.body.safeParse(raw, { reportInput: true });
        if (!parsed.success) {
          const issues = zodIssues(parsed.error, "");
          return reply(c, json({ error: "invalid request body", issues }, 400));
        }
        body = parsed.data;
      }
      let query: unknown;
      if (route.query) {
        const parsed = route.query.safeParse(c.req.query());
        if (!parsed.success)
          return reply(c, json({ error: "invalid query", issues: zodIssues(parsed.error, "") }, 400));
        query = parsed.data;
      }
      try {
        const r = await route.handler({
          params: c.req.param() as Record<string, string>,
          body,
          query,
          caller: caller ?? { actor: "anonymous", csrf: undefined },
          context: c,
        });
        return reply(c, r);
      } catch (error) {
        return reply(c, errorReply(error));
      }
    });
  }
}

/** A refused change as its 4xx; anything else is a 500 that names no secret (the error classes never do). */
export function errorReply(error: unknown): Reply {
  const e = error as { status?: number; issues?: { path: string; message: string }[]; message?: string };
  if (typeof e?.status === "number" && e.status >= 400 && e.status < 500) {
    return json({ error: e.message ?? "refused", issues: e.issues ?? [] }, e.status);
  }
  if ((error as Error)?.name === "ConfigError") {
    const issues = ((error as { issues: { path: (string | number)[]; message: string }[] }).issues ?? []).map((i) => ({
      path: i.path.join("."),
      message: i.message,
    }));
    return json({ error: (error as Error).message, issues }, 400);
  }
  // The sync's one classification: a job that does not fit what it finds (no topic selected, two
  // topics on one table) is the request's fault; an unreachable or refusing Kafka or catalog is
  // a bad gateway, named.
  const { kind, message } = classifyError(error);
  if (kind === "config") return json({ error: message, issues: [{ path: "", message }] }, 400);
  if (kind === "connection" || kind === "auth") return json({ error: message, issues: [] }, 502);
  return json({ error: error instanceof Error ? error.message : String(error), issues: [] }, 500);
}

/** The OpenAPI 3.1 document of the routes. */
export function openApiDocument(routes: readonly AnyRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const schema = (s: z.ZodType, io: "input" | "output") => {
    const { $schema: _, ...rest } = z.toJSONSchema(s, {
      io,
      target: "draft-2020-12",
      unrepresentable: "any",
    }) as Record<string, unknown>;
    return rest;
  };
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z_]+)/g, "{$1}");
    const params = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const queryParams = route.query
      ? Object.entries((schema(route.query, "input")["properties"] ?? {}) as Record<string, unknown>).map(
          ([name, s]) => ({
            name,
            in: "query",
            required: false,
            schema: s,
          }),
        )
      : [];
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(route.responses)) {
      responses[status] = {
        description: r.description,
        ...(r.schema
          ? { content: { [r.contentType ?? "application/json"]: { schema: schema(r.schema, "output") } } }
          : {}),
        ...(!r.schema && r.contentType ? { content: { [r.contentType]: { schema: { type: "string" } } } } : {}),
      };
    }
    if (route.body)
      responses["400"] ??= {
        description: "A field is wrong",
        content: { "application/json": { schema: schema(errorSchema, "output") } },
      };
    if (!route.open)
      responses["401"] ??= {
        description: "Not logged in",
        content: { "application/json": { schema: schema(errorSchema, "output") } },
      };
    paths[path] ??= {};
    paths[path]![route.method] = {
      summary: route.summary,
      tags: [route.tag],
      operationId: `${route.method}${path
        .replace(/[{}]/g, "")
        .replace(/\/(\w)/g, (_m, ch: string) => ch.toUpperCase())
        .replace(/[^A-Za-z0-9]/g, "")}`,
      parameters: [...params, ...queryParams],
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { "application/json": { schema: schema(route.bodyDoc ?? route.body, "input") } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: "floe API", version, description: "Sources, destinations, jobs, runs and tables of floe serve." },
    paths,
    components: {
      securitySchemes: {
        session: { type: "apiKey", in: "cookie", name: "floe_session" },
        bearer: { type: "http", scheme: "bearer" },
      },
    },
    security: [{ session: [] }, { bearer: [] }, {}],
  };
}
