// The API client of the UI: hono's `hc` over the server's app type (src/api/app.ts, imported as a
// type only, so no server code reaches the bundle). Each route's path, parameters, body and
// answers are the route's own zod schemas, so that a route whose schema changes breaks
// `tsc -p ui` where the UI calls or reads it. The session's CSRF token goes on every request.
import { type ClientResponse, hc } from "hono/client";
import type { SuccessStatusCode } from "hono/utils/http-status";
import type { AppType } from "../../src/api/app.ts";

export type * from "../../src/api/schemas.ts";

let csrf: string | null = null;

/** The typed client: `api.jobs[":name"].runs.$get({ param: { name } })`. */
export const api = hc<AppType>(typeof location === "undefined" ? "http://localhost" : location.origin, {
  headers: (): Record<string, string> => (csrf ? { "x-floe-csrf": csrf } : {}),
}).api;

export interface Issue {
  path: string;
  message: string;
}

export class ApiError extends Error {
  status: number;
  issues: Issue[];
  constructor(status: number, message: string, issues: Issue[]) {
    super(message);
    this.status = status;
    this.issues = issues;
  }
}

/** What a route answers when it succeeds: its JSON (a 2xx schema), or undefined for 204. */
export type Answer<R> =
  R extends ClientResponse<infer T, infer S, infer F>
    ? S extends SuccessStatusCode
      ? S extends 204
        ? undefined
        : F extends "json"
          ? T
          : string
      : never
    : never;

/** Sends a request of the client and gives its success answer; an error answer throws its ApiError. */
export async function call<R extends ClientResponse<unknown, number, string>>(request: Promise<R>): Promise<Answer<R>> {
  const response = await request;
  if (response.status === 204) return undefined as Answer<R>;
  const type = response.headers.get("content-type") ?? "";
  const data: unknown = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) {
    const e = (typeof data === "object" && data ? data : { error: String(data), issues: [] }) as {
      error?: string;
      issues?: Issue[];
    };
    throw new ApiError(response.status, e.error ?? `HTTP ${response.status}`, e.issues ?? []);
  }
  // The routes' own types: the server's answers are these schemas (the tests check each answer
  // against the OpenAPI document made of the same schemas).
  return data as Answer<R>;
}

/** The session: whether a login is needed, and the CSRF token every change carries. */
export async function loadSession() {
  const session = await call(api.session.$get());
  csrf = session.csrfToken;
  return session;
}

export async function login(password: string) {
  const session = await call(api.login.$post({ json: { password } }));
  csrf = session.csrfToken;
  return session;
}
