// The API client of the UI: JSON in and out, the CSRF token of the session on every change.
// The answers are typed from the API's own zod schemas (src/api/schemas.ts), so that a route
// whose schema changes breaks `tsc -p ui` where the UI reads it.
import type * as S from "../../src/api/schemas";

export type * from "../../src/api/schemas";

let csrf: string | null = null;

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

/** What a GET of `P` answers, most literal route first (as the server matches them). */
export type GetAnswer<P extends string> = P extends "/api/sources"
  ? S.SourceShown[]
  : P extends "/api/destinations"
    ? S.DestinationShown[]
    : P extends "/api/jobs"
      ? S.JobRow[]
      : P extends "/api/choices"
        ? S.Choices
        : P extends "/api/audit"
          ? S.AuditEntry[]
          : P extends `/api/jobs/${string}/runs`
            ? S.RunSummary[]
            : P extends `/api/jobs/${string}/tables/${string}/preview${string}`
              ? S.Preview
              : P extends `/api/jobs/${string}/tables`
                ? S.JobTable[]
                : P extends `/api/jobs/${string}/metrics`
                  ? S.Metrics
                  : P extends `/api/jobs/${string}/health`
                    ? S.TablesHealth
                    : P extends `/api/jobs/${string}`
                      ? S.JobShown
                      : P extends `/api/sources/${string}`
                        ? S.SourceShown
                        : P extends `/api/destinations/${string}`
                          ? S.DestinationShown
                          : P extends `/api/runs/${string}/logs${string}`
                            ? S.LogLine[]
                            : P extends `/api/runs/${string}`
                              ? S.RunDetail
                              : never;

/** What a POST or PUT of `P` answers. */
export type PostAnswer<P extends string> = P extends "/api/login"
  ? S.Session
  : P extends "/api/logout"
    ? undefined
    : P extends "/api/engines/check"
      ? S.EngineCheck
      : P extends "/api/schedule/preview"
        ? S.SchedulePreview
        : P extends "/api/jobs/import" | "/api/jobs"
          ? S.JobShown
          : P extends "/api/sources"
            ? S.SourceShown
            : P extends "/api/destinations"
              ? S.DestinationShown
              : P extends
                    | `/api/${"sources" | "destinations"}/test`
                    | `/api/${"sources" | "destinations"}/${string}/test`
                ? S.Diagnosis
                : P extends `/api/sources/${string}/discover`
                  ? S.Discovery
                  : P extends `/api/jobs/${string}/sync`
                    ? { runId: string }
                    : P extends `/api/jobs/${string}/cancel`
                      ? { cancelled: boolean }
                      : P extends `/api/jobs/${string}/maintain`
                        ? S.MaintenancePass
                        : P extends `/api/jobs/${string}/${"pause" | "resume"}`
                          ? S.JobRow
                          : P extends `/api/jobs/${string}`
                            ? S.JobShown
                            : P extends `/api/sources/${string}`
                              ? S.SourceShown
                              : P extends `/api/destinations/${string}`
                                ? S.DestinationShown
                                : never;

export async function loadSession(): Promise<S.Session> {
  const session = (await (await fetch("/api/session")).json()) as S.Session;
  csrf = session.csrfToken;
  return session;
}

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrf) headers["x-floe-csrf"] = csrf;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 204) return undefined;
  const type = response.headers.get("content-type") ?? "";
  const data: unknown = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) {
    const e = (
      typeof data === "object" && data ? data : { error: String(data), issues: [] }
    ) as Partial<S.ApiErrorBody>;
    throw new ApiError(response.status, e.error ?? `HTTP ${response.status}`, e.issues ?? []);
  }
  if (path === "/api/login") csrf = (data as S.Session).csrfToken;
  return data;
}

export const get = <P extends string>(path: P) => call("GET", path) as Promise<GetAnswer<P>>;
export const post = <P extends string>(path: P, body?: unknown) =>
  call("POST", path, body ?? {}) as Promise<PostAnswer<P>>;
export const put = <P extends string>(path: P, body: unknown) => call("PUT", path, body) as Promise<PostAnswer<P>>;
export const del = (path: string) => call("DELETE", path) as Promise<undefined>;
