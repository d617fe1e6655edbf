// What every route of the API shares, on @hono/zod-openapi: a route is declared once with the
// zod schemas of its path, query, body and answers, and that one declaration validates the
// request (a 400 naming the field, never a 500), types the handler and the UI's client (hono's
// `hc` over the app's type), and becomes the OpenAPI 3.1 document, so that none can drift.
// Answers are JSON with int64 values as strings, and never cached (Cache-Control: no-store).
import { createRoute, OpenAPIHono, type RouteConfig, z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler, TypedResponse } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { JSONParsed } from "hono/utils/types";
import { isSecretPath } from "../job/secret.ts";
import { stringifyJson } from "../lib/int64-json.ts";
import { describeIssue } from "../lib/zod-issues.ts";
import { classifyError } from "../pipeline/classify-error.ts";
import type { Caller } from "./auth.ts";
import { errorBody } from "./schemas.ts";

/** What the app's middleware hands the routes: the caller of the request, undefined when not logged in. */
export interface ApiEnv {
  Variables: { caller: Caller | undefined };
}

export type Issue = { path: string; message: string };

/** A refused request: status and the fields that are wrong. */
export class ApiError extends Error {
  readonly status: number;
  readonly issues: readonly Issue[];

  constructor(status: number, message: string, issues: readonly Issue[] = []) {
    super(message);
    this.status = status;
    this.issues = issues;
  }
}

const NO_STORE = { "cache-control": "no-store" };

/** A JSON answer, typed as the route's schema for `status` says; int64 values become strings. */
export function send<T, S extends ContentfulStatusCode>(
  c: Context,
  body: T,
  status: S,
  headers: Record<string, string> = {},
): Response & TypedResponse<JSONParsed<T>, S, "json"> {
  return c.body(stringifyJson(body, { bigints: "strings" }), status, {
    ...NO_STORE,
    ...headers,
    "content-type": "application/json; charset=utf-8",
  }) as unknown as Response & TypedResponse<JSONParsed<T>, S, "json">;
}

/** A text answer (a job file, a log), downloaded under `filename`. */
export function sendText(
  c: Context,
  text: string,
  contentType: string,
  filename: string,
): Response & TypedResponse<string, 200, "text"> {
  return c.body(text, 200, {
    ...NO_STORE,
    "content-type": contentType,
    "content-disposition": `attachment; filename="${filename}"`,
  }) as unknown as Response & TypedResponse<string, 200, "text">;
}

// biome-ignore lint/complexity/noBannedTypes: @hono/zod-openapi types an answer without content as {}
type NoContent = {};

/** 204, no body. */
export function noContent(c: Context): Response & TypedResponse<NoContent, 204, string> {
  return c.body(null, 204, NO_STORE) as unknown as Response & TypedResponse<NoContent, 204, string>;
}

/** An error answer in the API's one shape: `{error, issues}`. */
export function sendError<S extends ContentfulStatusCode>(
  c: Context,
  status: S,
  error: string,
  issues: readonly Issue[] = [],
  headers: Record<string, string> = {},
) {
  return send(c, { error, issues: [...issues] }, status, headers);
}

/** A JSON answer of `schema`, for a route's responses. */
export const jsonOf = <T extends z.ZodType>(schema: T, description = "OK") =>
  ({ description, content: { "application/json": { schema } } }) as const;

export const refused = (description: string) => jsonOf(errorBody, description);

/** The 404 of a route over a named record. */
export const notFound = (kind: string) => ({ 404: refused(`No ${kind} of that name`) }) as const;

/** The answers of a route that connects to what a record names, through the outbound policy. */
export const refusedHost = {
  400: refused(
    "The record does not make a valid job here (a variable reference the operator did not allow, a bad field)",
  ),
  403: refused("A host the record names is one the server's outbound policy refuses"),
} as const;

/** A JSON request body of `schema` (required: a request without one is refused, not read as `{}`). */
export const jsonBody = <T extends z.ZodType>(schema: T) =>
  ({ required: true, content: { "application/json": { schema } } }) as const;

/**
 * A body the handler's own layer validates (the config store, which keeps the stored secrets a
 * change leaves out): read as unknown, documented as `record`'s JSON Schema.
 */
export function recordBody(record: z.ZodType) {
  const { $schema: _, ...schema } = z.toJSONSchema(record, {
    io: "input",
    target: "draft-2020-12",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  return jsonBody(z.unknown().openapi(schema));
}

export const nameParam = z.object({ name: z.string() });

function zodIssues(error: z.ZodError): Issue[] {
  return error.issues
    .flatMap((i) => describeIssue(i, [], { hidesValue: isSecretPath }))
    .map((i) => ({ path: i.path.join("."), message: i.message }));
}

/** Refuses a caller who is not logged in, before the request is read. */
const loggedIn: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (c.get("caller") === undefined) return sendError(c, 401, "log in first");
  await next();
};

/**
 * Checks the body and the query against the route's schemas before @hono/zod-openapi's own
 * validators run, so that the 400 names each field the way job-file errors do (the issue's input
 * is reported), and a body that is not JSON gets its own message.
 */
function validated(route: { readonly request?: RouteConfig["request"] | undefined }): MiddlewareHandler<ApiEnv> {
  const media = route.request?.body?.content["application/json"];
  const body = media !== undefined && "schema" in media ? (media.schema as z.ZodType) : undefined;
  const query = route.request?.query as z.ZodType | undefined;
  return async (c, next) => {
    if (body) {
      let raw: unknown;
      try {
        raw = await c.req.json();
      } catch {
        return sendError(c, 400, "the request body is not JSON", [{ path: "", message: "expected a JSON body" }]);
      }
      const parsed = body.safeParse(raw, { reportInput: true });
      if (!parsed.success) return sendError(c, 400, "invalid request body", zodIssues(parsed.error));
    }
    if (query) {
      const parsed = query.safeParse(c.req.query(), { reportInput: true });
      if (!parsed.success) return sendError(c, 400, "invalid query", zodIssues(parsed.error));
    }
    await next();
  };
}

const operationId = (method: string, path: string) =>
  `${method}${path
    .replace(/[{}]/g, "")
    .replace(/\/(\w)/g, (_m, ch: string) => ch.toUpperCase())
    .replace(/[^A-Za-z0-9]/g, "")}`;

const unauthorized = { 401: refused("Not logged in") } as const;
const invalid = { 400: refused("A field is wrong") } as const;

type Declared = RouteConfig & { open?: true; tag: string };
type WithErrors<R extends Declared> = Omit<R, "open" | "tag"> & {
  responses: R["responses"] & typeof unauthorized & typeof invalid;
};

/**
 * A route of the API: `tag` groups it in the document; `open` needs no session. Every route
 * that reads a body or a query can answer 400, and every route but the open ones 401.
 */
export function route<const R extends Declared>(config: R): WithErrors<R> {
  const { open, tag, ...rest } = config;
  const reads = rest.request?.body !== undefined || rest.request?.query !== undefined;
  const declared = {
    ...rest,
    tags: [tag],
    operationId: operationId(rest.method, rest.path),
    responses: {
      ...(reads ? invalid : {}),
      ...(open === true ? {} : unauthorized),
      ...rest.responses,
    },
    middleware: [...(open === true ? [] : [loggedIn]), validated(rest)],
  };
  return createRoute(declared as never) as WithErrors<R>;
}

/** The caller of a request (routes that need a session are reached only with one). */
export const callerOf = (c: Context<ApiEnv>): Caller => c.get("caller") ?? { actor: "anonymous", csrf: undefined };

/** A refused change as its 4xx; anything else is a 500 that names no secret (the error classes never do). */
export function errorAnswer(error: unknown): { status: ContentfulStatusCode; error: string; issues: Issue[] } {
  if (error instanceof HTTPException) {
    // The validators' own refusals (a body of another media type): the API's shape, same status.
    return { status: error.status as ContentfulStatusCode, error: error.message, issues: [] };
  }
  const e = error as { status?: number; issues?: Issue[]; message?: string };
  if (typeof e?.status === "number" && e.status >= 400 && e.status < 500) {
    return { status: e.status as ContentfulStatusCode, error: e.message ?? "refused", issues: [...(e.issues ?? [])] };
  }
  if ((error as Error)?.name === "ConfigError") {
    const issues = ((error as { issues: { path: (string | number)[]; message: string }[] }).issues ?? []).map((i) => ({
      path: i.path.join("."),
      message: i.message,
    }));
    return { status: 400, error: (error as Error).message, issues };
  }
  // The sync's one classification: a job that does not fit what it finds (no topic selected, two
  // topics on one table) is the request's fault; an unreachable or refusing Kafka or catalog is
  // a bad gateway, named.
  const { kind, message } = classifyError(error);
  if (kind === "config") return { status: 400, error: message, issues: [{ path: "", message }] };
  if (kind === "connection" || kind === "auth") return { status: 502, error: message, issues: [] };
  return { status: 500, error: error instanceof Error ? error.message : String(error), issues: [] };
}

/** A new group of routes; a failed validation the middleware did not catch still answers in the API's shape. */
export const routes = () =>
  new OpenAPIHono<ApiEnv>({
    defaultHook: (result, c) => {
      if (!result.success) return sendError(c, 400, `invalid ${result.target}`, zodIssues(result.error));
      return undefined;
    },
  });
