// The consumer group route of a job: its members (client id, host, the job's partitions each was
// assigned and their lag), the group's state and its last rebalance, as `floe status` shows them
// for a `cluster:` job. The job's hosts pass the outbound policy first.
import type { AppOptions } from "../app-options.ts";
import { jsonOf, nameParam, notFound, refusedHost, route, routes, send } from "../openapi.ts";
import * as S from "../schemas.ts";
import { checked, inspect } from "./connect.ts";

const group = route({
  method: "get",
  path: "/api/jobs/{name}/group",
  summary: "The job's consumer group: its members with their host, partitions and lag, and the last rebalance",
  tag: "jobs",
  request: { params: nameParam },
  responses: { 200: jsonOf(S.jobGroup), ...notFound("job"), ...refusedHost },
});

export function groupRoutes(options: AppOptions) {
  const { store, policy } = options;
  return routes().openapi(group, async (c) => {
    const job = await checked(policy, store.job(c.req.valid("param").name));
    return send(c, await (await inspect()).group(job), 200);
  });
}
