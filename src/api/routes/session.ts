// The session routes: whether a login is needed (and the caller's CSRF token), log in with the
// password (rate-limited per client), log out.
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { setCookie } from "hono/cookie";
import { type AppOptions, clientAddress, overHttps } from "../app-options.ts";
import { ApiError, jsonBody, jsonOf, noContent, refused, route, routes, send, sendError } from "../openapi.ts";
import * as S from "../schemas.ts";

const session = route({
  method: "get",
  path: "/api/session",
  summary: "Whether a login is needed, and the CSRF token of this caller",
  tag: "session",
  open: true,
  responses: { 200: jsonOf(S.session) },
});

const login = route({
  method: "post",
  path: "/api/login",
  summary: "Log in with the password; sets the session cookie",
  tag: "session",
  open: true,
  request: { body: jsonBody(z.strictObject({ password: z.string().min(1).max(1000) })) },
  responses: {
    200: jsonOf(S.session),
    401: refused("Wrong password"),
    429: refused("Too many wrong passwords: wait Retry-After seconds"),
  },
});

const logout = route({
  method: "post",
  path: "/api/logout",
  summary: "End the session",
  tag: "session",
  responses: { 204: { description: "Logged out" } },
});

function sessionCookie(context: Context): string | undefined {
  const header = context.req.header("cookie") ?? "";
  return /(?:^|;\s*)floe_session=([^;]+)/.exec(header)?.[1];
}

export function sessionRoutes(options: AppOptions) {
  const { auth, limiter } = options;
  const cookie = (context: Context) =>
    ({ httpOnly: true, sameSite: "Strict", path: "/", secure: overHttps(context, options) }) as const;
  return routes()
    .openapi(session, (c) => {
      const known = auth.caller(c.req.header("authorization"), sessionCookie(c));
      return send(
        c,
        { authRequired: auth.required, authenticated: known !== undefined, csrfToken: known?.csrf ?? null },
        200,
      );
    })
    .openapi(login, async (c) => {
      const { password } = c.req.valid("json");
      const client = clientAddress(c, options.trustProxy);
      const wait = limiter.waitMs(client);
      if (wait > 0) {
        const seconds = Math.ceil(wait / 1000);
        const message = `too many wrong passwords: try again in ${seconds} s`;
        return sendError(c, 429, message, [{ path: "password", message }], {
          "retry-after": String(seconds),
        });
      }
      // Counted as wrong before it is hashed: guesses sent at once all pass waitMs before any
      // hash ends, and would otherwise all be hashed before the first failure is recorded.
      limiter.failed(client);
      const id = await auth.login(password);
      if (id === undefined) {
        throw new ApiError(401, "wrong password", [{ path: "password", message: "wrong password" }]);
      }
      limiter.succeeded(client);
      setCookie(c, "floe_session", id, cookie(c));
      const caller = auth.caller(undefined, id)!;
      return send(c, { authRequired: true, authenticated: true, csrfToken: caller.csrf ?? null }, 200);
    })
    .openapi(logout, (c) => {
      auth.logout(sessionCookie(c));
      setCookie(c, "floe_session", "", { ...cookie(c), maxAge: 0 });
      return noContent(c);
    });
}
