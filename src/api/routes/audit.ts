// The audit route: every change to a source, destination or job, newest first.

import type { AppOptions } from "../app-options.ts";
import { jsonOf, route, routes, send } from "../openapi.ts";
import * as S from "../schemas.ts";

const audit = route({
  method: "get",
  path: "/api/audit",
  summary: "Every change to a source, destination or job, newest first",
  tag: "audit",
  responses: { 200: jsonOf(S.auditEntry.array()) },
});

export function auditRoutes({ store }: AppOptions) {
  return routes().openapi(audit, (c) => send(c, store.auditLog(), 200));
}
