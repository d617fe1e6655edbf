// The API client of the UI: JSON in and out, the CSRF token of the session on every change.
let csrf: string | null = null;

export class ApiError extends Error {
  status: number;
  issues: { path: string; message: string }[];
  constructor(status: number, message: string, issues: { path: string; message: string }[]) {
    super(message);
    this.status = status;
    this.issues = issues;
  }
}

export interface Session {
  authRequired: boolean;
  authenticated: boolean;
  csrfToken: string | null;
}

export async function loadSession(): Promise<Session> {
  const session = (await (await fetch("/api/session")).json()) as Session;
  csrf = session.csrfToken;
  return session;
}

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrf) headers["x-floe-csrf"] = csrf;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 204) return undefined as T;
  const type = response.headers.get("content-type") ?? "";
  const data = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) {
    const message = typeof data === "object" && data ? data.error : String(data);
    throw new ApiError(response.status, message, (typeof data === "object" && data?.issues) || []);
  }
  if (path === "/api/login") csrf = (data as Session).csrfToken;
  return data as T;
}

export const get = <T = any>(path: string) => api<T>("GET", path);
export const post = <T = any>(path: string, body?: unknown) => api<T>("POST", path, body ?? {});
export const put = <T = any>(path: string, body: unknown) => api<T>("PUT", path, body);
export const del = (path: string) => api("DELETE", path);
